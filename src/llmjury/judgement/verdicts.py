"""A verdict: one judged outcome for one case, as plain data that crosses xdist intact."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, field_validator

from llmjury.errors import UnscoredCause
from llmjury.model import Result


class JudgeConfig(BaseModel):
    """Everything needed to reproduce a judgement: which model, which prompt, how sampled."""

    provider: str
    prompt: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    n: int = 1
    runs: int = 1
    parser: str = ""
    scoring: str = ""
    #: The fingerprint of the criteria, rubric or evaluation steps a judge call of a test was given
    #: (`llmjury.fingerprints`): a reworded rubric is another judge, not the same one.
    criteria: str = ""


#: The "judge" of a verdict that records a test's own assertions (llmjury.session.item_outcomes): no model.
ASSERTIONS = "pytest:assert"
#: The family a test's judge calls record under when the run defines no other (see `llmjury.custom`).
CUSTOM = "custom"


class UntypedResult(Result):
    """The result of a verdict whose family this run does not define, kept as it was recorded: its
    fields ride along and nothing checks them. Only `Verdict.foreign` makes one."""

    model_config = ConfigDict(extra="allow", frozen=True)


class Verdict(BaseModel):
    """One judged case. `kind` names the family's verdict kind and `result` holds its parsed
    decision as that kind's typed model; `valid` is False when the judge could not be asked or
    understood (refusal, failed call, unparseable answer), in which case `error` says why, `raw`
    keeps what the judge said and `result` may be None.

    A recorded verdict (a plain dict) becomes a Verdict through its family (`Family.typed`), or,
    for a family the run does not define, through `Verdict.foreign`; a plain dict as `result`
    is refused, so no untyped result reaches a family's aggregation."""

    case_id: str
    family: str
    kind: str = ""
    judge: JudgeConfig
    result: SerializeAsAny[Result] | None = None
    valid: bool = True
    error: str | None = None
    raw: list[str] = Field(default_factory=list)
    attributes: dict[str, Any] = Field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    latency_s: float = 0.0
    cached: bool = False
    #: How many of its judge runs were decided by a repair call (the judge asked for its decision
    #: alone after an ambiguous answer), so a report can tell repaired verdicts from direct ones.
    repaired: int = 0
    #: How many of its runs had their decision read from a schema field (`schema`) or as text (`text`).
    read: dict[str, int] = Field(default_factory=dict)
    #: How many of its runs a repair call was asked to decide and could not (they stay unscored).
    repair_failed: int = 0
    #: Why an unscored verdict holds no decision, as its judge runs were read: no decision stated,
    #: ambiguous, out of scale, truncated, filtered, refused, failed or empty (None: scored, or recorded
    #: without it; reports then class its error, `llmjury.results.causes`).
    cause: UnscoredCause | None = None

    @field_validator("result", mode="before")
    @classmethod
    def _typed_result(cls, value: object) -> object:
        if isinstance(value, Mapping):
            raise ValueError("a verdict's result is its kind's typed model (a llmjury.family.Result subclass), "
                             "not a dict; read a recorded verdict with its family's `typed`, or "
                             "`Verdict.foreign` when the run does not define its family")
        return value

    @classmethod
    def foreign(cls, record: Mapping[str, Any]) -> Verdict:
        """A recorded verdict of a family this run does not define (handed over by another worker
        for a pipeline of the user's own): its result kept as recorded, as an `UntypedResult`."""
        raw = record.get("result")
        result = None if raw is None else UntypedResult.model_validate(raw)
        return cls.model_validate({**record, "result": None}).model_copy(update={"result": result})

    def record(self) -> dict[str, Any]:
        """The JSON-safe dict that travels on test reports (execnet takes only builtin types)."""
        return self.model_dump(mode="json")
