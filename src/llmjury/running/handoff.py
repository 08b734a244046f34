"""Handing a planned outcome from the xdist worker that planned it to the worker that runs its test.

Each worker plans its share of the cases (a hash of the work's key); xdist then hands tests out as
it likes, so a test often runs on a worker that did not plan it. That worker reads the planner's
outcome, failures included, from the run store instead of running the pipeline
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
import threading
import time
from collections.abc import Iterable
from concurrent.futures import Future
from typing import Any

from llmjury.running.leases import process_alive
from llmjury.store.database import Database
from llmjury.store.location import StoreLocation
from llmjury.store.schema import ensure_schema
from llmjury.store.writer import BatchWriter

#: A reader looks every POLL_S for its first FAST_LOOKS_S (an outcome about to be committed is read at
#: once, as a worker's test loop needs), then every SLOW_POLL_S: a worker waiting on a slow call sends
#: four statements a second to a store other machines may share, not sixty.
POLL_S = 0.05
FAST_LOOKS_S = 1.0
SLOW_POLL_S = 0.25
#: One statement a look: the outcome, the owner's process, and whether the owner planned the key.
LOOK = ("SELECT (SELECT payload FROM outcomes WHERE run_id = ? AND key = ?), "
        "(SELECT pid FROM plans WHERE run_id = ? AND worker = ?), "
        "(SELECT COUNT(*) FROM planned WHERE run_id = ? AND key = ?)")
#: How long a reader waits for the owning worker to announce its plan (it may still be collecting).
ANNOUNCE_TIMEOUT_S = 600.0


class OutcomeHandoff:
    def __init__(self, location: StoreLocation, run_id: str, worker: int) -> None:
        self.run_id, self.worker = run_id, worker
        self._lock = threading.Lock()
        self._db = location.open()
        ensure_schema(self._db)
        self._writer = BatchWriter(location.open, "llmjury-handoff-writer")

    def announce(self, keys: Iterable[str]) -> None:
        """Say which work this worker plans, before it starts any of it (committed on return)."""
        planned = [(self.run_id, k) for k in keys]
        plan = (self.run_id, self.worker, os.getpid())

        def write(db: Database) -> None:
            db.executemany("INSERT INTO planned VALUES (?, ?) ON CONFLICT DO NOTHING", planned)
            db.execute("INSERT INTO plans VALUES (?, ?, ?) ON CONFLICT (run_id, worker) "
                       "DO UPDATE SET pid = excluded.pid", plan)

        self._writer.submit(write).result()

    def put(self, key: str, payload: dict[str, Any]) -> Future[None]:
        """The planned outcome of `key`: JSON-able verdict records, details, or the error's text; the
        future completes once it is committed."""
        row = (self.run_id, key, json.dumps(payload, ensure_ascii=False, default=str))

        def write(db: Database) -> None:
            db.execute("INSERT INTO outcomes VALUES (?, ?, ?) ON CONFLICT (run_id, key) DO UPDATE SET "
                       "payload = excluded.payload", row)

        return self._writer.submit(write)

    async def wait(self, key: str, owner: int) -> dict[str, Any] | None:
        """The owner's outcome of `key`, once it is there; None when the owner did not plan it, died,
        or never announced a plan (then the caller computes it)."""
        started = time.monotonic()
        while True:
            with self._lock:
                ((payload, pid, planned),) = self._db.execute(LOOK, (self.run_id, key, self.run_id, owner,
                                                                     self.run_id, key))
            if payload is not None:
                return dict(json.loads(payload))
            waited = time.monotonic() - started
            if pid is None:
                if waited > ANNOUNCE_TIMEOUT_S:
                    return None
            elif not planned or not process_alive(pid):
                return None
            await asyncio.sleep(POLL_S if waited < FAST_LOOKS_S else SLOW_POLL_S)

    def handed_on(self) -> list[dict[str, Any]]:
        """Every outcome any worker of this run has handed on so far (a stopped run reports them)."""
        with self._lock:
            rows = self._db.execute("SELECT payload FROM outcomes WHERE run_id = ? ORDER BY key", (self.run_id,))
        return [dict(json.loads(row[0])) for row in rows]

    def close(self) -> None:
        """Commit the queued outcomes, then close."""
        self._writer.close()
        with self._lock:
            self._db.close()


def forget_run(location: StoreLocation, run_id: str) -> None:
    """Delete a finished run's hand-off rows. Only that run reads them (a stopped run's report
    included, written before this), and kept they grew the cache by every run: 42 MB after one
    offline suite. SQLite reuses the freed pages, so the file stops growing rather than shrinks."""
    if location.kind == "sqlite" and not location.path.exists():
        return
    db = location.open()
    try:
        ensure_schema(db)
        db.begin()
        for table in ("outcomes", "planned", "plans"):
            db.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
        db.commit()
    finally:
        db.close()
