"""Writes to the run store, off the engine loop and many to a transaction.

Every process writes answers, claims, hand-offs and tallies to one store, and SQLite lets one
writer in at a time: a write made on the engine loop stalls every call of that process while
another holds the lock. A `BatchWriter` owns one connection on a thread of its own and commits
whatever is queued in one transaction: far fewer lock hand-overs (or round trips, on PostgreSQL),
and the loop never waits. Each write's future completes only once its transaction is committed,
so a caller that awaits it knows the write survives a kill. A transaction the server broke off
(PostgreSQL's deadlock detector) is run again whole.
"""

from __future__ import annotations

import queue
import threading
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


class BatchWriter:
    def __init__(self, open_database: Callable[[], Database], name: str) -> None:
        self._db = open_database()
        self._queue: queue.SimpleQueue[tuple[Write, Future[Any]] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, write: Callable[[Database], T]) -> Future[T]:
        """Queue `write(database)`; its future holds the result once the transaction is committed."""
        future: Future[T] = Future()
        self._queue.put((write, future))
        return future

    def close(self) -> None:
        """Commit what is queued, then stop the thread and close the connection."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        self._db.close()

    def _run(self) -> None:
        stopping = False
        while not stopping:
            item = self._queue.get()
            batch: list[tuple[Write, Future[Any]]] = []
            while item is not None:
                batch.append(item)
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            stopping = item is None
            if batch:
                self._commit(batch)

    def _commit(self, batch: list[tuple[Write, Future[Any]]]) -> None:
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
                return
            for future, result, error in outcomes:
                _settle(future, result, error)
            return

    def _transaction(self, batch: list[tuple[Write, Future[Any]]]
                     ) -> list[tuple[Future[Any], Any, BaseException | None]]:
        outcomes: list[tuple[Future[Any], Any, BaseException | None]] = []
        self._db.begin()
        try:
            for index, (write, future) in enumerate(batch):
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
