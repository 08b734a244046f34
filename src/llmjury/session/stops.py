"""What stopped a run before its last test, as pytest and the signal handlers tell of it."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from llmjury.errors import RunStopError
from llmjury.judgement.planner import PlannedStopError

#: The key of a worker's `workeroutput` that carries what stopped it (read by the controller).
STOPPED = "llmjury_stopped"


class Stops:
    """The first cause that stopped this process's session early, None while it runs its course."""

    def __init__(self) -> None:
        self.by: str | None = None

    def note(self, cause: str) -> None:
        """Keep the first cause: what came after it is its consequence."""
        self.by = self.by or cause

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """Ctrl-C (or a SIGINT turned into it) ended the session: the run is not whole. xdist's
        controller stops the same way when a worker stops its session, and names the worker's reason."""
        if type(excinfo.value).__name__ == "Interrupted" and str(excinfo.value):
            self.note(str(excinfo.value).splitlines()[0][:300])
        else:
            self.note("KeyboardInterrupt (Ctrl-C)")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item,
                                  call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """A test a RunStopError stopped shows its cause as one line: the traceback through
        llmjury's planner says nothing the cause does not (made before the report is logged, so an
        xdist worker sends the short form)."""
        report = yield
        if call.excinfo is not None and call.excinfo.errisinstance(RunStopError):
            report.longrepr = _cause(call.excinfo)
        return report

    def pytest_exception_interact(self, node: pytest.Item | pytest.Collector, call: pytest.CallInfo[Any],
                                  report: pytest.TestReport | pytest.CollectReport) -> None:
        """A RunStopError (a run store out of reach past `--llm-store-outage`, forced logprobs on a
        server that sends none): every test after this one would fail the same way, so the run stops
        here, and its report (of what finished) says why."""
        if call.excinfo is not None and call.excinfo.errisinstance(RunStopError):
            cause = _cause(call.excinfo)
            self.note(cause)
            node.session.shouldstop = cause

    def pytest_internalerror(self, excrepr: Any, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """An internal error ended the session: the run is not whole, and its report says why."""
        self.note(f"INTERNALERROR: {excinfo.exconly().splitlines()[0][:300]}")


def _cause(excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    """A RunStopError's first line (met on the worker that planned the case: that error's line, not
    the wrapper's), with room for a server URL and what to set."""
    text = str(excinfo.value) if excinfo.errisinstance(PlannedStopError) else excinfo.exconly()
    return text.splitlines()[0][:500]
