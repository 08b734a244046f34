"""Q&A cases: one pair per test (a Slack thread, a SemEval comment or a row of your file), plus one
rules case per Slack course (what the filters removed)."""

from __future__ import annotations

from typing import Any

from llmjury.cases import Case, slug

FAMILY = "qa_quality"


class QACase(Case):
    """One question with its answers, in seed 001's thread shape (`pair`), from dataset `dataset`.

    `label` is a person's judgement of the pair when the data has one (SemEval's Good /
    PotentiallyUseful / Bad, or a grade): such pairs measure the grader rather than the corpus."""

    family: str = FAMILY
    dataset: str
    course: str = ""
    source_file: str
    generation: str = ""
    date: str = ""
    pair: dict[str, Any]
    label: str | None = None

    def marks(self) -> list[str]:
        marks = [FAMILY, f"qa_{slug(self.dataset)}"]
        marks += [f"course_{slug(self.course)}"] if self.course else []
        return marks + ([f"generation_{slug(self.generation)}"] if self.generation else [])


class CourseRules(Case):
    """A course's filtering: counts per rule and the token saving of the evaluation input."""

    family: str = FAMILY
    dataset: str
    course: str
    removed: dict[str, int]
    removed_answers: dict[str, int]
    kept: int

    def marks(self) -> list[str]:
        return [FAMILY, f"qa_{slug(self.dataset)}", f"course_{slug(self.course)}"]
