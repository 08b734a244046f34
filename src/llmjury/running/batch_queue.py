"""The Batch API lane's state in the run store: queued requests and the batches that carry them.

Every row outlives the process and the run that wrote it, so a run killed after submitting (or a
CI job that submits and ends on purpose) is resumed by the next run on the same store: it polls
the batches recorded here and sends nothing twice. A batch is recorded as `submitting` before the
provider is asked to create it; a submitter that dies before recording the provider's id leaves a
row whose lease runs out, and the next submitter looks the batch up by its tag (`BatchApi.find`)
instead of creating it again.

Item states: `pending` (queued, in no batch), `packing` (being submitted), `submitted` (inside a
batch), `failed` (sent twice, answered neither time). An answered item leaves the table in the
transaction that stores its answer in the cache.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass

from llmjury.chat import ChatRequest, Sample
from llmjury.running.cache import store_samples
from llmjury.store.database import Database
from llmjury.store.location import StoreLocation
from llmjury.store.schema import ensure_schema
from llmjury.store.writer import BatchWriter

#: A line the batch did not answer is sent once more, then given up on.
ATTEMPTS = 2
#: A batch line's bytes per byte of the stored request (the body adds the model, the line its
#: envelope): an upper estimate, so a packed batch stays under the provider's file cap.
LINE_BYTES_PER_REQUEST_BYTE = 1.5


@dataclass(frozen=True)
class QueuedItem:
    """A request for one sample, as the lane queues it."""

    key: str
    task: str
    request_json: str
    sample_index: int
    est_tokens: int
    reserved_usd: float

    @property
    def request(self) -> ChatRequest:
        return ChatRequest.model_validate_json(self.request_json)


@dataclass(frozen=True)
class Packed:
    """Items taken for one batch, under the job id the batch will be tagged with."""

    job: str
    items: list[QueuedItem]


@dataclass(frozen=True)
class ItemState:
    state: str
    error: str | None


class BatchQueue:
    """The lane's rows, read on the caller's thread and written by a writer thread of their own."""

    def __init__(self, location: StoreLocation) -> None:
        self._lock = threading.Lock()
        self._db = location.open()
        ensure_schema(self._db)
        self._writer = BatchWriter(location.open, "llmjury-batch-writer")

    # -- queueing ----------------------------------------------------------------------------------
    def enqueue(self, provider: str, lane: str, items: Sequence[QueuedItem], run_id: str) -> Future[set[str]]:
        """Queue items (their keys claimed by the caller); the future holds the keys already queued
        (by an earlier run, or another process) or answered: those are neither queued nor paid again."""
        rows = [(i.key, provider, lane, i.task, i.request_json, i.sample_index, i.est_tokens, i.reserved_usd,
                 run_id) for i in items]
        keys = {i.key for i in items}

        def write(db: Database) -> set[str]:
            wanted, param = db.keys(sorted(keys))
            # A line an earlier run gave up on is asked again, as a failed synchronous call is.
            db.execute(f"DELETE FROM batch_items WHERE key IN ({wanted}) AND state = 'failed' AND run_id <> ?",
                       (param, run_id))
            # Queued already, or answered since the caller looked (a batch collected meanwhile): not again.
            queued = {row[0] for row in db.execute(
                f"SELECT key FROM batch_items WHERE key IN ({wanted}) UNION SELECT key FROM samples "
                f"WHERE key IN ({wanted})", (param, param))}
            db.executemany(
                "INSERT INTO batch_items (key, provider, lane, task, request, sample_index, est_tokens, "
                "reserved_usd, state, job, attempts, error, run_id, created) "
                f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', NULL, 0, NULL, ?, {db.now}) "
                "ON CONFLICT (key) DO NOTHING", [row for row in rows if row[0] not in queued])
            return queued

        return self._writer.submit(write)

    def states(self, keys: Sequence[str]) -> dict[str, ItemState]:
        """Where each of `keys` stands (keys no longer queued are absent: answered, or never queued)."""
        if not keys:
            return {}
        with self._lock:
            wanted, param = self._db.keys(keys)
            rows = self._db.execute(f"SELECT key, state, error FROM batch_items WHERE key IN ({wanted})", (param,))
        return {key: ItemState(state, error) for key, state, error in rows}

    def answers(self, keys: Sequence[str]) -> dict[str, Sample]:
        """The cached answers among `keys`."""
        if not keys:
            return {}
        with self._lock:
            wanted, param = self._db.keys(keys)
            rows = self._db.execute(f"SELECT key, sample FROM samples WHERE key IN ({wanted})", (param,))
        return {key: Sample.model_validate_json(sample) for key, sample in rows}

    # -- submitting --------------------------------------------------------------------------------
    def take(self, provider: str, job: str, *, limit: int, max_bytes: int, quiet_s: float, holder: str,
             lease_s: float) -> Packed | None:
        """Take up to `limit` pending items of `provider` (their requests under `max_bytes` in all)
        for a new batch tagged `job`, once the queue holds a full batch or none has been queued for
        `quiet_s` (so a planning phase that is still queueing fills one batch rather than many); None
        when there is nothing to send yet."""

        def write(db: Database) -> Packed | None:
            ((count, size, newest, now),) = db.execute(
                f"SELECT COUNT(*), SUM(LENGTH(request)), MAX(created), {db.now} FROM batch_items "
                "WHERE provider = ? AND state = 'pending' AND lane = 'api'", (provider,))
            full = count >= limit or (size or 0) * LINE_BYTES_PER_REQUEST_BYTE >= max_bytes
            if not count or (not full and now - newest < quiet_s):
                return None
            keys: list[str] = []
            packed_bytes = 0
            for key, length in db.execute(
                    "SELECT key, LENGTH(request) FROM batch_items WHERE provider = ? AND state = 'pending' "
                    "AND lane = 'api' ORDER BY key LIMIT ?", (provider, limit)):
                packed_bytes += int(length * LINE_BYTES_PER_REQUEST_BYTE)
                if keys and packed_bytes > max_bytes:
                    break
                keys.append(key)
            wanted, param = db.keys(keys)
            taken = db.execute(
                f"UPDATE batch_items SET state = 'packing', job = ? WHERE state = 'pending' AND key IN ({wanted}) "
                "RETURNING key, task, request, sample_index, est_tokens, reserved_usd", (job, param))
            if not taken:
                return None
            db.execute(f"INSERT INTO batch_jobs VALUES (?, ?, NULL, 'submitting', ?, ?, {db.now} + ?, {db.now})",
                       (job, provider, len(taken), holder, lease_s))
            return Packed(job, sorted((QueuedItem(*row) for row in taken), key=lambda item: item.key))

        return self._writer.submit(write).result()

    def submitted(self, job: str, remote_id: str) -> None:
        """The provider created the batch: record its id (the crash window closes here)."""

        def write(db: Database) -> None:
            db.execute("UPDATE batch_jobs SET remote_id = ?, state = 'open', holder = NULL WHERE job = ?",
                       (remote_id, job))
            db.execute("UPDATE batch_items SET state = 'submitted' WHERE job = ?", (job,))

        self._writer.submit(write).result()

    def unpack(self, job: str) -> None:
        """The batch was never created (the provider refused it for now): its items wait again."""

        def write(db: Database) -> None:
            db.execute("UPDATE batch_items SET state = 'pending', job = NULL WHERE job = ?", (job,))
            db.execute("DELETE FROM batch_jobs WHERE job = ?", (job,))

        self._writer.submit(write).result()

    def stranded(self, provider: str, holder: str, lease_s: float) -> list[Packed]:
        """Batches whose submitter died between asking for them and recording them (their lease ran
        out), taken over by `holder` to be looked up by their tag."""

        def write(db: Database) -> list[Packed]:
            jobs = [row[0] for row in db.execute(
                f"UPDATE batch_jobs SET holder = ?, expires = {db.now} + ? WHERE provider = ? AND state = 'submitting' "
                f"AND expires < {db.now} RETURNING job", (holder, lease_s, provider))]
            found = []
            for job in jobs:
                rows = db.execute("SELECT key, task, request, sample_index, est_tokens, reserved_usd FROM batch_items "
                                  "WHERE job = ? ORDER BY key", (job,))
                found.append(Packed(job, [QueuedItem(*row) for row in rows]))
            return found

        return self._writer.submit(write).result()

    # -- collecting --------------------------------------------------------------------------------
    def to_poll(self, provider: str, holder: str, lease_s: float) -> list[tuple[str, str]]:
        """Open batches of `provider` no other live process polls, now polled by `holder`: (job, remote id)."""

        def write(db: Database) -> list[tuple[str, str]]:
            return [(job, remote) for job, remote in db.execute(
                f"UPDATE batch_jobs SET holder = ?, expires = {db.now} + ? WHERE provider = ? AND state = 'open' "
                f"AND (holder IS NULL OR holder = ? OR expires < {db.now}) RETURNING job, remote_id",
                (holder, lease_s, provider, holder))]

        return self._writer.submit(write).result()

    def collected(self, job: str, provider: str, answers: Mapping[str, Sample], failures: Mapping[str, str]
                  ) -> list[tuple[QueuedItem, str]]:
        """An ended batch: store its answers in the cache (ending their claims and their items), send
        each unanswered line once more and give up on one already sent twice. Returns the answered
        items with the run that queued each (for the budget to settle)."""
        created = time.time()

        def write(db: Database) -> list[tuple[QueuedItem, str]]:
            rows = db.execute("SELECT key, task, request, sample_index, est_tokens, reserved_usd, run_id, attempts "
                              "FROM batch_items WHERE job = ?", (job,))
            answered = [row for row in rows if row[0] in answers]
            store_samples(db, [(key, provider, task, request, answers[key].model_dump_json(), run_id, created)
                               for key, task, request, *_, run_id, _ in answered])
            db.executemany("DELETE FROM batch_items WHERE key = ?", [(row[0],) for row in answered])
            for key, *_, attempts in rows:
                if key in answers:
                    continue
                error = failures.get(key, "the batch returned no line for it")
                state = "pending" if attempts + 1 < ATTEMPTS else "failed"
                db.execute("UPDATE batch_items SET state = ?, job = NULL, attempts = ?, error = ? WHERE key = ?",
                           (state, attempts + 1, error, key))
            db.execute("UPDATE batch_jobs SET state = 'done', holder = NULL WHERE job = ?", (job,))
            return [(QueuedItem(*row[:6]), str(row[6])) for row in answered]

        return self._writer.submit(write).result()

    def release(self, holder: str) -> None:
        """`holder` ends: its polls are free at once, and a submission it left unrecorded is looked
        up by the next submitter at once (its lease is over)."""
        self._writer.submit(lambda db: db.execute(
            f"UPDATE batch_jobs SET holder = NULL, expires = {db.now} WHERE holder = ?", (holder,))).result()

    def renew(self, holder: str, lease_s: float) -> None:
        """Keep `holder`'s submissions and polls its own while it lives."""
        self._writer.submit(lambda db: db.execute(
            f"UPDATE batch_jobs SET expires = {db.now} + ? WHERE holder = ?", (lease_s, holder)))

    # -- the file lane and the run's end -----------------------------------------------------------
    def pending(self, lane: str | None = None) -> dict[str, dict[str, int]]:
        """Queued items by provider and state (of one lane, or all)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT provider, state, COUNT(*) FROM batch_items " + ("WHERE lane = ? " if lane else "")
                + "GROUP BY provider, state ORDER BY provider, state", (lane,) if lane else ())
        found: dict[str, dict[str, int]] = {}
        for provider, state, count in rows:
            found.setdefault(provider, {})[state] = int(count)
        return found

    def queued_for_file(self) -> list[tuple[str, QueuedItem]]:
        """The file lane's pending items, with their provider, in key order."""
        with self._lock:
            rows = self._db.execute("SELECT provider, key, task, request, sample_index, est_tokens, reserved_usd "
                                    "FROM batch_items WHERE lane = 'file' AND state = 'pending' ORDER BY key")
        return [(provider, QueuedItem(*rest)) for provider, *rest in rows]

    def import_answers(self, answers: Mapping[str, Sample]) -> set[str]:
        """Answers read from a batch output file, stored for the queued items they answer; their keys."""
        created = time.time()

        def write(db: Database) -> set[str]:
            rows = []
            for key, sample in answers.items():
                for provider, task, request, run_id in db.execute(
                        "SELECT provider, task, request, run_id FROM batch_items WHERE key = ?", (key,)):
                    rows.append((key, provider, task, request, sample.model_dump_json(), run_id, created))
            store_samples(db, rows)
            db.executemany("DELETE FROM batch_items WHERE key = ?", [(row[0],) for row in rows])
            return {row[0] for row in rows}

        return self._writer.submit(write).result()

    def close(self) -> None:
        self._writer.close()
        with self._lock:
            self._db.close()
