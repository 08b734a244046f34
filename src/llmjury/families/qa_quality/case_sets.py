"""The Q&A quality family's case sets: the pairs to grade, the pairs people labelled, and one rules
case per course, all from one load of this run's files (a few milliseconds, so each set reads them)."""

from __future__ import annotations

from collections.abc import Mapping

from llmjury.families.qa_quality import pipeline
from llmjury.families.qa_quality.datasets import DATASETS, QAData, load
from llmjury.families.qa_quality.options import QAOptions
from llmjury.family import CaseLoad, CaseSet
from llmjury.settings import Settings


def data(options: QAOptions, settings: Settings) -> QAData:
    """The run's Q&A data: every dataset's file (the option's, else the shipped copy)."""
    paths = {d.name: path for d in DATASETS if (path := d.path(options, settings)) is not None}
    return load(paths, options)


def pairs(options: QAOptions, settings: Settings) -> CaseLoad:
    """Every filtered pair, to keep or drop."""
    loaded = data(options, settings)
    return loaded.pairs, loaded.loaded


def labelled(options: QAOptions, settings: Settings) -> CaseLoad:
    """Pairs people labelled, which measure the grader."""
    loaded = data(options, settings)
    return loaded.labelled, loaded.loaded


def rules(options: QAOptions, settings: Settings) -> CaseLoad:
    """One case per course: what the filters removed."""
    loaded = data(options, settings)
    return loaded.rules, loaded.loaded


def case_sets() -> Mapping[str, CaseSet[QAOptions]]:
    """The family's case sets, by the name its eval tests give."""
    return {"pairs": CaseSet(pairs, pipeline.grade_pair), "labelled": CaseSet(labelled, pipeline.grade_pair),
            "course_rules": CaseSet(rules, pipeline.course_rules)}
