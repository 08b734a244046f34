"""Q&A quality grading (seed 001): Slack export → rules → rubric judge → graded corpus."""

from __future__ import annotations

from llmjury.families.qa_quality import offline as _offline  # noqa: F401  (registers offline answers)
from llmjury.families.qa_quality.cases import FAMILY, QACase, QAOptions, markers_for, qa_cases
from llmjury.families.qa_quality.pipeline import course_rules, grade_pair
from llmjury.families.registry import Family, register
from llmjury.settings import Settings, family_options


def _markers(settings: Settings) -> dict[str, str]:
    return markers_for(QAOptions.model_validate(family_options(settings, FAMILY)))


register(Family(FAMILY, report_module="llmjury.families.qa_quality.report", markers_for=_markers))

__all__ = ["FAMILY", "QACase", "QAOptions", "course_rules", "grade_pair", "qa_cases"]
