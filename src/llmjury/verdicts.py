"""A verdict: one judged outcome for one case, as plain data that crosses xdist intact."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, SerializeAsAny

from llmjury.family import Result


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


class Verdict(BaseModel):
    """One judged case. `kind` names the family's verdict kind and `result` holds its parsed
    decision as that kind's typed model; `valid` is False when the judge could not be asked or
    understood (refusal, failed call, unparseable answer), in which case `error` says why, `raw`
    keeps what the judge said and `result` may be None."""

    case_id: str
    family: str
    kind: str = ""
    judge: JudgeConfig
    result: SerializeAsAny[Result] | dict[str, Any] | None = None
    valid: bool = True
    error: str | None = None
    raw: list[str] = Field(default_factory=list)
    attributes: dict[str, Any] = Field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    latency_s: float = 0.0
    cached: bool = False

    def record(self) -> dict[str, Any]:
        """The JSON-safe dict that travels on test reports (execnet takes only builtin types)."""
        return self.model_dump(mode="json")
