"""The Elo arena family (seed 002): questions x models, arranged battles, judged outcomes,
Bradley-Terry and Elo ratings with intervals; MRBench tutors rated by humans and by the judge."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar

from llmjury.families.arena import llmbar, mrbench, pipeline, prd
from llmjury.families.arena.cases import FAMILY as NAME
from llmjury.families.arena.cases import ArenaOptions, BattleCase, arrange
from llmjury.families.arena.offline import ANSWERS
from llmjury.families.arena.pipeline import battle
from llmjury.families.arena.results import ArenaSection, BattleResult
from llmjury.family import Family, Pipeline, Result, Section
from llmjury.providers.offline import Heuristic
from llmjury.verdicts import Verdict


class Arena(Family):
    name = NAME
    options = ArenaOptions
    results: ClassVar[Mapping[str, type[Result]]] = MappingProxyType({"": BattleResult})
    section = ArenaSection
    headline = ('rating',)

    def pipelines(self) -> Mapping[str, Pipeline]:
        return {
            "battle": pipeline.battle,
            "judge_tutors": mrbench.judge_tutors,
            "human_battles": mrbench.human_battles,
            "llmbar_replay": llmbar.replay,
            "prd_replay": prd.replay,
        }

    def offline(self) -> Mapping[str, Heuristic]:
        return ANSWERS

    def aggregate(self, verdicts: Sequence[Verdict]) -> Section:
        from llmjury.families.arena import report

        return ArenaSection.model_validate(report.aggregate([v.record() for v in verdicts]))

    def markdown(self, section: Section) -> str:
        from llmjury.families.arena import report

        return report.markdown(section.model_dump(mode="json"))

    def files(self, section: Section, verdicts: Sequence[Verdict]) -> dict[str, str]:
        from llmjury.families.arena import report

        return report.files(section.model_dump(mode="json"), [v.record() for v in verdicts])

    @property
    def hidden_from_tables(self) -> tuple[str, ...]:  # type: ignore[override]
        from llmjury.families.arena import report

        return tuple(report.HIDDEN_FROM_TABLES)


FAMILY = Arena()

__all__ = ["FAMILY", "NAME", "ArenaOptions", "BattleCase", "arrange", "battle"]
