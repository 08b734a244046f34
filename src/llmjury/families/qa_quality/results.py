"""The qa_quality family's typed verdict results and aggregate section."""

from __future__ import annotations

from pydantic import ConfigDict

from llmjury.family import Metric, Result, Section


class GradeResult(Result):
    model_config = ConfigDict(extra="allow", frozen=True)


class QASection(Section):
    model_config = ConfigDict(extra="allow")
    remove_rate: Metric | None = None
