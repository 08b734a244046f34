"""Response cache: one entry per (request, provider, sample index), shared by every xdist worker.

SQLite in WAL mode is the store: it ships with Python, lets many processes read while one
writes, commits each entry atomically and survives `kill -9` (a transaction is either in the
WAL or not). Reads happen where they are asked for; writes go through a `BatchWriter`, off the
engine loop and many to a transaction, and return a future that completes once committed.
Recordings shipped with the suite are JSONL shards, one entry a line, so they
review well in a diff and load with one pass of `json.loads`.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import closing
from enum import StrEnum
from pathlib import Path

from llmjury.chat import Sample
from llmjury.writer import BatchWriter, connect

SCHEMA = """
CREATE TABLE IF NOT EXISTS samples (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    task TEXT NOT NULL,
    request TEXT NOT NULL,
    sample TEXT NOT NULL,
    run_id TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS unanswered (
    key TEXT NOT NULL,
    run_id TEXT NOT NULL,
    sample TEXT,
    error TEXT,
    PRIMARY KEY (key, run_id)
);
CREATE TABLE IF NOT EXISTS claims (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires REAL NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL
);
"""
#: This machine, in claims: a claimant's pid says something only on the host it runs on.
HOST = socket.gethostname()
#: The holder `SampleStore.claim` names for a key whose outcome the run has already committed.
ENDED = "(ended)"


class CacheMode(StrEnum):
    """VCR-style record modes."""

    REPLAY = "replay"  # never call out; a miss fails the case
    RECORD = "record"  # call on a miss, keep what came back
    REFRESH = "refresh"  # call again once per run, overwrite
    OFF = "off"  # nothing kept: the run shares its answers through a scratch store, then deletes it


class SampleStore:
    """Persistent key → `Sample` map; safe for concurrent processes."""

    def __init__(self, path: Path, recordings: Iterable[Path] = ()) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = connect(path)
        self._db.execute("BEGIN IMMEDIATE")
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(claims)")}
        if columns and "pid" not in columns:  # a cache from before claims named their process
            self._db.execute("DROP TABLE claims")
        self._db.execute("COMMIT")
        self._db.executescript(SCHEMA)
        self._writer = BatchWriter(path, "llmjury-cache-writer")
        self._recorded: dict[str, str] = {}
        for shard in recordings:
            self._recorded.update(_read_shard(shard))

    def get(self, key: str, *, written_by: str | None = None) -> Sample | None:
        """The stored sample, or None; with `written_by`, only entries this run wrote count."""
        with self._lock:
            row = self._db.execute("SELECT sample, run_id FROM samples WHERE key = ?", (key,)).fetchone()
        if row is not None and (written_by is None or row[1] == written_by):
            return Sample.model_validate_json(row[0])
        if written_by is None and key in self._recorded:
            return Sample.model_validate_json(self._recorded[key])
        return None

    def put(self, key: str, provider: str, task: str, request_json: str, sample: Sample,
            run_id: str) -> Future[None]:
        """Store one successful sample (errors are never cached) and end any claim on its key; the
        future completes once the entry is committed."""
        row = (key, provider, task, request_json, sample.model_dump_json(), run_id, time.time())

        def write(db: sqlite3.Connection) -> None:
            db.execute("INSERT OR REPLACE INTO samples VALUES (?, ?, ?, ?, ?, ?, ?)", row)
            db.execute("DELETE FROM claims WHERE key = ?", (key,))

        return self._writer.submit(write)

    # -- claims: one process fetches a sample the others are about to ask for too ------------------
    def claim(self, keys: Sequence[str], owner: str, *, run_id: str, ttl: float) -> Future[dict[str, str]]:
        """Claim the fetching of `keys` for `owner`, in one transaction; the future holds the keys
        another live owner of the same run holds, with that owner, and the keys whose outcome the run
        has already committed (an answer, a refusal, a failure), with ENDED: a process that looked a
        key up just before another committed it must read that outcome, not pay for the call again.
        Claims of other runs (a killed one) and of processes of this machine that are gone (a crashed
        worker) are taken over."""
        pid = os.getpid()

        def write(db: sqlite3.Connection) -> dict[str, str]:
            now = time.time()
            held: dict[str, str] = {}
            for key in keys:
                if db.execute("SELECT 1 FROM samples WHERE key = ? AND run_id = ? UNION ALL "
                              "SELECT 1 FROM unanswered WHERE key = ? AND run_id = ?",
                              (key, run_id, key, run_id)).fetchone() is not None:
                    held[key] = ENDED
                    continue
                row = db.execute("SELECT owner, expires, pid, host FROM claims WHERE key = ?", (key,)).fetchone()
                if row is not None and row[0] != owner and row[0].startswith(run_id + ":") and _live(*row[1:]):
                    held[key] = str(row[0])
                    continue
                db.execute("INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?)", (key, owner, now + ttl, pid, HOST))
            return held

        return self._writer.submit(write)

    def holder(self, key: str) -> str | None:
        """Who holds a live claim on `key`, if anyone: not expired, and not a process that is gone."""
        with self._lock:
            row = self._db.execute("SELECT owner, expires, pid, host FROM claims WHERE key = ?", (key,)).fetchone()
        return None if row is None or not _live(*row[1:]) else str(row[0])

    def release(self, keys: Iterable[str], owner: str) -> Future[None]:
        """End `owner`'s claims on `keys` unanswered (a cancelled fetch: the waiting processes fetch themselves)."""
        rows = [(k, owner) for k in keys]

        def write(db: sqlite3.Connection) -> None:
            db.executemany("DELETE FROM claims WHERE key = ? AND owner = ?", rows)

        return self._writer.submit(write)

    def settle(self, ended: Mapping[str, Sample | str], owner: str, run_id: str) -> Future[None]:
        """End `owner`'s claims on keys whose call ended without a sample to cache: a refused or empty
        answer (a Sample) or a failure (its cause). The run's other processes waiting on those keys
        read the outcome (`unanswered`) instead of paying for the same call again; the claim ends in
        the same transaction, so no reader finds neither. Later runs ask again."""
        rows = [(key, run_id, outcome.model_dump_json() if isinstance(outcome, Sample) else None,
                 outcome if isinstance(outcome, str) else None) for key, outcome in ended.items()]

        def write(db: sqlite3.Connection) -> None:
            db.executemany("INSERT OR REPLACE INTO unanswered VALUES (?, ?, ?, ?)", rows)
            db.executemany("DELETE FROM claims WHERE key = ? AND owner = ?", [(key, owner) for key in ended])

        return self._writer.submit(write)

    def unanswered(self, key: str, run_id: str) -> Sample | str | None:
        """How another process of this run ended its call for `key` without a cached sample, if it did."""
        with self._lock:
            row = self._db.execute("SELECT sample, error FROM unanswered WHERE key = ? AND run_id = ?",
                                   (key, run_id)).fetchone()
        if row is None:
            return None
        return Sample.model_validate_json(row[0]) if row[0] is not None else str(row[1])

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._db.execute("SELECT COUNT(*) FROM samples").fetchone()
        return int(count) + len(self._recorded)

    def export(self, destination: Path, *, run_id: str | None = None) -> int:
        """Write the database's entries (optionally one run's) as a JSONL shard, sorted by key."""
        query = "SELECT key, provider, task, request, sample FROM samples"
        params: tuple[str, ...] = ()
        if run_id is not None:
            query += " WHERE run_id = ?"
            params = (run_id,)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY key", params).fetchall()
        destination.parent.mkdir(parents=True, exist_ok=True)
        tmp = destination.with_suffix(destination.suffix + ".tmp")
        with tmp.open("w", encoding="utf-8") as out:
            for key, provider, task, request, sample in rows:
                line = {"key": key, "provider": provider, "task": task,
                        "request": json.loads(request), "sample": json.loads(sample)}
                out.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
        tmp.replace(destination)
        return len(rows)

    def close(self) -> None:
        """Commit the queued writes, then close."""
        self._writer.close()
        with self._lock:
            self._db.close()


def forget_unanswered(path: Path, run_id: str) -> None:
    """Delete a finished run's unanswered outcomes: only that run's processes read them."""
    if not path.exists():
        return
    with closing(connect(path)) as db:
        db.execute("BEGIN IMMEDIATE")
        if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'unanswered'").fetchone():
            db.execute("DELETE FROM unanswered WHERE run_id = ?", (run_id,))
        db.execute("COMMIT")


def copy_samples(source: Path, destination: Path) -> int:
    """Copy the samples of the cache at `source`, and nothing else, into a new compact file at
    `destination`; return how many. A baseline ships what a later run replays: the run-local tables
    beside the samples (claims, the xdist hand-off) made an offline suite's cache 42 MB with no sample
    in it. Reading inside one transaction gives a consistent copy of a cache that is being written."""
    with closing(sqlite3.connect(source)) as db:
        found = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'samples'").fetchone()
    if found is None:
        raise ValueError(f"{source}: not an llmjury response cache (it has no samples table)")
    destination.parent.mkdir(parents=True, exist_ok=True)
    tmp = destination.with_name(destination.name + ".tmp")
    tmp.unlink(missing_ok=True)
    columns = "key, provider, task, request, sample, run_id, created"
    with closing(sqlite3.connect(tmp)) as db:
        db.executescript(SCHEMA)
        db.execute("ATTACH DATABASE ? AS source", (str(source),))
        with db:  # one transaction: one snapshot of the source
            db.execute(f"INSERT INTO samples ({columns}) SELECT {columns} FROM source.samples")
        db.execute("DETACH DATABASE source")
        (count,) = db.execute("SELECT COUNT(*) FROM samples").fetchone()
    tmp.replace(destination)
    return int(count)


def _live(expires: float, pid: int, host: str) -> bool:
    """A claim still counts until it expires, or at once no longer when its process, on this
    machine, has exited (a worker killed mid-fetch must not hold its keys for the whole TTL)."""
    return expires > time.time() and (host != HOST or process_alive(pid))


def process_alive(pid: int) -> bool:
    """Whether a process of this machine still runs (xdist's local workers are all on it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_shard(path: Path) -> Iterator[tuple[str, str]]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                yield entry["key"], json.dumps(entry["sample"])
            except (json.JSONDecodeError, KeyError) as exc:
                raise ValueError(f"{path}:{number}: not a recording entry ({exc})") from exc


def scratch_path(cache_path: Path, run_id: str) -> Path:
    """Where `--llm-cache off` keeps one run's answers, so xdist workers still share them."""
    return cache_path.with_name(f"scratch-{run_id}.sqlite")


def remove_scratch(cache_path: Path, run_id: str) -> None:
    for path in cache_path.parent.glob(scratch_path(cache_path, run_id).name + "*"):
        path.unlink(missing_ok=True)


def shards(directory: Path | None) -> list[Path]:
    """Every `*.jsonl` recording under `directory`, in a stable order."""
    if directory is None or not directory.is_dir():
        return []
    return sorted(directory.rglob("*.jsonl"))
