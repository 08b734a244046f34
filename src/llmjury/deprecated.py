"""Public names kept for one minor version after they were replaced: each still works and warns
(DeprecationWarning) naming its replacement and the version that removes it, so an upgrade never
breaks a family written to the previous documentation without a word. CHANGELOG.md lists them.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from llmjury.family import Family, FamilyOptions
from llmjury.session.case_sets import parsed_options


def deprecated(name: str, since: str, removed_in: str, instead: str) -> None:
    """Warn once per call site that `name` goes in `removed_in`, and what to use instead."""
    warnings.warn(f"{name} is deprecated since llmjury {since} and will be removed in {removed_in}: "
                  f"use {instead}", DeprecationWarning, stacklevel=3)


def options_of(config: pytest.Config, family: Family[Any, Any]) -> FamilyOptions:
    """A family's options as parsed at start-up, for a `pytest_generate_tests` hook (llmjury 0.1's
    `llmjury.plugin.options_of`); now `llmjury.parsed_options(config, family)`."""
    deprecated("llmjury.plugin.options_of", "0.2.0", "0.3.0", "llmjury.parsed_options(config, family)")
    options: FamilyOptions = parsed_options(config, family)
    return options
