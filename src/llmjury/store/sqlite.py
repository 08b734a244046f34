"""The SQLite backend: one file in WAL mode, for the processes of one machine (the default).

SQLite ships with Python and lets many processes read while one writes; SQLite's own documentation
says WAL does not work across hosts or over a network filesystem, which is what PostgreSQL is for.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from tenacity import Retrying, retry_if_exception, stop_after_delay
from tenacity.wait import wait_random_exponential

from llmjury.store.database import Row

#: As long as a connection waits for the write lock (sqlite3's busy time-out).
LOCK_WAIT = 60.0
#: Each connection's page cache, in KiB. The store is read by key, a few pages a lookup, and the
#: operating system caches the file anyway; SQLite's default (2,000 KiB a connection) is memory a run
#: of a thousand cases pays in full (`bench/store.py` and `bench/growth.py` measure both sides).
PAGE_CACHE_KIB = 256


class SqliteDatabase:
    dialect = "sqlite"
    now = "((julianday('now') - 2440587.5) * 86400.0)"
    errors: tuple[type[Exception], ...] = (sqlite3.Error,)

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = connect(path)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return self._db.execute(sql, params).fetchall()

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self._db.executemany(sql, rows)

    def keys(self, keys: Sequence[str]) -> tuple[str, Any]:
        return "SELECT value AS key FROM json_each(?)", json.dumps(list(keys))

    def begin(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def make_schema(self) -> None:
        return None  # a file is its own namespace

    def notify_ended(self, keys: Sequence[str]) -> None:
        return None  # no channel between processes: waiters poll (llmjury.running.claim_waits)

    def commit(self) -> None:
        self._db.execute("COMMIT")

    def rollback(self) -> None:
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

    def lost(self, exc: BaseException) -> bool:
        return False  # a file does not go away as a server does

    def retryable(self, exc: BaseException) -> bool:
        return False  # a writer waits for SQLite's lock (LOCK_WAIT) rather than failing on it

    def close(self) -> None:
        self._db.close()

    def __str__(self) -> str:
        return f"SQLite store {self.path}"


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
    db.execute(f"PRAGMA cache_size=-{PAGE_CACHE_KIB}")
    return db


def _locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)
