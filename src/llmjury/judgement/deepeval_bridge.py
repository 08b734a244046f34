"""deepeval in both directions: our providers as deepeval models, deepeval metrics as our judges.

Importing this module is the only way llmjury touches deepeval, and it first switches off
deepeval's telemetry, `.env` loading and file writes (its environment switches), so a run
makes no network attempt. The plugin never imports it at start-up.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any, Protocol

for _variable, _value in (("DEEPEVAL_TELEMETRY_OPT_OUT", "1"), ("DEEPEVAL_DISABLE_DOTENV", "1"),
                          ("DEEPEVAL_FILE_SYSTEM", "READ_ONLY"), ("ERROR_REPORTING", "0")):
    os.environ.setdefault(_variable, _value)

from deepeval.metrics import BaseMetric  # noqa: E402
from deepeval.models import DeepEvalBaseLLM  # noqa: E402
from deepeval.test_case import LLMTestCase  # noqa: E402
from pydantic import BaseModel  # noqa: E402

from llmjury.chat import ChatRequest, Message  # noqa: E402
from llmjury.judgement.verdicts import JudgeConfig, Verdict  # noqa: E402
from llmjury.model import Result  # noqa: E402
from llmjury.providers.base import ProviderSpec  # noqa: E402
from llmjury.reading.verdict_json import DuplicateKeyError, strict_json  # noqa: E402
from llmjury.running.engine import Engine  # noqa: E402


class MetricResult(Result):
    """A deepeval metric's outcome: its score (0-1 for its LLM metrics), pass decision and threshold."""

    score: float
    success: bool
    threshold: float
    metric: str


class MetricResultModel(Protocol):
    """A result model built from MetricResult's fields: MetricResult itself, or a family's own (geval's)."""

    def __call__(self, *, score: float, success: bool, threshold: float, metric: str) -> Result: ...


class JuryModel(DeepEvalBaseLLM):
    """An llmjury provider, with its cache, limits and retries, usable wherever deepeval takes a model."""

    def __init__(self, engine: Engine, spec: ProviderSpec) -> None:
        self.engine = engine
        self.spec = spec
        super().__init__(model=str(spec))

    def load_model(self) -> JuryModel:
        return self

    def get_model_name(self) -> str:
        return str(self.spec)

    def _request(self, prompt: str, schema: type[BaseModel] | None) -> ChatRequest:
        return ChatRequest(
            messages=(Message(role="user", content=prompt),),
            json_schema=schema.model_json_schema() if schema is not None else None,
            schema_name=schema.__name__ if schema is not None else None,
            task="deepeval",
        )

    async def _generate(self, prompt: str, schema: type[BaseModel] | None) -> str | BaseModel:
        completion = await self.engine.complete(self.spec, self._request(prompt, schema))
        if schema is None:
            return completion.text
        _refuse_duplicate_keys(completion.text)
        return schema.model_validate_json(completion.text)

    # deepeval types both as (*args, **kwargs) -> str, yet calls them with a schema and reads the model returned.
    def generate(self, prompt: str, schema: type[BaseModel] | None = None  # type: ignore[override]
                 ) -> str | BaseModel:
        return self.engine.run(self._generate(prompt, schema))

    async def a_generate(self, prompt: str, schema: type[BaseModel] | None = None  # type: ignore[override]
                         ) -> str | BaseModel:
        if asyncio.get_running_loop() is self.engine._loop:
            return await self._generate(prompt, schema)
        return await asyncio.wrap_future(self.engine.submit(self._generate(prompt, schema)))

    def supports_structured_outputs(self) -> bool:
        return True


def metric_verdict(metric: BaseMetric, test_case: LLMTestCase, *, case_id: str, family: str,
                   attributes: dict[str, Any] | None = None, kind: str = "metric",
                   result: MetricResultModel = MetricResult) -> Verdict:
    """Measure `test_case` with a deepeval metric and record the outcome as our verdict of `kind`,
    its result typed as `result` (a family's own model taking MetricResult's fields, if it has one).

    `measure()` is called directly (not `assert_test`, which re-creates the metric and leaves the
    object you passed without a score). A metric that raises becomes an unscored verdict.
    """
    started = time.perf_counter()
    try:
        metric.measure(test_case)
    except Exception as exc:  # deepeval raises plain exceptions for unparseable judge output
        return _failed(metric, exc, case_id, family, kind, attributes, started)
    return _measured(metric, case_id, family, kind, result, attributes, started)


async def a_metric_verdict(metric: BaseMetric, test_case: LLMTestCase, *, case_id: str, family: str,
                           attributes: dict[str, Any] | None = None, kind: str = "metric",
                           result: MetricResultModel = MetricResult) -> Verdict:
    """`metric_verdict` for pipelines: `a_measure()` on the engine loop, so it plans concurrently."""
    started = time.perf_counter()
    try:
        await metric.a_measure(test_case, _show_indicator=False)
    except Exception as exc:  # deepeval raises plain exceptions for unparseable judge output
        return _failed(metric, exc, case_id, family, kind, attributes, started)
    return _measured(metric, case_id, family, kind, result, attributes, started)


def _class_name(metric: BaseMetric) -> str:
    """The metric's class name (`GEval`); str() because BaseMetric declares an instance property `__name__`."""
    return str(type(metric).__name__)


def _judge(metric: BaseMetric) -> JudgeConfig:
    model = getattr(metric, "model", None)
    name = model.get_model_name() if model is not None else str(getattr(metric, "evaluation_model", "deepeval"))
    return JudgeConfig(provider=f"deepeval-{_class_name(metric).lower()}:{name}",
                       prompt=f"deepeval:{type(metric).__name__}", parser="deepeval")


def _failed(metric: BaseMetric, exc: Exception, case_id: str, family: str, kind: str,
            attributes: dict[str, Any] | None, started: float) -> Verdict:
    return Verdict(case_id=case_id, family=family, kind=kind, judge=_judge(metric), valid=False,
                   error=f"unparseable: deepeval {type(metric).__name__} failed: {exc}", attributes=attributes or {},
                   latency_s=time.perf_counter() - started)


def _measured(metric: BaseMetric, case_id: str, family: str, kind: str, result: MetricResultModel,
              attributes: dict[str, Any] | None, started: float) -> Verdict:
    score, threshold = metric.score, metric.threshold
    if score is None or threshold is None:  # a metric of one's own may leave either unset: unscored, not a crash
        missing = "no score" if score is None else "no threshold (give the metric one: threshold=...)"
        return _failed(metric, ValueError(f"it measured {missing}"), case_id, family, kind, attributes, started)
    measured = result(score=score, success=bool(metric.success), threshold=threshold,
                      metric=str(getattr(metric, "__name__", _class_name(metric))))
    return Verdict(case_id=case_id, family=family, kind=kind, judge=_judge(metric), result=measured,
                   raw=[metric.reason or ""], attributes=attributes or {}, latency_s=time.perf_counter() - started)


def _refuse_duplicate_keys(text: str) -> None:
    """A structured answer naming a key twice is refused (DuplicateKeyError, a ValueError), never
    read by its last value; malformed JSON is left to the schema's validation to name."""
    try:
        strict_json(text)
    except ValueError as exc:
        if isinstance(exc, DuplicateKeyError):
            raise
