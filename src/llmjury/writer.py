"""Writes to the run's SQLite file, off the engine loop and many to a transaction.

Every xdist worker writes answers, claims and handed-on outcomes to one SQLite file, and SQLite
lets one writer in at a time: a write made on the engine loop stalls every call of that process
while another worker holds the lock (SQLite's busy handler sleeps up to 100 ms between tries), so
answers reached the cache seconds after they arrived. A `BatchWriter` owns one connection on a
thread of its own and commits whatever is queued when it gets the lock in one transaction: far
fewer lock hand-overs, and the loop never waits for one. Each write's future completes only once
its transaction is committed, so a caller that awaits it knows the write survives a kill.
"""

from __future__ import annotations

import queue
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from pathlib import Path
from typing import Any, TypeVar

from tenacity import Retrying, retry_if_exception, stop_after_delay
from tenacity.wait import wait_random_exponential

T = TypeVar("T")
#: As long as a connection waits for the write lock (sqlite3's busy time-out).
LOCK_WAIT = 60.0
Write = Callable[[sqlite3.Connection], Any]


def connect(path: Path) -> sqlite3.Connection:
    """A connection in WAL mode that waits for the write lock instead of failing on it."""
    db = sqlite3.connect(path, timeout=LOCK_WAIT, check_same_thread=False, isolation_level=None)
    # Workers open a new file at the same moment: each switch to WAL reads the file, then asks for
    # the exclusive lock, and SQLite fails all but one of them at once rather than let two readers
    # wait on each other (its busy handler is not called on that deadlock). The switch is tried
    # again after a jittered pause, so the losers find the file in WAL mode or take the lock next.
    for attempt in Retrying(
        retry=retry_if_exception(_locked),
        wait=wait_random_exponential(multiplier=0.005, max=0.25),
        stop=stop_after_delay(LOCK_WAIT),
        reraise=True,
    ):
        with attempt:
            db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    return db


def _locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


class BatchWriter:
    def __init__(self, path: Path, name: str) -> None:
        self._db = connect(path)
        self._queue: queue.SimpleQueue[tuple[Write, Future[Any]] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, write: Callable[[sqlite3.Connection], T]) -> Future[T]:
        """Queue `write(connection)`; its future holds the result once the transaction is committed."""
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
        outcomes: list[tuple[Future[Any], Any, BaseException | None]] = []
        try:
            self._db.execute("BEGIN IMMEDIATE")
            for write, future in batch:
                try:
                    outcomes.append((future, write(self._db), None))
                except Exception as exc:  # one bad write fails its own caller, not the batch
                    outcomes.append((future, None, exc))
            self._db.execute("COMMIT")
        except Exception as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            for _, future in batch:
                _settle(future, None, exc)
            return
        for future, result, error in outcomes:
            _settle(future, result, error)


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
