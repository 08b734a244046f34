"""Futures completed on other threads, awaited on the engine's loop, their completions carried over
in batches.

`asyncio.wrap_future` wakes the loop once per future: each completion calls
`call_soon_threadsafe`, which writes to the loop's self-pipe. The store writer commits many writes
in one transaction and completes their futures together, and each call awaits three of them (its
claim, its start, its answer). Here the completions that arrive before the loop has taken the last
ones ride the same wake-up: one self-pipe write and one loop callback for the lot.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from concurrent.futures import Future
from functools import partial
from typing import Any, TypeVar

T = TypeVar("T")


class LoopBridge:
    """Made for one loop; `wrap` is called on that loop, completions may come from any thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._completed: deque[tuple[asyncio.Future[Any], Future[Any]]] = deque()
        self._scheduled = False

    def wrap(self, future: Future[T]) -> asyncio.Future[T]:
        """An asyncio future on the loop that completes as `future` does (a waiter that gave up is
        left alone: the write it waited for is committed all the same)."""
        waiter: asyncio.Future[T] = self._loop.create_future()
        future.add_done_callback(partial(self._arrived, waiter))
        return waiter

    def _arrived(self, waiter: asyncio.Future[Any], future: Future[Any]) -> None:
        with self._lock:
            self._completed.append((waiter, future))
            if self._scheduled:
                return
            self._scheduled = True
        with contextlib.suppress(RuntimeError):  # a closed loop: the run has ended, nobody waits
            self._loop.call_soon_threadsafe(self._carry_over)

    def _carry_over(self) -> None:
        with self._lock:
            completed = list(self._completed)
            self._completed.clear()
            self._scheduled = False
        for waiter, future in completed:
            if waiter.cancelled():
                continue
            if future.cancelled():
                waiter.cancel()
            elif (error := future.exception()) is not None:
                waiter.set_exception(error)
            else:
                waiter.set_result(future.result())
