"""Per-item assertions of your own tests: recorded as `check` verdicts with a pass rate per test, gated
against a baseline like a family's headline; `--llm-item-failures record` lets the gates decide the
exit code; a gate never hides pytest's own failure status."""

from __future__ import annotations

import json
from typing import Any

import pytest

from llmjury.results.exit_status import GATE_FAILED_EXIT, GATE_INCONCLUSIVE_EXIT

pytestmark = pytest.mark.e2e  # each test runs pytest in a process of its own

INI = """
[pytest]
addopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider --strict-markers -rx
"""

# A system of the user's own: right on the items its WRONG environment variable does not name.
OWN_EVAL = """
import os
import llmjury
from llmjury import Case


class Item(Case):
    question: str
    answer: str


CASES = [Item(id=f"q{i:02d}", family="bot", question=f"{i} + 1?", answer=str(i + 1)) for i in range(10)]
WRONG = {int(i) for i in os.environ.get("WRONG", "").split(",") if i}


def my_bot(question):
    n = int(question.split(" ")[0])
    return str(n + 1 + (n in WRONG))


@llmjury.parametrize(CASES)
def test_answer(case):
    assert my_bot(case.question) == case.answer, f"wrong answer to {case.question}"
"""


def summary(pytester: pytest.Pytester) -> dict[str, Any]:
    return json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    pytester.makepyfile(test_own=OWN_EVAL)
    return pytester


def run(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, wrong: str, *args: str) -> pytest.RunResult:
    monkeypatch.setenv("WRONG", wrong)
    return project.runpytest_subprocess(*args)


def test_each_item_records_a_check_and_the_test_a_pass_rate(project, monkeypatch):
    result = run(project, monkeypatch, "1,2")
    assert result.ret == 1  # by default a failed assertion fails its test, as pytest always does
    result.assert_outcomes(passed=8, failed=2)
    check = summary(project)["custom"]["check"]["test_answer"]["pass_rate"]
    assert (check["value"], check["n"]) == (0.8, 10)


def test_record_mode_reports_failed_items_as_recorded_and_exits_by_the_gates(project, monkeypatch):
    result = run(project, monkeypatch, "1,2", "--llm-item-failures", "record", "-n", "2")
    assert result.ret == 0
    result.assert_outcomes(passed=8, xfailed=2)
    result.stdout.fnmatch_lines(["*2 item(s) failed their assertions, recorded as outcomes*",
                                 "*XFAIL*q01*recorded by --llm-item-failures record: AssertionError: wrong answer*"])
    assert summary(project)["custom"]["check"]["test_answer"]["pass_rate"]["value"] == 0.8
    gated = run(project, monkeypatch, "1,2", "--llm-item-failures", "record",
                "--llm-gate", "custom.check.test_answer.pass_rate>=0.95")
    assert gated.ret == GATE_FAILED_EXIT


def test_an_own_test_is_gated_against_a_baseline_on_its_pass_rate(project, monkeypatch):
    assert run(project, monkeypatch, "", "--llm-item-failures", "record").ret == 0
    baseline = (project.path / "reports" / "latest").resolve()
    gate = "custom.check.test_answer.pass_rate.delta.high>=0"  # the pull-request gate: an unchanged run passes
    same = run(project, monkeypatch, "", "--llm-item-failures", "record", "--llm-baseline", str(baseline),
               "--llm-gate", gate)
    assert same.ret == 0, same.stdout.str()
    worse = run(project, monkeypatch, "0,1,2,3,4,5,6", "--llm-item-failures", "record",
                "--llm-baseline", str(baseline), "--llm-gate", gate)
    assert worse.ret == GATE_FAILED_EXIT, worse.stdout.str()
    row = summary(project)["comparison"]["families"]["custom"]["check.test_answer.pass_rate"]
    assert (row["baseline"], row["current"], row["delta"]["value"]) == (1.0, 0.3, pytest.approx(-0.7))


def test_a_delta_gate_on_an_own_test_that_is_no_headline_is_refused_at_start_up(project, monkeypatch):
    result = run(project, monkeypatch, "", "--llm-baseline", "nowhere",
                 "--llm-gate", "custom.check.test_answer.tie_rate.delta>=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_a_wrong_item_failures_word_is_a_usage_error(project, monkeypatch):
    project.makeini(INI + "llm_item_failures = recrod\n")
    result = run(project, monkeypatch, "")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini llm_item_failures 'recrod' (did you mean 'record'?): use one of fail, record*"])


LATE_STATUS = """
import pytest


@pytest.hookimpl(wrapper=True)
def pytest_sessionfinish(session):
    # What pytest 9.2's terminal reporter does for --max-warnings: after the session's own hooks,
    # and only when the status is still 0.
    result = yield
    if session.exitstatus == 0:
        session.exitstatus = 6
    return result
"""


def test_a_failing_gate_never_hides_a_status_pytest_sets_after_the_session_hooks(project, monkeypatch):
    project.makeconftest(LATE_STATUS)
    result = run(project, monkeypatch, "", "--llm-gate", "custom.check.test_answer.pass_rate>=1.1")
    assert result.ret == 6
    result.stdout.fnmatch_lines(["*FAIL*custom.check.test_answer.pass_rate>=1.1*"])  # and the gate is shown


def test_failing_tests_keep_pytests_exit_status_whatever_the_gates_say(project, monkeypatch):
    result = run(project, monkeypatch, "3", "--llm-gate", "custom.check.test_answer.pass_rate>=0.5")
    assert result.ret == 1
    inconclusive = run(project, monkeypatch, "", "--llm-item-failures", "record",
                       "--llm-gate", "custom.check.test_answer.pass_rate>=0.8")
    assert inconclusive.ret == GATE_INCONCLUSIVE_EXIT  # 10 of 10: the interval still reaches below 0.8


STOPPED_UNDER = """
import llmjury
from llmjury import Case
from llmjury.errors import RunStopError


@llmjury.parametrize([Case(id=f"q{i:02d}", family="bot") for i in range(6)])
def test_answer(case):
    if case.id == "q03":
        raise RunStopError("the run store went away")
"""


def test_an_item_the_run_stopped_under_is_not_a_finished_case(pytester):
    """A RunStopError (a store out of reach) stops the run in that item: the figures cover the items
    that finished before it, and it is no unscored "test error" among them."""
    pytester.makeini(INI)
    pytester.makepyfile(test_own=STOPPED_UNDER)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=3, failed=1)
    found = summary(pytester)
    assert found["complete"] is False and "the run store went away" in found["run"]["stopped"]["by"]
    assert (found["custom"]["verdicts"], found["custom"]["unscored"]) == (3, 0)
    assert found["custom"]["check"]["test_answer"]["pass_rate"]["n"] == 3

