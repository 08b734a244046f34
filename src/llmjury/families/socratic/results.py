"""The socratic family's typed verdict results and aggregate section."""

from __future__ import annotations

from pydantic import ConfigDict

from llmjury.family import Metric, Result, Section


class PairwiseDecision(Result):
    model_config = ConfigDict(extra="allow", frozen=True)


class SocraticSection(Section):
    model_config = ConfigDict(extra="allow")
    win_rate: Metric | None = None
