"""A user's project for the trial kits: the suite's eval module copied into a folder outside this
repository, an ini naming nothing but pytest's own settings, and the run's summary read back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

EVALS = Path(__file__).resolve().parents[2] / "evals"
INI = """
[pytest]
addopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider -p no:randomly --strict-markers
"""


def user_project(pytester: pytest.Pytester, eval_module: str) -> pytest.Pytester:
    """`eval_module` (e.g. `test_arena.py`) as a user runs it from their own folder."""
    pytester.makeini(INI)
    shutil.copy(EVALS / eval_module, pytester.path / f"{Path(eval_module).stem}_suite.py")
    return pytester


def summary(pytester: pytest.Pytester) -> dict[str, Any]:
    return json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text(encoding="utf-8"))


def report_file(pytester: pytest.Pytester, name: str) -> str:
    return (pytester.path / "reports" / "latest" / name).read_text(encoding="utf-8")
