"""The arena family's typed verdict results and aggregate section."""

from __future__ import annotations

from pydantic import ConfigDict

from llmjury.family import Metric, Result, Section


class BattleResult(Result):
    model_config = ConfigDict(extra="allow", frozen=True)


class ArenaSection(Section):
    model_config = ConfigDict(extra="allow")
    rating: dict[str, Metric] | None = None
