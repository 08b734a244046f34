"""G-Eval for dialogue (seed 004): rated dialogue items (DSTC9, Topical-Chat, yours), auto
chain-of-thought, probability-weighted scores, meta-evaluation against human scores and the human
ceiling on the same items."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import ClassVar

from llmjury.cases import RECORDED_MARKERS
from llmjury.families.geval.cases import TASK_MARKS
from llmjury.families.geval.criteria import CRITERIA
from llmjury.families.geval.datasets import DATASETS
from llmjury.families.geval.datasets import FAMILY as NAME
from llmjury.families.geval.offline import ANSWERS
from llmjury.families.geval.options import GEvalOptions
from llmjury.families.geval.results import DeepevalResult, GEvalSection, ScoreResult
from llmjury.family import CaseSet, Family, FamilyOptions, Replayed
from llmjury.intervals import IntervalKind
from llmjury.judgement.verdicts import Verdict
from llmjury.model import Result
from llmjury.providers.offline import Heuristic


class GEval(Family[GEvalOptions, GEvalSection]):
    name = NAME
    options = GEvalOptions
    results: ClassVar[Mapping[str, type[Result]]] = MappingProxyType(
        {"judge": ScoreResult, "recorded": ScoreResult, "annotator": ScoreResult, "deepeval": DeepevalResult})
    section = GEvalSection
    roles: ClassVar[Mapping[str, str]] = MappingProxyType({"judge": "the judge (--llm-judge)"})
    headline = ("judge_validity",)
    interval_kinds: ClassVar[Mapping[str, IntervalKind]] = {"judge_validity": "correlation", "meta": "correlation"}
    datasets = DATASETS
    markers: ClassVar[Mapping[str, str]] = MappingProxyType({
        **RECORDED_MARKERS,
        "deepeval": "G-Eval cases also scored by deepeval's GEval (when deepeval is installed)",
        **{mark: f"G-Eval cases rating a {task}" for task, mark in TASK_MARKS.items()},
        **{f"criterion_{name}": f"G-Eval cases judging {name}" for name in CRITERIA},
    })
    hidden_from_tables = ("meta", "human_ceiling", "judge_validity")

    def case_sets(self) -> Mapping[str, CaseSet[GEvalOptions]]:
        from llmjury.families.geval import case_sets

        return case_sets.case_sets()

    def offline(self) -> Mapping[str, Heuristic]:
        return ANSWERS

    def aggregate(self, verdicts: Sequence[Verdict]) -> GEvalSection:
        from llmjury.families.geval import report

        return report.aggregate(verdicts)

    def markdown(self, section: GEvalSection) -> str:
        from llmjury.families.geval import report

        return report.markdown(section)

    def files(self, section: GEvalSection, verdicts: Sequence[Verdict]) -> dict[str, str]:
        from llmjury.families.geval import report

        return report.files(verdicts)

    def replay(self, path: Path, options: FamilyOptions) -> Replayed:
        from llmjury.families.geval import replay

        return Replayed(replay.read(path, GEvalOptions.model_validate(options.model_dump()), self.typed))


FAMILY = GEval()

__all__ = ["FAMILY", "NAME", "GEval"]
