"""The Socratic tutor family (seeds 000 and 003): our tutor against a plainly prompted teacher,
judged pairwise on dialogue subsets, with a robust k-run majority; and the same judge measured
against human preferences on MRBench."""

from __future__ import annotations

from llmjury.families.registry import Family, register
from llmjury.families.socratic import offline as _offline  # noqa: F401  (registers offline answers)
from llmjury.families.socratic.cases import FAMILY, SocraticOptions, SubsetCase, markers, simulated_cases
from llmjury.families.socratic.pipeline import compare

register(Family(FAMILY, report_module="llmjury.families.socratic.report", markers=markers()))

__all__ = ["FAMILY", "SocraticOptions", "SubsetCase", "compare", "simulated_cases"]
