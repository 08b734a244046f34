"""What stopped a run before its last test, as pytest and the signal handlers tell of it."""

from __future__ import annotations

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

    def pytest_exception_interact(self, node: pytest.Item | pytest.Collector, call: pytest.CallInfo[Any],
                                  report: pytest.TestReport | pytest.CollectReport) -> None:
        """A RunStopError (a run store out of reach past `--llm-store-outage`, forced logprobs on a
        server that sends none): every test after this one would fail the same way, so the run stops
        here, and its report (of what finished) says why."""
        if call.excinfo is not None and call.excinfo.errisinstance(RunStopError):
            # Met on the worker that planned the case: its own error's line, not the wrapper's.
            text = str(call.excinfo.value) if call.excinfo.errisinstance(PlannedStopError) else call.excinfo.exconly()
            cause = text.splitlines()[0][:500]  # room for a server URL and what to set
            self.note(cause)
            node.session.shouldstop = cause

    def pytest_internalerror(self, excrepr: Any, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """An internal error ended the session: the run is not whole, and its report says why."""
        self.note(f"INTERNALERROR: {excinfo.exconly().splitlines()[0][:300]}")
