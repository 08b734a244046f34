"""Cases: the unit a family judges, and how they become parametrized pytest tests."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from llmjury.loading import Loaded, LoadReport

if TYPE_CHECKING:  # pytest is imported where a test is parametrized, not by `import llmjury.cases`
    import pytest

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


CASES_MARK = "llmjury_cases"
#: The marker holding the coroutine that turns a test's case into its `outcome`.
PIPELINE_MARK = "llmjury_pipeline"
#: The marker every family gives its cases that replay what was recorded (no model call).
RECORDED_MARKERS = {"recorded": "cases replaying recorded verdicts, scores or votes (no model call)"}


@functools.cache
def loaded_key() -> pytest.StashKey[Loaded]:
    """Where the load reports of the datasets this process's tests were generated from, with their
    cases, are stashed on the config."""
    import pytest

    return pytest.StashKey[Loaded]()


def parametrize(cases: Iterable[Case]) -> pytest.MarkDecorator:
    """Parametrize a test over cases, with their ids and markers applied.

    The cases ride on a marker until the plugin's `pytest_generate_tests` turns them into
    parameters, because only then is the run's configuration at hand to register the markers
    named after the data (`generate` below)."""
    import pytest

    marker: pytest.MarkDecorator = getattr(pytest.mark, CASES_MARK)  # MarkGenerator makes one per name
    return marker.with_args(list(cases))


class NoCases(Exception):
    """Raised by a case set's loader when this run has no data for it (no file given, none shipped):
    its tests are skipped with this reason, naming the option to set, instead of erroring."""


def generate(metafunc: pytest.Metafunc, cases: Iterable[Case], loaded: Iterable[LoadReport] = (),
             marks: Iterable[pytest.MarkDecorator] = ()) -> None:
    """Parametrize a test over cases, from the plugin's hooks (a case set's, `llmjury.parametrize`'s).

    `loaded` are the load reports of the files the cases came from: what was kept, dropped or
    merged, shown in the report and the terminal. `marks` go on every case (a case set's pipeline).

    Markers named after the data (systems, subjects, datasets) are registered as the cases are
    generated, so `--strict-markers` holds for a user's own files and `pytest --markers` of an
    unrelated project lists none of them."""
    cases = list(cases)
    metafunc.config.stash.setdefault(loaded_key(), Loaded()).add(cases, loaded)
    add_markers(metafunc.config, case_markers(cases))
    params = case_params(cases, tuple(marks))
    # Indirect through the plugin's `case` fixture, so a test may ask only for `outcome`.
    metafunc.parametrize("case", params, indirect=["case"])


def add_markers(config: pytest.Config, markers: Mapping[str, str]) -> None:
    """Register markers not registered yet (`pytest --markers` lists each once)."""
    known = {line.split(":")[0].split("(")[0].strip() for line in config.getini("markers")}
    for name, description in markers.items():
        if name not in known:
            config.addinivalue_line("markers", f"{name}: {description}")
            known.add(name)


def case_markers(cases: Iterable[Case]) -> dict[str, str]:
    return {name: f"llmjury cases carrying {name!r}" for case in cases for name in case.marks()}


def case_params(cases: Iterable[Case], extra: Sequence[pytest.MarkDecorator] = ()) -> list[Any]:
    import pytest

    params: list[Any] = []
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise ValueError(f"duplicate case id {case.id!r}: case ids must be unique within a test")
        seen.add(case.id)
        marks = [getattr(pytest.mark, name) for name in case.marks()] + list(extra)
        params.append(pytest.param(case, id=case.id, marks=marks))
    return params
