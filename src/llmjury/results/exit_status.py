"""The session's exit status: pytest's own outcome first, the gates' only when pytest found nothing wrong.

Gate outcomes take codes pytest does not use (it owns 0-5, and 6 since 9.2 for `--max-warnings`).
The gates' code is applied last, after every other plugin's session end (pytest's terminal
reporter checks `--max-warnings` after the session's hooks, and only on a status of 0), so a gate
never hides a failing test, a warning limit or an interruption, nor the message that says so.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING

from pluggy import HookimplMarker

from llmjury.model import GateResult

if TYPE_CHECKING:
    import pytest

#: pytest's own marker (`pytest.hookimpl`), without importing pytest into `llmjury report` (a quarter second).
hookimpl = HookimplMarker("pytest")

GATE_FAILED_EXIT = 10
GATE_INCONCLUSIVE_EXIT = 11
#: A delta gate with nothing to compare with (no baseline found, judges that differ): never a pass.
GATE_NOT_COMPARED_EXIT = 12


def gate_exit_status(results: Sequence[GateResult]) -> int:
    """Exit 10 when a gate fails, else 12 when one could not be compared, else 11 when one is
    inconclusive, else 0."""
    if any(r.status == "fail" for r in results):
        return GATE_FAILED_EXIT
    if any(r.status == "not compared" for r in results):
        return GATE_NOT_COMPARED_EXIT
    if any(r.status == "inconclusive" for r in results):
        return GATE_INCONCLUSIVE_EXIT
    return 0


class GateExit:
    """Holds the gates' status until every other session end has run, then applies it if pytest's is 0."""

    def __init__(self) -> None:
        self.status = 0

    @hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> Generator[None, None, None]:
        """The outermost wrapper: every other session end has run when the gates' status is applied."""
        result = yield
        if self.status and session.exitstatus == 0:
            session.exitstatus = self.status
        return result
