"""Q&A cases: one filtered pair per test, plus one rules case per course (what the filters removed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from llmjury.cases import Case, slug
from llmjury.families.qa_quality.export import load_export
from llmjury.family import FamilyOptions

FAMILY = "qa_quality"


class QAOptions(FamilyOptions):
    """`--llm-option qa_quality.KEY=VALUE`; defaults are seed 001's BatchConfig where it has one."""

    export: str | None = None  # a folder of course folders of Slack JSON; the shipped sample otherwise
    on_remove: Literal["fail", "xfail"] = "fail"  # what a pair graded `remove` does to its test
    max_retries: int = Field(3, ge=1)  # judge attempts for invalid structured output (seed: max_retries)
    output_tokens: int = 150  # expected output tokens a pair, for the dry-run estimate (seed 8.2)
    semeval: str | None = None  # SemEval-2016 subtask A pairs (JSONL); the shipped 300-pair sample otherwise


class QACase(Case):
    family: str = FAMILY
    course: str
    source_file: str
    generation: str
    date: str
    pair: dict[str, Any]

    def marks(self) -> list[str]:
        return [FAMILY, f"course_{slug(self.course)}"] + ([f"generation_{slug(self.generation)}"]
                                                            if self.generation else [])


class CourseRules(Case):
    """A course's filtering: counts per rule and the token saving of the evaluation input."""

    family: str = FAMILY
    course: str
    removed: dict[str, int]
    removed_answers: dict[str, int]
    kept: int

    def marks(self) -> list[str]:
        return [FAMILY, f"course_{slug(self.course)}"]


def qa_cases(options: QAOptions) -> tuple[list[QACase], list[CourseRules]]:
    export = load_export(Path(options.export) if options.export else None)
    pairs, rules = [], []
    for course, filtered in export.items():
        rules.append(CourseRules(id=f"rules-{slug(course)}", course=course, removed=dict(filtered.removed),
                                 removed_answers=dict(filtered.removed_answers), kept=len(filtered.pairs)))
        for pair in filtered.pairs:
            pairs.append(QACase(id=f"qa-{slug(course)}-g{slug(pair.generation)}-{slug(pair.id)}", course=course,
                                source_file=pair.source_file, generation=pair.generation, date=pair.date,
                                pair=pair.raw()))
    return pairs, rules


def markers_for(options: QAOptions) -> dict[str, str]:
    """Course and generation markers of the configured export (registered at start-up)."""
    names: dict[str, str] = {}
    try:
        pairs, _ = qa_cases(options)
    except Exception:  # a broken export is reported when its cases are collected, not here
        return names
    for case in pairs:
        for mark in case.marks()[1:]:
            names[mark] = f"Q&A pairs of {mark.replace('_', ' ')}"
    names["semeval"] = "SemEval-2016 community answers with human quality labels"
    return names
