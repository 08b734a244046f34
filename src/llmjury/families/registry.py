"""The light half of a family: its name, markers and where its report code lives.

Report code (scipy, pandas) is imported only when a run has verdicts to aggregate, so loading
the plugin costs every pytest session next to nothing.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any


@dataclass(frozen=True)
class Family:
    """`report_module` defines `aggregate(records) -> dict` and optionally
    `markdown(section) -> str` and `files(section, records) -> dict[filename, text]`."""

    name: str
    report_module: str | None = None
    markers: dict[str, str] = field(default_factory=dict)
    #: Markers that depend on the configured data (course names, say): settings -> {name: description}.
    markers_for: Callable[[Any], dict[str, str]] | None = None

    def report(self) -> ModuleType | None:
        return importlib.import_module(self.report_module) if self.report_module else None


FAMILIES: dict[str, Family] = {}


def register(family: Family) -> Family:
    FAMILIES[family.name] = family
    return family
