"""Q&A quality grading (seed 001): Slack export → rules → rubric judge → graded corpus."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar

from llmjury.families.qa_quality import pipeline
from llmjury.families.qa_quality.cases import FAMILY as NAME
from llmjury.families.qa_quality.cases import QACase, QAOptions, qa_cases
from llmjury.families.qa_quality.offline import ANSWERS
from llmjury.families.qa_quality.pipeline import course_rules, grade_pair
from llmjury.families.qa_quality.results import GradeResult, QASection
from llmjury.family import Family, Pipeline, Result, Section
from llmjury.providers.offline import Heuristic
from llmjury.verdicts import Verdict


class QAQuality(Family):
    name = NAME
    options = QAOptions
    results: ClassVar[Mapping[str, type[Result]]] = MappingProxyType({"": GradeResult})
    section = QASection
    headline = ('remove_rate',)

    def pipelines(self) -> Mapping[str, Pipeline]:
        return {
            "grade_pair": pipeline.grade_pair,
            "course_rules": pipeline.course_rules,
        }

    def offline(self) -> Mapping[str, Heuristic]:
        return ANSWERS

    def aggregate(self, verdicts: Sequence[Verdict]) -> Section:
        from llmjury.families.qa_quality import report

        return QASection.model_validate(report.aggregate([v.record() for v in verdicts]))

    def markdown(self, section: Section) -> str:
        from llmjury.families.qa_quality import report

        return report.markdown(section.model_dump(mode="json"))

    def files(self, section: Section, verdicts: Sequence[Verdict]) -> dict[str, str]:
        from llmjury.families.qa_quality import report

        return report.files(section.model_dump(mode="json"), [v.record() for v in verdicts])

    @property
    def hidden_from_tables(self) -> tuple[str, ...]:  # type: ignore[override]
        from llmjury.families.qa_quality import report

        return tuple(report.HIDDEN_FROM_TABLES)


FAMILY = QAQuality()

__all__ = ["FAMILY", "NAME", "QACase", "QAOptions", "course_rules", "grade_pair", "qa_cases"]
