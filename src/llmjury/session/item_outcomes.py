"""Per-item assertions as outcomes: what a test of your own decided on each case, and who decides the exit code.

Every case test of your own (parametrized with `llmjury.parametrize`, no family pipeline) records a
`check` verdict of the `custom` family when it runs: passed or not. Its pass rate per test is a
headline metric (`custom.check.test_answer.pass_rate`), compared with a baseline and gated like
any other.

`--llm-item-failures` says what a failed assertion on one case does to the session:

* `fail` (the default): the test fails, as pytest always does, and the session exits 1;
* `record`: the test is reported as an expected failure (`x`, listed by `-rx` with its assertion
  message), the verdict records it, and the gates decide the exit code. A real system is wrong
  on some items; a pull request is judged by whether it got worse, not by whether it is perfect.

Only an assertion is recorded: any other exception (a failed call, a bug in the test) still fails.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import pytest

from llmjury.cases import Case
from llmjury.custom import CheckResult
from llmjury.errors import RunStopError
from llmjury.judgement.verdicts import ASSERTIONS, CUSTOM, JudgeConfig, Verdict

ITEM_FAILURES = ("fail", "record")
#: How a check verdict names what judged it: the test's own assertions.
ASSERTED = JudgeConfig(provider=ASSERTIONS)
#: The reason an item's recorded failure carries in pytest's report (`-rx`).
RECORDED = "recorded by --llm-item-failures record"


class ItemOutcomes:
    """Records each own-eval case test's outcome; in `record` mode a failed assertion becomes a recorded one."""

    def __init__(self, mode: str, case_of: Callable[[pytest.Item], Case | None],
                 is_own: Callable[[pytest.Item], bool], record: Callable[[pytest.Item, Verdict], None]) -> None:
        self.mode = mode
        self._case_of = case_of
        self._is_own = is_own
        self._record = record
        #: Node ids whose failed assertion was recorded (the process that reports them lists them).
        self.recorded: list[str] = []

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
        """A case test's call outcome becomes its check verdict, and in `record` mode its failure an xfail."""
        report = yield
        case = self._case_of(item)
        if report.when != "call" or case is None or report.skipped:
            return report
        if call.excinfo is not None and call.excinfo.errisinstance(RunStopError):
            return report  # the run stopped under it: not a finished case, so no outcome of it
        message = assertion_message(call) if report.failed else None
        if self._is_own(item):
            passed = report.passed
            error = None if passed or message is not None else _first_line(call)
            self._record(item, Verdict(
                case_id=case.id, family=CUSTOM, kind="check", judge=ASSERTED,
                result=CheckResult(passed=passed) if error is None else None, valid=error is None,
                error=None if error is None else f"test error: {error}",
                raw=[] if message is None else [message],
                attributes={"name": getattr(item, "originalname", item.name), "test": item.nodeid}))
        if message is not None and self.mode == "record":
            report.outcome = "skipped"
            report.wasxfail = f"{RECORDED}: {message}"
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Count the recorded failures where the run reports, for its terminal summary."""
        if report.when == "call" and str(getattr(report, "wasxfail", "")).startswith(RECORDED):
            self.recorded.append(report.nodeid)

    def summary_lines(self) -> list[str]:
        """What the terminal says of the items whose assertion failed and was recorded."""
        if not self.recorded:
            return []
        return [f"{len(self.recorded)} item(s) failed their assertions, recorded as outcomes "
                "(--llm-item-failures record: the gates decide the exit code; -rx lists them)"]


def assertion_message(call: pytest.CallInfo[None]) -> str | None:
    """The first line of a failed assertion, or None when the test failed some other way. A test
    planned by another worker fails with that worker's summary, which leads with the exception."""
    excinfo = call.excinfo
    if excinfo is None:
        return None
    if isinstance(excinfo.value, AssertionError):
        return _first_line(call)
    text = str(excinfo.value)
    if isinstance(excinfo.value, pytest.fail.Exception) and text.startswith("AssertionError"):
        return text.splitlines()[0]
    return None


def _first_line(call: pytest.CallInfo[None]) -> str:
    assert call.excinfo is not None
    lines = call.excinfo.exconly().strip().splitlines()
    return lines[0] if lines else call.excinfo.typename
