"""A run that ends without every selected test reported says so in its report (complete: false, with
its cause), whatever ended it: an internal error in a hook, a crashed worker; and a stopped run of a
project's own tests (no llmjury test selected) writes no report."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.e2e  # each test runs pytest in a process of its own

INI = """
[pytest]
addopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider --strict-markers
"""

EVAL = """
import os
import llmjury
from llmjury import Case

CASES = [Case(id=f"c{i:02d}", family="bot") for i in range(12)]


@llmjury.parametrize(CASES)
def test_item(case):
    if case.id == "c05" and os.environ.get("CRASH"):
        os._exit(1)  # the worker dies mid-run
    assert case.id.startswith("c")
"""

INTERNAL = """
import pytest

seen = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_logreport(report):
    yield
    if report.when == "teardown" and not hasattr(report, "node"):
        seen.append(report.nodeid)
        if len(seen) == 4:
            raise RuntimeError("a plugin broke")
"""


def summary(pytester: pytest.Pytester) -> dict:
    return json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    pytester.makepyfile(test_bot=EVAL)
    return pytester


def test_a_crashed_worker_leaves_a_report_marked_incomplete(project, monkeypatch):
    monkeypatch.setenv("CRASH", "1")
    result = project.runpytest_subprocess("-n", "2", "--max-worker-restart", "0")
    assert result.ret != 0
    found = summary(project)
    assert found["complete"] is False, found["run"].get("stopped")
    assert "went down" in found["run"]["stopped"]["by"] or "never reported" in found["run"]["stopped"]["by"]


def test_an_internal_error_leaves_a_report_marked_incomplete(project):
    project.makeconftest(INTERNAL)
    result = project.runpytest_subprocess("-n", "0")
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    found = summary(project)
    assert found["complete"] is False
    assert found["run"]["stopped"]["by"].startswith("INTERNALERROR: RuntimeError: a plugin broke")


def test_a_whole_run_is_complete(project):
    assert project.runpytest_subprocess("-n", "2").ret == 0
    assert summary(project)["complete"] is True


def test_a_stopped_run_of_a_projects_own_tests_writes_no_report(pytester):
    pytester.makeini(INI)
    pytester.makepyfile(test_plain="def test_one():\n    assert False\n\n\ndef test_two():\n    pass\n")
    result = pytester.runpytest_subprocess("-x")
    assert result.ret == 1
    assert not (pytester.path / "reports").exists()
