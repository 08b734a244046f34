"""Riding out a run store whose server went away for a while (a PostgreSQL restart, a fail-over).

A lost connection is opened again, with exponential backoff, for up to `--llm-store-outage` seconds
(`OUTAGE_S` by default); whatever waits on the store (a read, a queued write and the answer it
holds) waits that long rather than fail, so an answer already paid for is never lost with its
write; the longest such wait is kept for the run's report. Past the limit a `StoreOutageError`
names the store and the cause, and the run stops with its report marked incomplete.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from tenacity import RetryCallState, RetryError, Retrying, retry_if_exception, stop_after_delay
from tenacity.wait import wait_exponential

from llmjury.errors import RunStopError

T = TypeVar("T")
#: How long a run waits for its store's server to come back (`--llm-store-outage`), in seconds.
OUTAGE_S = 120.0


class StoreOutageError(RunStopError):
    """The run store stayed out of reach longer than the run may wait for it: the run stops."""


@dataclass(eq=False)
class Outage:
    """How long one process waits for its store, shared by every connection it opens to it; once a
    wait was in vain, every later use of the store fails at once with the same cause (a run that is
    stopping does not wait again for each of its readers and cleanups)."""

    limit_s: float = OUTAGE_S
    #: Why the store is given up on, once it is.
    gave_up: str | None = None
    #: The longest wait for the store that ended with it back (seconds): the run's report tells of it.
    ridden_s: float = 0.0
    #: How many connections of this process are waiting for the store now.
    waiting: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def check(self) -> None:
        if self.gave_up is not None:
            raise StoreOutageError(self.gave_up)

    @property
    def away(self) -> bool:
        """Whether the store is out of reach (waited for, or given up on)."""
        return self.waiting > 0 or self.gave_up is not None

    def wait(self, by: int) -> None:
        """A connection starts (1) or stops (-1) waiting for the store."""
        with self._lock:
            self.waiting += by

    def __getstate__(self) -> dict[str, object]:
        """Sent to another process (a StoreLocation handed to a subprocess): its lock stays here."""
        return {name: value for name, value in self.__dict__.items() if name != "_lock"}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state, _lock=threading.Lock())


def ride_out(work: Callable[[], T], *, lost: Callable[[BaseException], bool], reconnect: Callable[[], None],
             outage: Outage, where: str) -> T:
    """`work()`, run again on a new connection (`reconnect`, then `work`) while its failures are a
    lost connection (`lost`), for up to `outage.limit_s` seconds; then a StoreOutageError naming
    `where` and the cause."""
    outage.check()

    def attempt() -> T:
        reconnect()
        return work()

    waiting = False

    def lost_it(_: RetryCallState) -> None:
        nonlocal waiting
        if not waiting:
            waiting = True
            outage.wait(1)

    try:
        for trial in Retrying(retry=retry_if_exception(lost), stop=stop_after_delay(outage.limit_s),
                              wait=wait_exponential(multiplier=0.05, max=2.0), before_sleep=lost_it):
            with trial:
                if trial.retry_state.attempt_number == 1:
                    return work()
                done = attempt()
                outage.ridden_s = max(outage.ridden_s, time.monotonic() - trial.retry_state.start_time)
                return done
    except RetryError as exc:
        cause = exc.last_attempt.exception()
        first = str(cause).strip().splitlines()[0] if cause is not None and str(cause).strip() else repr(cause)
        outage.gave_up = outage.gave_up or (f"{where}: out of reach for more than {outage.limit_s:g} s "
                                            f"(--llm-store-outage): {first}")
        raise StoreOutageError(outage.gave_up) from cause
    finally:
        if waiting:
            outage.wait(-1)
    raise AssertionError("unreachable: Retrying either returns or raises")  # pragma: no cover
