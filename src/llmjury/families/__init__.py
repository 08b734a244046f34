"""Evaluation families. Each registers its aggregator, report sections and markers on import."""

from __future__ import annotations

import importlib

from llmjury.families.registry import FAMILIES, Family, register

__all__ = ["FAMILIES", "Family", "load", "register"]

FAMILY_MODULES: tuple[str, ...] = ("llmjury.families.socratic", "llmjury.families.arena", "llmjury.families.geval",
                                   "llmjury.families.qa_quality")


def load() -> None:
    """Import every family so its aggregator and markers are known before collection."""
    for module in FAMILY_MODULES:
        importlib.import_module(module)
