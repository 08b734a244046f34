"""The Socratic tutor family (seeds 000 and 003): our tutor against a plainly prompted teacher,
judged pairwise on dialogue subsets, with a robust k-run majority; and the same judge measured
against human preferences on MRBench."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar

from llmjury.families.socratic import pipeline
from llmjury.families.socratic.cases import FAMILY as NAME
from llmjury.families.socratic.cases import SocraticOptions, SubsetCase, simulated_cases
from llmjury.families.socratic.offline import ANSWERS
from llmjury.families.socratic.pipeline import compare
from llmjury.families.socratic.results import PairwiseDecision, SocraticSection
from llmjury.family import Family, Pipeline, Result, Section
from llmjury.providers.offline import Heuristic
from llmjury.verdicts import Verdict


class Socratic(Family):
    name = NAME
    options = SocraticOptions
    results: ClassVar[Mapping[str, type[Result]]] = MappingProxyType({"": PairwiseDecision})
    section = SocraticSection
    headline = ('win_rate',)

    def pipelines(self) -> Mapping[str, Pipeline]:
        return {
            "compare": pipeline.compare,
            "compare_real": pipeline.compare_real,
            "judge_tutor_pair": pipeline.judge_tutor_pair,
        }

    def offline(self) -> Mapping[str, Heuristic]:
        return ANSWERS

    def aggregate(self, verdicts: Sequence[Verdict]) -> Section:
        from llmjury.families.socratic import report

        return SocraticSection.model_validate(report.aggregate([v.record() for v in verdicts]))

    def markdown(self, section: Section) -> str:
        from llmjury.families.socratic import report

        return report.markdown(section.model_dump(mode="json"))

    def files(self, section: Section, verdicts: Sequence[Verdict]) -> dict[str, str]:
        from llmjury.families.socratic import report

        return report.files(section.model_dump(mode="json"), [v.record() for v in verdicts])

    @property
    def hidden_from_tables(self) -> tuple[str, ...]:  # type: ignore[override]
        from llmjury.families.socratic import report

        return tuple(report.HIDDEN_FROM_TABLES)


FAMILY = Socratic()

__all__ = ["FAMILY", "NAME", "SocraticOptions", "SubsetCase", "compare", "simulated_cases"]
