"""G-Eval for dialogue (seed 004): DSTC9 and Topical-Chat items, auto chain-of-thought,
probability-weighted scores, meta-evaluation against human scores."""

from __future__ import annotations

from llmjury.families.geval import offline as _offline  # noqa: F401  (registers offline answers)
from llmjury.families.geval.cases import FAMILY, GEvalCase, GEvalOptions, geval_cases, markers
from llmjury.families.geval.pipeline import judge_item
from llmjury.families.registry import Family, register

register(Family(FAMILY, report_module="llmjury.families.geval.report", markers=markers()))

__all__ = ["FAMILY", "GEvalCase", "GEvalOptions", "geval_cases", "judge_item"]
