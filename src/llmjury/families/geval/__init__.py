"""G-Eval for dialogue (seed 004): DSTC9 and Topical-Chat items, auto chain-of-thought,
probability-weighted scores, meta-evaluation against human scores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar

from llmjury.families.geval import pipeline
from llmjury.families.geval.cases import FAMILY as NAME
from llmjury.families.geval.cases import GEvalCase, GEvalOptions, geval_cases
from llmjury.families.geval.offline import ANSWERS
from llmjury.families.geval.pipeline import judge_item
from llmjury.families.geval.results import GEvalSection, ScoreResult
from llmjury.family import Family, Pipeline, Result, Section
from llmjury.providers.offline import Heuristic
from llmjury.verdicts import Verdict


class GEval(Family):
    name = NAME
    options = GEvalOptions
    results: ClassVar[Mapping[str, type[Result]]] = MappingProxyType({"": ScoreResult})
    section = GEvalSection
    headline = ('meta',)

    def pipelines(self) -> Mapping[str, Pipeline]:
        return {
            "judge_item": pipeline.judge_item,
        }

    def offline(self) -> Mapping[str, Heuristic]:
        return ANSWERS

    def aggregate(self, verdicts: Sequence[Verdict]) -> Section:
        from llmjury.families.geval import report

        return GEvalSection.model_validate(report.aggregate([v.record() for v in verdicts]))

    def markdown(self, section: Section) -> str:
        from llmjury.families.geval import report

        return report.markdown(section.model_dump(mode="json"))

    def files(self, section: Section, verdicts: Sequence[Verdict]) -> dict[str, str]:
        from llmjury.families.geval import report

        return report.files(section.model_dump(mode="json"), [v.record() for v in verdicts])

    @property
    def hidden_from_tables(self) -> tuple[str, ...]:  # type: ignore[override]
        from llmjury.families.geval import report

        return tuple(report.HIDDEN_FROM_TABLES)


FAMILY = GEval()

__all__ = ["FAMILY", "NAME", "GEvalCase", "GEvalOptions", "geval_cases", "judge_item"]
