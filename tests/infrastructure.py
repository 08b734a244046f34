"""What a test needs of the machine (PostgreSQL, Chromium, llama.cpp's server, the shared data beside the
repository): missing, the test skips and says why; under CI (`CI=true`) it fails instead, so a CI run
cannot pass by leaving out whole parts of the suite."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

#: The marker `needs` puts on a test whose infrastructure is missing under CI (tests/conftest.py fails it).
MISSING = "infrastructure_missing"


def under_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1")


def unavailable(reason: str) -> NoReturn:
    """From a test or fixture: skip, saying why; under CI, fail."""
    if under_ci():
        pytest.fail(f"{reason} (CI=true: a test that cannot run fails the run rather than skip)", pytrace=False)
    pytest.skip(reason)


def needs(available: bool, reason: str) -> pytest.MarkDecorator:
    """`skipif(not available)`, except under CI, where a missing piece fails the test."""
    if not available and under_ci():
        return getattr(pytest.mark, MISSING)(reason)
    return pytest.mark.skipif(not available, reason=reason)
