"""What stopped a run before its last test, as pytest and the signal handlers tell of it."""

from __future__ import annotations

from typing import Any

import pytest


class Stops:
    """The first cause that stopped this process's session early, None while it runs its course."""

    def __init__(self) -> None:
        self.by: str | None = None

    def note(self, cause: str) -> None:
        """Keep the first cause: what came after it is its consequence."""
        self.by = self.by or cause

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """Ctrl-C (or a SIGINT turned into it) ended the session: the run is not whole."""
        self.note("KeyboardInterrupt (Ctrl-C)")

    def pytest_internalerror(self, excrepr: Any, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """An internal error ended the session: the run is not whole, and its report says why."""
        self.note(f"INTERNALERROR: {excinfo.exconly().splitlines()[0][:300]}")
