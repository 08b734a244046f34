"""Writes to the run store, off the engine loop and many to a transaction.

Every process writes answers, claims, hand-offs and tallies to one store, and SQLite lets one
writer in at a time: a write made on the engine loop stalls every call of that process while
another holds the lock. A `BatchWriter` owns one connection on a thread of its own and commits
whatever is queued in one transaction: far fewer lock hand-overs (or round trips, on PostgreSQL),
and the loop never waits. Each write's future completes only once its transaction is committed,
so a caller that awaits it knows the write survives a kill. A transaction the server broke off
(PostgreSQL's deadlock detector) is run again whole.

Durable when paid: an answer's write is `urgent`, and goes ahead of the claims, hand-offs and
tallies queued before it; a transaction takes no new write once it has run `TRANSACTION_S`, so an
answer is committed within about twice that of its arrival (one transaction under way, then its
own), however much is queued: `kill -9` loses only the calls in flight.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from typing import Any, TypeVar

from tenacity import Retrying, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_random_exponential

from llmjury.store.database import Database

T = TypeVar("T")
Write = Callable[[Database], Any]
#: How often a transaction the server broke off (a deadlock, a serialization failure) is tried again.
RETRIES = 8
#: A transaction takes no further write after running this long (seconds): the bound on how long
#: an urgent write (an answer) waits for the one before it.
TRANSACTION_S = 0.2
Queued = tuple[Write, "Future[Any]"]


class BatchWriter:
    def __init__(self, open_database: Callable[[], Database], name: str) -> None:
        self._db = open_database()
        self._queue: queue.SimpleQueue[tuple[Write, Future[Any], bool] | None] = queue.SimpleQueue()
        self._urgent: deque[Queued] = deque()
        self._other: deque[Queued] = deque()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, write: Callable[[Database], T], *, urgent: bool = False) -> Future[T]:
        """Queue `write(database)`; its future holds the result once the transaction is committed.
        An `urgent` write (a paid answer) goes ahead of the others queued."""
        future: Future[T] = Future()
        self._queue.put((write, future, urgent))
        return future

    def close(self) -> None:
        """Commit what is queued, then stop the thread and close the connection."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        self._db.close()

    def _run(self) -> None:
        stopping = False
        while not stopping or self._urgent or self._other:
            stopping = self._take(block=not (self._urgent or self._other)) or stopping
            batch = list(self._urgent) + list(self._other)
            self._urgent.clear()
            self._other.clear()
            if batch:
                left = self._commit(batch)
                self._other.extendleft(reversed(left))  # next, after any urgent write queued meanwhile

    def _take(self, *, block: bool) -> bool:
        """Move what is queued into the urgent and other lines; True once `close` was asked."""
        while True:
            try:
                item = self._queue.get() if block else self._queue.get_nowait()
            except queue.Empty:
                return False
            if item is None:
                return True
            write, future, urgent = item
            (self._urgent if urgent else self._other).append((write, future))
            block = False

    def _commit(self, batch: list[Queued]) -> list[Queued]:
        """Commit a prefix of `batch` in one transaction; the writes it left for the next one."""
        while batch:
            try:
                for attempt in Retrying(retry=retry_if_exception(self._db.retryable), reraise=True,
                                        stop=stop_after_attempt(RETRIES),
                                        wait=wait_random_exponential(multiplier=0.01, max=0.5)):
                    with attempt:
                        outcomes = self._transaction(batch)
            except _BadWrite as bad:
                # PostgreSQL voids the whole transaction on a failed statement: the bad write fails
                # its own caller, and the rest of the batch is committed without it.
                _settle(batch[bad.index][1], None, bad.cause)
                batch = batch[:bad.index] + batch[bad.index + 1:]
                continue
            except Exception as exc:
                for _, future in batch:
                    _settle(future, None, exc)
                return []
            for future, result, error in outcomes:
                _settle(future, result, error)
            return batch[len(outcomes):]
        return []

    def _transaction(self, batch: list[Queued]) -> list[tuple[Future[Any], Any, BaseException | None]]:
        outcomes: list[tuple[Future[Any], Any, BaseException | None]] = []
        self._db.begin()
        began = time.monotonic()
        try:
            for index, (write, future) in enumerate(batch):
                if index and time.monotonic() - began > TRANSACTION_S:
                    break  # the rest go in the next transaction, after the urgent writes queued meanwhile
                try:
                    outcomes.append((future, write(self._db), None))
                except Exception as exc:
                    if self._db.retryable(exc):
                        raise  # the whole transaction is void: run it again
                    if self._db.dialect == "postgresql":
                        raise _BadWrite(index, exc) from exc
                    outcomes.append((future, None, exc))  # one bad write fails its own caller, not the batch
            self._db.commit()
        except BaseException:
            self._db.rollback()
            raise
        return outcomes


class _BadWrite(Exception):
    def __init__(self, index: int, cause: Exception) -> None:
        super().__init__(str(cause))
        self.index, self.cause = index, cause


def _settle(future: Future[Any], result: Any, error: BaseException | None) -> None:
    """Give a caller its write's outcome. A caller that gave up (a call cancelled when a run stops
    early) cancelled its future: its write is committed all the same, and the thread goes on."""
    try:
        if error is None:
            future.set_result(result)
        else:
            future.set_exception(error)
    except InvalidStateError:
        pass
