"""Response cache: one entry per (request, provider, sample index), shared by every process on one store.

The run store (llmjury.store) holds it: a SQLite file in WAL mode on one machine (the default), or
PostgreSQL for many. Reads happen where they are asked for; writes go through a `BatchWriter`, off
the engine loop and many to a transaction, and return a future that completes once committed.
Recordings shipped with the suite are JSONL shards, one entry a line, so they
review well in a diff and load with one pass of `json.loads`.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import closing
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from llmjury.chat import Sample
from llmjury.running.leases import HOST, LEASE_S, Heartbeat, holder_alive
from llmjury.running.unsaved import AnswerRow, UnsavedAnswers, hand_over
from llmjury.store.database import Database
from llmjury.store.location import StoreLocation
from llmjury.store.schema import ensure_schema, store_id
from llmjury.store.sqlite import SqliteDatabase
from llmjury.store.writer import BatchWriter

#: A stored sample as the store holds it: its JSON, and the run that wrote it.
StoredRow = tuple[str, str]
#: The holder `SampleStore.claim` names for a key whose outcome is already committed.
ENDED = "(ended)"


class CacheMode(StrEnum):
    """VCR-style record modes."""

    REPLAY = "replay"  # never call out; a miss fails the case
    RECORD = "record"  # call on a miss, keep what came back
    REFRESH = "refresh"  # call again once per run, overwrite
    OFF = "off"  # nothing kept: the run shares its answers through a scratch store, then deletes it


@dataclass(frozen=True)
class Watched:
    """A waited key's state in one look: its stored row, whether a live owner holds its claim, and
    whether this run ended its call unanswered (a refusal, a failure)."""

    row: StoredRow | None
    held: bool
    ended: bool


@dataclass
class Claimed:
    """What a claim found: keys another live owner holds (with that owner) or whose outcome is
    already committed (ENDED), and keys this owner took over from a dead owner that had started
    their calls (with that owner): those may be paid twice."""

    held: dict[str, str] = field(default_factory=dict)
    taken_over: dict[str, str] = field(default_factory=dict)


class SampleStore:
    """Persistent key → `Sample` map; safe for concurrent processes, runs and hosts."""

    def __init__(self, location: StoreLocation, recordings: Iterable[Path] = (), *,
                 lease_s: float = LEASE_S, unsaved: Path | None = None) -> None:
        """`unsaved`: the folder of this machine that keeps answers whose writes failed (the store
        stayed out of reach), handed to the store here, before anything else (llmjury.running.unsaved)."""
        self.location, self.lease_s = location, lease_s
        self._lock = threading.Lock()
        self._db = location.open()
        ensure_schema(self._db)
        self._writer = BatchWriter(location.open, "llmjury-cache-writer")
        self.unsaved = UnsavedAnswers(unsaved, store_id(self._db), str(self._db)) if unsaved is not None else None
        #: How many answers an earlier run could not store, and this one handed to the store.
        self.recovered = 0
        if self.unsaved is not None:
            try:
                self.recovered = hand_over(self.unsaved.folder, lambda rows: self._writer.submit(
                    lambda db: store_samples(db, rows, overwrite=False)).result())
            except BaseException:
                self._writer.close()
                self._db.close()
                raise
        self._owners: set[str] = set()
        self._heartbeat: Heartbeat | None = None
        self._recorded: dict[str, str] = {}
        for shard in recordings:
            self._recorded.update(_read_shard(shard))

    def get(self, key: str, *, written_by: str | None = None) -> Sample | None:
        """The stored sample, or None; with `written_by`, only entries this run wrote count."""
        return self.sample_of(key, self.rows([key]).get(key), written_by)

    def rows(self, keys: Sequence[str]) -> dict[str, StoredRow]:
        """The stored rows (sample JSON, the run that wrote it) of `keys`, in one statement: a
        replayed run's lookups come in one round trip per turn of the engine's loop, not one each."""
        with self._lock:
            if len(keys) == 1:
                found = self._db.execute("SELECT key, sample, run_id FROM samples WHERE key = ?", (keys[0],))
            else:
                wanted, param = self._db.keys(keys)
                found = self._db.execute(f"SELECT key, sample, run_id FROM samples WHERE key IN ({wanted})", (param,))
        return {key: (sample, run_id) for key, sample, run_id in found}

    def sample_of(self, key: str, row: StoredRow | None, written_by: str | None = None) -> Sample | None:
        """A stored row's sample (with `written_by`, only if this run wrote it), else a recording's."""
        if row is not None and (written_by is None or row[1] == written_by):
            return Sample.model_validate_json(row[0])
        if written_by is None and key in self._recorded:
            return Sample.model_validate_json(self._recorded[key])
        return None

    def answer(self, key: str, row: StoredRow | None, run_id: str, fresh: bool) -> tuple[Sample, bool] | None:
        """The answer a call of `run_id` may take from `key`'s row (`fresh`: a role under test, refresh
        mode, only one this very run wrote, maybe in another process), and whether an earlier run wrote
        it (a replay; an answer another process of this run paid for is not one)."""
        sample = self.sample_of(key, row, run_id if fresh else None)
        return None if sample is None else (sample, row is None or row[1] != run_id)

    def put(self, key: str, provider: str, task: str, request_json: str, sample: Sample,
            run_id: str) -> Future[None]:
        """Store one successful sample (errors are never cached) and end any claim on its key; the
        future completes once the entry is committed."""
        row: AnswerRow = (key, provider, task, request_json, sample.model_dump_json(), run_id, time.time())
        written = self._writer.submit(lambda db: store_samples(db, [row]), urgent=True)
        return written if self.unsaved is None else self.unsaved.keep_if_failed(row, written)

    # -- claims: one process fetches a sample the others are about to ask for too ------------------
    def claim(self, keys: Sequence[str], owner: str, *, run_id: str, any_run: bool = True) -> Future[Claimed]:
        """Lease the fetching of `keys` to `owner`, in one statement in key order (so two claimants
        never wait on each other's rows). A live lease of any run is honoured; an expired one, or
        one of a process of this machine that is gone, is taken over. Keys whose outcome is already
        committed come back as ENDED (an answer, or this run's refusal or failure; with `any_run`
        an answer of any run counts): a process that looked a key up just before another committed
        it reads that outcome, and does not pay for the call again."""
        ordered = sorted(set(keys))
        pid = os.getpid()
        if not ordered:
            done: Future[Claimed] = Future()
            done.set_result(Claimed())
            return done
        self._hold(owner)

        def write(db: Database) -> Claimed:
            wanted, param = db.keys(ordered)
            # A lease run out is taken over; its owner is named only if it had started the call
            # (the call may have been paid, and is paid again here).
            taken: dict[str, str | None] = dict(db.execute(
                f"INSERT INTO claims (key, owner, expires, pid, host, taken_from, started) "
                f"SELECT key, ?, {db.now} + ?, ?, ?, NULL, 0 FROM ({wanted}) AS wanted WHERE true ORDER BY key "
                "ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, expires = excluded.expires, "
                "pid = excluded.pid, host = excluded.host, started = 0, taken_from = CASE WHEN claims.owner "
                "<> excluded.owner AND claims.started = 1 THEN claims.owner END "
                f"WHERE claims.owner = excluded.owner OR claims.expires < {db.now} RETURNING key, taken_from",
                (owner, self.lease_s, pid, HOST, param)))
            found = Claimed({}, {key: was for key, was in taken.items() if was is not None})
            for key, holder, holder_pid, host, started in db.execute(
                    f"SELECT key, owner, pid, host, started FROM claims WHERE key IN ({wanted}) AND owner <> ?",
                    (param, owner)):
                if holder_alive(holder_pid, host):
                    found.held[key] = holder
                    continue
                db.execute(f"UPDATE claims SET owner = ?, expires = {db.now} + ?, pid = ?, host = ?, taken_from = ?, "
                           "started = 0 WHERE key = ? AND owner = ?",
                           (owner, self.lease_s, pid, HOST, holder if started else None, key, holder))
                if started:
                    found.taken_over[key] = holder
            ended = [row[0] for row in db.execute(
                f"SELECT key FROM samples WHERE key IN ({wanted}) AND (run_id = ? OR ?) "
                f"UNION SELECT key FROM unanswered WHERE key IN ({wanted}) AND run_id = ?",
                (param, run_id, any_run, param, run_id))]
            if ended:
                ended_in, ended_param = db.keys(ended)
                db.execute(f"DELETE FROM claims WHERE owner = ? AND key IN ({ended_in})", (owner, ended_param))
                for key in ended:
                    found.held[key] = ENDED
                    found.taken_over.pop(key, None)
            return found

        return self._writer.submit(write)

    def started(self, keys: Sequence[str], owner: str) -> Future[None]:
        """Mark `owner`'s calls for `keys` under way, before they are sent: if `owner` dies, whoever
        takes them over knows they may have been paid (the mark rides in the writer's next transaction)."""
        rows = [(key, owner) for key in keys]
        return self._writer.submit(lambda db: db.executemany(
            "UPDATE claims SET started = 1 WHERE key = ? AND owner = ?", rows), urgent=True)

    def _hold(self, owner: str) -> None:
        """Keep `owner`'s leases alive from its first claim until the store closes."""
        if owner in self._owners:
            return
        self._owners.add(owner)
        if self._heartbeat is None:
            self._heartbeat = Heartbeat(self._renew, self.lease_s)

    def _renew(self) -> Future[None]:
        owners, lease = sorted(self._owners), self.lease_s

        def write(db: Database) -> None:
            for owner in owners:
                db.execute(f"UPDATE claims SET expires = {db.now} + ? WHERE owner = ?", (lease, owner))

        return self._writer.submit(write)

    def holder(self, key: str) -> str | None:
        """Who holds a live lease on `key`, if anyone: not run out, and not a process of this machine that is gone."""
        with self._lock:
            rows = self._db.execute(f"SELECT owner, expires > {self._db.now}, pid, host FROM claims WHERE key = ?",
                                    (key,))
        if not rows or not rows[0][1] or not holder_alive(rows[0][2], rows[0][3]):
            return None
        return str(rows[0][0])

    def watch(self, keys: Sequence[str], run_id: str) -> dict[str, Watched]:
        """The state of `keys` for processes waiting on others' calls, in one statement."""
        with self._lock:
            wanted, param = self._db.keys(keys)
            found = self._db.execute(
                f"SELECT wanted.key, samples.sample, samples.run_id, claims.expires > {self._db.now}, claims.pid, "
                f"claims.host, unanswered.key FROM ({wanted}) AS wanted "
                "LEFT JOIN samples ON samples.key = wanted.key LEFT JOIN claims ON claims.key = wanted.key "
                "LEFT JOIN unanswered ON unanswered.key = wanted.key AND unanswered.run_id = ?", (param, run_id))
        return {key: Watched(None if sample is None else (sample, written), bool(live) and holder_alive(pid, host),
                             ended is not None)
                for key, sample, written, live, pid, host, ended in found}

    def release(self, keys: Iterable[str], owner: str) -> Future[None]:
        """End `owner`'s claims on `keys` unanswered (a cancelled fetch: the waiting processes fetch themselves)."""
        rows = [(k, owner) for k in keys]

        def write(db: Database) -> None:
            db.executemany("DELETE FROM claims WHERE key = ? AND owner = ?", rows)
            db.notify_ended([key for key, _ in rows])

        return self._writer.submit(write)

    def settle(self, ended: Mapping[str, Sample | str], owner: str, run_id: str) -> Future[None]:
        """End `owner`'s claims on keys whose call ended without a sample to cache: a refused or empty
        answer (a Sample) or a failure (its cause). The run's other processes waiting on those keys
        read the outcome (`unanswered`) instead of paying for the same call again; the claim ends in
        the same transaction, so no reader finds neither. Later runs ask again."""
        rows = [(key, run_id, outcome.model_dump_json() if isinstance(outcome, Sample) else None,
                 outcome if isinstance(outcome, str) else None) for key, outcome in ended.items()]

        def write(db: Database) -> None:
            db.executemany("INSERT INTO unanswered VALUES (?, ?, ?, ?) ON CONFLICT (key, run_id) DO UPDATE SET "
                           "sample = excluded.sample, error = excluded.error", rows)
            db.executemany("DELETE FROM claims WHERE key = ? AND owner = ?", [(key, owner) for key in ended])
            db.notify_ended(list(ended))

        return self._writer.submit(write, urgent=True)

    def unanswered(self, key: str, run_id: str) -> Sample | str | None:
        """How another process of this run ended its call for `key` without a cached sample, if it did."""
        with self._lock:
            rows = self._db.execute("SELECT sample, error FROM unanswered WHERE key = ? AND run_id = ?", (key, run_id))
        if not rows:
            return None
        return Sample.model_validate_json(rows[0][0]) if rows[0][0] is not None else str(rows[0][1])

    def __len__(self) -> int:
        with self._lock:
            ((count,),) = self._db.execute("SELECT COUNT(*) FROM samples")
        return int(count) + len(self._recorded)

    def export(self, destination: Path, *, run_id: str | None = None) -> int:
        """Write the store's entries (optionally one run's) as a JSONL shard, sorted by key."""
        query = "SELECT key, provider, task, request, sample FROM samples"
        params: tuple[str, ...] = ()
        if run_id is not None:
            query += " WHERE run_id = ?"
            params = (run_id,)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY key", params)
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
        """Stop renewing leases, commit the queued writes, then close."""
        if self._heartbeat is not None:
            self._heartbeat.stop()
        self._writer.close()
        with self._lock:
            self._db.close()


def store_samples(db: Database, rows: Sequence[AnswerRow], *, overwrite: bool = True) -> None:
    """Write answers (key, provider, task, request, sample, run_id, created) and end the claims on
    their keys, in the caller's transaction; without `overwrite`, a key already stored keeps its answer."""
    conflict = ("DO UPDATE SET provider = excluded.provider, task = excluded.task, request = excluded.request, "
                "sample = excluded.sample, run_id = excluded.run_id, created = excluded.created"
                if overwrite else "DO NOTHING")
    db.executemany(f"INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) {conflict}", rows)
    db.executemany("DELETE FROM claims WHERE key = ?", [(row[0],) for row in rows])
    db.notify_ended([row[0] for row in rows])


def forget_unanswered(location: StoreLocation, run_id: str) -> None:
    """Delete a finished run's unanswered outcomes: only that run's processes read them."""
    if location.kind == "sqlite" and not location.path.exists():
        return
    db = location.open()
    try:
        ensure_schema(db)
        db.execute("DELETE FROM unanswered WHERE run_id = ?", (run_id,))
    finally:
        db.close()


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
    made = SqliteDatabase(tmp)
    ensure_schema(made)
    made.close()
    columns = "key, provider, task, request, sample, run_id, created"
    with closing(sqlite3.connect(tmp)) as db:
        db.execute("ATTACH DATABASE ? AS source", (str(source),))
        with db:  # one transaction: one snapshot of the source
            db.execute(f"INSERT INTO samples ({columns}) SELECT {columns} FROM source.samples")
        db.execute("DETACH DATABASE source")
        (count,) = db.execute("SELECT COUNT(*) FROM samples").fetchone()
    for leftover in tmp.parent.glob(tmp.name + "-*"):  # WAL files of the made copy
        leftover.unlink(missing_ok=True)
    tmp.replace(destination)
    return int(count)


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
