"""Handing a planned outcome from the xdist worker that planned it to the worker that runs its test.

Each worker plans its share of the cases (a hash of the work's key); xdist then hands tests out as
it likes, so a test often runs on a worker that did not plan it. That worker reads the planner's
outcome, failures included, from the run's shared SQLite file instead of running the pipeline
again: a failed call is not asked twice, and unscored counts are the same at any `-n`.

A worker announces what it plans (with its process id) before it starts; a reader waits while the
owner is alive and has the work in its plan, and computes the outcome itself only when the owner
did not plan it or died.

Outcomes are written by a `BatchWriter`: handing one on never makes the engine loop wait for the
SQLite write lock that the other workers' cache writes hold. The rows serve their run only: the
controller deletes them once the run's report is written (`forget_run`).
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from llmjury.running.cache import process_alive
from llmjury.writer import BatchWriter, connect

SCHEMA = """
CREATE TABLE IF NOT EXISTS plans (run_id TEXT NOT NULL, worker INTEGER NOT NULL, pid INTEGER NOT NULL,
                                  PRIMARY KEY (run_id, worker));
CREATE TABLE IF NOT EXISTS planned (run_id TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY (run_id, key));
CREATE TABLE IF NOT EXISTS outcomes (run_id TEXT NOT NULL, key TEXT NOT NULL, payload TEXT NOT NULL,
                                     PRIMARY KEY (run_id, key));
"""
POLL_S = 0.05
#: How long a reader waits for the owning worker to announce its plan (it may still be collecting).
ANNOUNCE_TIMEOUT_S = 600.0


class OutcomeHandoff:
    def __init__(self, path: Path, run_id: str, worker: int) -> None:
        self.run_id, self.worker = run_id, worker
        self._lock = threading.Lock()
        self._db = connect(path)
        self._db.executescript(SCHEMA)
        self._writer = BatchWriter(path, "llmjury-handoff-writer")

    def announce(self, keys: Iterable[str]) -> None:
        """Say which work this worker plans, before it starts any of it (committed on return)."""
        planned = [(self.run_id, k) for k in keys]
        plan = (self.run_id, self.worker, os.getpid())

        def write(db: sqlite3.Connection) -> None:
            db.executemany("INSERT OR IGNORE INTO planned VALUES (?, ?)", planned)
            db.execute("INSERT OR REPLACE INTO plans VALUES (?, ?, ?)", plan)

        self._writer.submit(write).result()

    def put(self, key: str, payload: dict[str, Any]) -> Future[None]:
        """The planned outcome of `key`: JSON-able verdict records, details, or the error's text; the
        future completes once it is committed."""
        row = (self.run_id, key, json.dumps(payload, ensure_ascii=False, default=str))

        def write(db: sqlite3.Connection) -> None:
            db.execute("INSERT OR REPLACE INTO outcomes VALUES (?, ?, ?)", row)

        return self._writer.submit(write)

    async def wait(self, key: str, owner: int) -> dict[str, Any] | None:
        """The owner's outcome of `key`, once it is there; None when the owner did not plan it, died,
        or never announced a plan (then the caller computes it)."""
        started = time.monotonic()
        while True:
            with self._lock:
                row = self._db.execute("SELECT payload FROM outcomes WHERE run_id = ? AND key = ?",
                                       (self.run_id, key)).fetchone()
                plan = self._db.execute("SELECT pid FROM plans WHERE run_id = ? AND worker = ?",
                                        (self.run_id, owner)).fetchone()
                planned = self._db.execute("SELECT 1 FROM planned WHERE run_id = ? AND key = ?",
                                           (self.run_id, key)).fetchone()
            if row is not None:
                return dict(json.loads(row[0]))
            if plan is None:
                if time.monotonic() - started > ANNOUNCE_TIMEOUT_S:
                    return None
            elif planned is None or not process_alive(plan[0]):
                return None
            await asyncio.sleep(POLL_S)

    def handed_on(self) -> list[dict[str, Any]]:
        """Every outcome any worker of this run has handed on so far (a stopped run reports them)."""
        with self._lock:
            rows = self._db.execute("SELECT payload FROM outcomes WHERE run_id = ? ORDER BY key",
                                    (self.run_id,)).fetchall()
        return [dict(json.loads(row[0])) for row in rows]

    def close(self) -> None:
        """Commit the queued outcomes, then close."""
        self._writer.close()
        with self._lock:
            self._db.close()


def forget_run(path: Path, run_id: str) -> None:
    """Delete a finished run's hand-off rows. Only that run reads them (a stopped run's report
    included, written before this), and kept they grew the cache by every run: 42 MB after one
    offline suite. SQLite reuses the freed pages, so the file stops growing rather than shrinks."""
    if not path.exists():
        return
    db = connect(path)
    try:
        db.execute("BEGIN IMMEDIATE")
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for table in ("outcomes", "planned", "plans"):
            if table in tables:  # a run that planned nothing made none
                db.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
        db.execute("COMMIT")
    finally:
        db.close()
