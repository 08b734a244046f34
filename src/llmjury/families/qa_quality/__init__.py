"""Q&A quality grading (seed 001): Q&A pairs (a Slack export, SemEval's labelled answers or your own
file) → rules → rubric judge → graded corpus, and the judge against people's labels."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import ClassVar

from llmjury.families.qa_quality.cases import FAMILY as NAME
from llmjury.families.qa_quality.datasets import DATASETS
from llmjury.families.qa_quality.offline import ANSWERS
from llmjury.families.qa_quality.options import QAOptions
from llmjury.families.qa_quality.results import GradeResult, LabelledGrade, QASection, RulesResult
from llmjury.family import CaseSet, Command, Dataset, Family, FamilyOptions, Replayed
from llmjury.intervals import IntervalKind
from llmjury.judgement.verdicts import Verdict
from llmjury.model import Result
from llmjury.providers.offline import Heuristic


class QAQuality(Family[QAOptions, QASection]):
    name = NAME
    options = QAOptions
    results: ClassVar[Mapping[str, type[Result]]] = MappingProxyType(
        {"grade": GradeResult, "human_label": LabelledGrade, "rules": RulesResult})
    section = QASection
    roles: ClassVar[Mapping[str, str]] = MappingProxyType({"judge": "the judge (--llm-judge)"})
    headline = ("remove_rate",)
    interval_kinds: ClassVar[Mapping[str, IntervalKind]] = {"remove_rate": "proportion"}
    datasets: ClassVar[tuple[Dataset, ...]] = DATASETS
    hidden_from_tables: ClassVar[tuple[str, ...]] = ("courses", "datasets", "grade_by_label")

    def case_sets(self) -> Mapping[str, CaseSet[QAOptions]]:
        from llmjury.families.qa_quality import case_sets

        return case_sets.case_sets()

    def offline(self) -> Mapping[str, Heuristic]:
        return ANSWERS

    def aggregate(self, verdicts: Sequence[Verdict]) -> QASection:
        from llmjury.families.qa_quality import report

        return report.aggregate(verdicts)

    def markdown(self, section: QASection) -> str:
        from llmjury.families.qa_quality import report

        return report.markdown(section)

    def files(self, section: QASection, verdicts: Sequence[Verdict]) -> dict[str, str]:
        from llmjury.families.qa_quality import report

        return report.files(section, verdicts)

    def replay(self, path: Path, options: FamilyOptions) -> Replayed:
        """Seed 001's section 9 files (a graded course, its removed pairs) as grade verdicts."""
        from llmjury.families.qa_quality.replay import replay

        if not isinstance(options, QAOptions):
            raise TypeError(f"qa_quality: expected QAOptions, got {type(options).__name__}")
        return Replayed(replay(path, options))

    def commands(self) -> Sequence[Command]:
        from llmjury.families.qa_quality.commands import COMMANDS

        return COMMANDS


FAMILY = QAQuality()
