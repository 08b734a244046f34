"""deepeval interop, offline: our provider as its model, its metric as our judge."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("deepeval")

# The bridge goes first: it switches deepeval's telemetry and file writes off before deepeval loads.
from llmjury.judgement.deepeval_bridge import JuryModel, MetricResult, metric_verdict  # noqa: I001
from llmjury.providers.base import ProviderSpec

from deepeval.metrics import BaseMetric, GEval
from deepeval.test_case import LLMTestCase, SingleTurnParams


def geval(model: JuryModel) -> GEval:
    return GEval(
        name="Helpfulness",
        evaluation_steps=["Check the answer addresses the question.", "Penalise vagueness."],
        evaluation_params=[SingleTurnParams.INPUT, SingleTurnParams.ACTUAL_OUTPUT],
        model=model, async_mode=False, threshold=0.5,
    )


def test_geval_scores_through_our_openai_provider(openai_server, make_engine):
    openai_server.reply = lambda body, i: json.dumps({"score": 8, "reason": "Addresses the question."})
    engine = make_engine()
    model = JuryModel(engine, ProviderSpec.parse(f"openai:gpt-4o-mini;base_url={openai_server.base_url}"))
    verdict = metric_verdict(geval(model), LLMTestCase(input="What is 2+2?", actual_output="4"),
                             case_id="q1", family="toy")
    assert verdict.valid and isinstance(verdict.result, MetricResult) and verdict.kind == "metric"
    assert verdict.result.score == pytest.approx(0.8)
    result = verdict.result
    assert (result.success, result.threshold, result.metric) == (True, 0.5, "Helpfulness [GEval]")
    assert verdict.raw == ["Addresses the question."]
    sent = openai_server.requests[0]
    assert sent["response_format"]["type"] == "json_schema"
    assert "What is 2+2?" in sent["messages"][0]["content"]


def test_unparseable_metric_output_becomes_an_unscored_verdict(openai_server, make_engine):
    openai_server.reply = lambda body, i: "no json at all"
    engine = make_engine()
    model = JuryModel(engine, ProviderSpec.parse(f"openai:gpt-4o-mini;base_url={openai_server.base_url}"))
    verdict = metric_verdict(geval(model), LLMTestCase(input="q", actual_output="a"), case_id="q1", family="toy")
    assert not verdict.valid and "GEval failed" in verdict.error
    assert verdict.judge.provider.startswith("deepeval-geval:")


def test_a_family_types_the_metric_verdict_as_its_own_kind(openai_server, make_engine):
    from llmjury.family import Result

    class Helpful(Result):
        score: float
        success: bool
        threshold: float
        metric: str
        method: str = "deepeval"

    openai_server.reply = lambda body, i: json.dumps({"score": 3, "reason": "Vague."})
    model = JuryModel(make_engine(), ProviderSpec.parse(f"openai:gpt-4o-mini;base_url={openai_server.base_url}"))
    verdict = metric_verdict(geval(model), LLMTestCase(input="q", actual_output="a"), case_id="q1", family="toy",
                             kind="helpful", result=Helpful)
    assert verdict.kind == "helpful" and isinstance(verdict.result, Helpful)
    assert (verdict.result.success, verdict.record()["result"]["method"]) == (False, "deepeval")


def test_importing_llmjury_plugin_does_not_import_deepeval():
    code = "import sys, llmjury.plugin; print('deepeval' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


class _NoThreshold(BaseMetric):
    """A metric of one's own that scores but sets no threshold (deepeval's own default is None)."""

    def measure(self, test_case, *args, **kwargs):
        self.score, self.reason = 0.7, "fine"
        return self.score

    async def a_measure(self, test_case, *args, **kwargs):
        return self.measure(test_case)

    def is_successful(self):
        return False


def test_a_metric_without_a_threshold_becomes_an_unscored_verdict_naming_it():
    verdict = metric_verdict(_NoThreshold(), LLMTestCase(input="q", actual_output="a"), case_id="q1", family="toy")
    assert not verdict.valid and "no threshold" in verdict.error
