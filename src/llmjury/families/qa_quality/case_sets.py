"""The Q&A quality family's case sets: the pairs to grade, the pairs people labelled, and one rules
case per course, all from one load of this run's files per process."""

from __future__ import annotations

from collections.abc import Mapping

from llmjury.cases import Case
from llmjury.families.qa_quality import pipeline
from llmjury.families.qa_quality.cases import CourseRules, QACase
from llmjury.families.qa_quality.datasets import DATASETS, load
from llmjury.families.qa_quality.options import QAOptions
from llmjury.family import CaseLoad, CaseSet
from llmjury.running.settings import Settings


def everything(options: QAOptions, settings: Settings) -> CaseLoad:
    """Every case of the run's Q&A data (each dataset's file: the option's, else the shipped copy)."""
    paths = {d.name: path for d in DATASETS if (path := d.path(options, settings)) is not None}
    data = load(paths, options)
    return [*data.pairs, *data.labelled, *data.rules], data.loaded


def unlabelled(case: Case) -> bool:
    """A corpus pair, to keep or drop."""
    return isinstance(case, QACase) and case.label is None


def labelled(case: Case) -> bool:
    """A pair people labelled, which measures the grader."""
    return isinstance(case, QACase) and case.label is not None


def rules(case: Case) -> bool:
    """A course's rules case: what the filters removed."""
    return isinstance(case, CourseRules)


def case_sets() -> Mapping[str, CaseSet[QAOptions]]:
    """The family's case sets, by the name its eval tests give."""
    return {"pairs": CaseSet(everything, pipeline.grade_pair, unlabelled),
            "labelled": CaseSet(everything, pipeline.grade_pair, labelled),
            "course_rules": CaseSet(everything, pipeline.course_rules, rules)}
