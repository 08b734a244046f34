"""Calls sent and not yet answered, apart from the cases that wait for them.

A run that stops on a RunStopError (its store out of reach) cancels the cases left; a call already
sent is being paid for all the same. Each call runs as a task of its own that a case awaits
shielded, so cancelling the case does not hang up on the provider while the store is away: the
stopping run lets its calls land (for `LANDING_S` at most), and their answers are kept
(llmjury.running.unsaved) rather than lost and paid again by the next run. A run stopped otherwise
(Ctrl-C, `-x`) cancels its calls with their cases, at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from llmjury.errors import provider_fault

__tracebackhide__ = provider_fault  # pytest shows a provider's error at the test's line

T = TypeVar("T")
#: How long a run stopping on a RunStopError waits for the calls it has sent, in seconds.
LANDING_S = 30.0


class Flights:
    """This process's calls in flight (used on the engine's loop only)."""

    def __init__(self, keep_flying: Callable[[], bool]) -> None:
        """`keep_flying`: whether a call whose case is cancelled goes on (the run stops on its store);
        otherwise (Ctrl-C, `-x`) it is cancelled with its case, at once."""
        self._flying: set[asyncio.Task[Any]] = set()
        self._keep_flying = keep_flying
        self._until: float | None = None  # the loop's time the landing ends, once it started

    async def fly(self, work: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run `work()` as a task of its own, and wait for it; cancelled, leave it be if it keeps
        flying. `work` is made here: a case cancelled before this starts leaves no coroutine unawaited."""
        task = asyncio.ensure_future(work())
        self._flying.add(task)
        task.add_done_callback(self._landed)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if not self._keep_flying():
                task.cancel()
            raise

    def _landed(self, task: asyncio.Task[Any]) -> None:
        self._flying.discard(task)
        if not task.cancelled():
            task.exception()  # read: a case cancelled while it flew no longer reads it, nor logs it unread

    async def land(self, within: float = LANDING_S) -> None:
        """Wait for the calls in flight to end, `within` seconds at most from the first time asked
        (the report's count and the engine's close both ask)."""
        now = asyncio.get_running_loop().time()
        self._until = self._until if self._until is not None else now + within
        if self._flying and self._until > now:
            await asyncio.wait(set(self._flying), timeout=self._until - now)
