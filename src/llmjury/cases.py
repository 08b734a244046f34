"""Cases: the unit a family judges, and how they become parametrized pytest tests."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

_UNSAFE = re.compile(r"[^A-Za-z0-9_.:+-]+")


class Case(BaseModel):
    """Base for every family's case: a stable readable id and the markers that select it."""

    model_config = ConfigDict(frozen=True)
    id: str
    family: str

    def marks(self) -> list[str]:
        """Marker names for `-m` (always the family; families add dataset, subject, ...)."""
        return [self.family]


def slug(text: Any) -> str:
    """A fragment safe for test ids and marker names: `Operating Systems` → `operating_systems`."""
    return _UNSAFE.sub("_", str(text).strip().lower()).strip("_") or "x"


def parametrize(cases: Iterable[Case]) -> pytest.MarkDecorator:
    """`pytest.mark.parametrize` over cases, with their ids and markers applied."""
    # Indirect through the plugin's `case` fixture, so a test may ask only for `outcome`.
    return pytest.mark.parametrize("case", case_params(cases), indirect=["case"])


def generate(metafunc: pytest.Metafunc, cases: Iterable[Case]) -> None:
    """The same, from a `pytest_generate_tests` hook, for cases that depend on options."""
    metafunc.parametrize("case", case_params(cases), indirect=["case"])


def case_params(cases: Iterable[Case]) -> list[Any]:
    params: list[Any] = []
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise ValueError(f"duplicate case id {case.id!r}: case ids must be unique within a test")
        seen.add(case.id)
        marks: Sequence[pytest.MarkDecorator] = [getattr(pytest.mark, name) for name in case.marks()]
        params.append(pytest.param(case, id=case.id, marks=marks))
    return params
