"""The geval family's typed verdict results and aggregate section."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict

from llmjury.family import Result, Section


class ScoreResult(Result):
    model_config = ConfigDict(extra="allow", frozen=True)


class GEvalSection(Section):
    model_config = ConfigDict(extra="allow")
    meta: dict[str, Any] | None = None
