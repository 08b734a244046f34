"""The run board: each process's planning progress and spend, published where every process reads it.

xdist has no channel from a worker to the controller while a test (or collection) runs, and a run
may span machines (CI shards, teammates on one PostgreSQL store), so each process publishes its
figures to the run store (llmjury.store): one row per process in `tallies`, and the spend of the
run group (`--llm-run-group`) as one row in `spend`, added to atomically. The budget reads the
group's spend from it, and the display (llmjury.session.progress_display) shows the run's totals.
Under `-n 0` the only process publishes and reads the same board: one code path.

Publishing is throttled (at most every `PUBLISH_EVERY_S`), except that with a budget every paid
call adds its cost to the spend row, committed, before it releases its concurrency slot, so that no
process starts a paid call after the group's spend reached the budget (see `Meter.admit`).
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from llmjury.chat import Sample
from llmjury.pricing import PriceTable
from llmjury.running.budget import Budget, price_of, token_rate
from llmjury.store.database import Database, Row
from llmjury.store.location import StoreLocation
from llmjury.store.outage import StoreOutageError
from llmjury.store.schema import ensure_schema
from llmjury.store.writer import BatchWriter

T = TypeVar("T")
NO_ROWS: list[Row] = []

#: How often a process rewrites its board file at most while nothing forces it (no budget).
PUBLISH_EVERY_S = 0.5


@dataclass
class Tally:
    """One process's figures, as published on the board (plain JSON)."""

    worker: str
    total: int = 0  # cases (and planned test bodies) this process plans
    done: int = 0
    finished: bool = False  # its planning phase is over
    started: float = 0.0  # wall-clock time its planning began
    calls: int = 0  # fresh provider calls (cache hits are not calls)
    in_flight: int = 0  # fresh calls started and not yet ended
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    refused_calls: int = 0  # paid calls the budget did not let start
    unpriced: list[str] = field(default_factory=list)  # providers called without a price (counted as $0)


class JudgingMark:
    """A file an xdist worker leaves when it selected llmjury's tests, whatever the progress setting:
    the controller collects nothing itself, and must know whether a run stopped before any test
    reported was one of llmjury's (a report) or a project's own tests (none)."""

    @staticmethod
    def _path(run_id: str) -> Path:
        return Path(tempfile.gettempdir()) / f"llmjury-judging-{run_id}"

    def mark(self, run_id: str) -> None:
        self._path(run_id).touch()

    def marked(self, run_id: str) -> bool:
        return self._path(run_id).exists()

    def clear(self, run_id: str) -> None:
        self._path(run_id).unlink(missing_ok=True)


JUDGING = JudgingMark()


class Board:
    """The tallies of a run's processes, and its group's spend, in the run store."""

    def __init__(self, location: StoreLocation, run_id: str, group: str | None = None) -> None:
        self.run_id, self.group = run_id, group or run_id
        self._lock = threading.Lock()
        self._db: Database = location.open()
        ensure_schema(self._db)
        self._writer = BatchWriter(location.open, "llmjury-board-writer")
        self._closed = False

    def publish(self, tally: Tally, spent_usd: float = 0.0) -> None:
        """Replace this process's row, and add `spent_usd` to the group's spend, in one transaction;
        returns once committed."""
        row = (self.group, f"{self.run_id}/{tally.worker}", json.dumps(asdict(tally)))
        group = self.group

        def write(db: Database) -> None:
            db.execute("INSERT INTO tallies VALUES (?, ?, ?) ON CONFLICT (run_group, worker) DO UPDATE SET "
                       "payload = excluded.payload", row)
            if spent_usd:
                db.execute("INSERT INTO spend VALUES (?, ?) ON CONFLICT (run_group) DO UPDATE SET "
                           "usd = spend.usd + excluded.usd", (group, spent_usd))

        self._while_reachable(lambda: self._writer.submit(write).result(), None)

    def _while_reachable(self, use: Callable[[], T], otherwise: T) -> T:
        """A store given up on (llmjury.store.outage) stops the run, which reports what it finished:
        the board then shows and adds no more, rather than fail every hook that reads it."""
        try:
            return use()
        except StoreOutageError:
            return otherwise

    def read(self, *, skip: str | None = None, group: bool = False) -> list[Tally]:
        """The run's processes' last published tallies (but `skip`'s; with `group`, every run's of
        the group), in worker order."""
        with self._lock:
            if self._closed:
                return []
            rows = self._while_reachable(lambda: self._db.execute(
                "SELECT worker, payload FROM tallies WHERE run_group = ? ORDER BY worker", (self.group,)), NO_ROWS)
        mine = f"{self.run_id}/"
        return [Tally(**json.loads(payload)) for worker, payload in rows
                if (group or worker.startswith(mine)) and worker != f"{mine}{skip}"]

    def spent(self) -> float:
        """The group's spend so far, every process and run of it on this store."""
        with self._lock:
            rows = self._while_reachable(lambda: self._db.execute(
                "SELECT usd FROM spend WHERE run_group = ?", (self.group,)), NO_ROWS)
        return float(rows[0][0]) if rows else 0.0

    def remove(self) -> None:
        """The run is over: its tallies go (and the spend, of a group that was this run alone)."""
        run, group = f"{self.run_id}/%", self.group
        own = group == self.run_id

        def write(db: Database) -> None:
            db.execute("DELETE FROM tallies WHERE run_group = ? AND worker LIKE ?", (group, run))
            if own:
                db.execute("DELETE FROM spend WHERE run_group = ?", (group,))

        self._while_reachable(lambda: self._writer.submit(write).result(), None)

    def close(self) -> None:
        self._writer.close()
        with self._lock:
            self._closed = True
            self._db.close()


class Meter:
    """This process's counters: the planner reports cases, the engine reports each fresh call
    (`admit` before it starts, `paid` once its usage is known; the engine's `llmjury.meter.CallMeter`).
    Thread-safe: the engine loop's thread and pytest's main thread both report."""

    def __init__(self, worker: str = "main", board: Board | None = None, prices: PriceTable | None = None,
                 budget: Budget | None = None) -> None:
        self.tally = Tally(worker=worker)
        self.board, self.budget = board, budget
        self._prices = budget.prices if budget is not None else prices
        self._rates: dict[str, tuple[float, float] | None] = {}
        self._lock = threading.Lock()
        self._published = 0.0
        self._flush: threading.Timer | None = None  # a throttled write, made once the throttle allows
        self._closed = False  # the session is over: the board may be gone

    # -- the planner's side ----------------------------------------------------------------------
    def planning(self, total: int) -> None:
        """This process starts planning `total` items (0 when its share is empty: it says so, so the
        controller knows it is not still coming)."""
        with self._lock:
            self.tally.total += total
            self.tally.started = self.tally.started or time.time()
            self._publish(force=True)

    def case_done(self) -> None:
        """One planned item ended; the last one ends this process's planning (always written)."""
        with self._lock:
            t = self.tally
            t.done += 1
            t.finished = t.finished or t.done >= t.total
            self._publish(force=t.finished)

    def planned(self) -> None:
        with self._lock:
            self.tally.finished = True
            self._publish(force=True)

    def close(self) -> None:
        """Drop a pending throttled write and write no more: the board may be gone once the session
        ends, while a call that was in flight (or cancelled) still reports on the engine's thread."""
        with self._lock:
            self._closed = True
            if self._flush is not None:
                self._flush.cancel()
                self._flush = None

    # -- the engine's side --------------------------------------------------------------------
    @contextmanager
    def flight(self, provider: str) -> Iterator[None]:
        """A fresh call to `provider`: admitted by the budget (`admit` raises when refused), then
        counted in flight until it ends, however it ends."""
        self.admit(provider)
        with self._lock:
            self.tally.in_flight += 1
            self._publish()
        try:
            yield
        finally:
            with self._lock:
                self.tally.in_flight -= 1
                self._publish()

    def admit(self, provider: str) -> None:
        """Raise BudgetExhaustedError when a paid call to `provider` may not start: the group's
        spend in the store (every process's, on every machine sharing it) reached the budget.

        Bound: every admitted call commits its cost before its concurrency slot is released, so
        the spend exceeds the budget by at most the calls in flight when it was reached (at most
        one per concurrency slot of the group's paid providers, less the call that reached it)."""
        if self.budget is None or self.budget.free(provider):
            return
        spent = self.board.spent() if self.board is not None else self.tally.cost_usd
        with self._lock:
            refusal = self.budget.refusal(provider, spent)
            if refusal is not None:
                self.tally.refused_calls += 1
                self._publish(force=True)
        if refusal is not None:
            raise refusal

    def paid(self, provider: str, samples: Sequence[Sample]) -> None:
        """A fresh call answered: count it, its tokens and its estimated cost."""
        prompt = sum(s.usage.prompt_tokens for s in samples)
        completion = sum(s.usage.completion_tokens for s in samples)
        rate = self._rate(provider)
        cost = price_of(rate, prompt, completion)
        with self._lock:
            t = self.tally
            t.calls += 1
            t.prompt_tokens += prompt
            t.completion_tokens += completion
            t.cost_usd += cost
            if rate is None and provider not in t.unpriced:
                t.unpriced.append(provider)
            # With a budget, a paid call's cost is in the group's spend before its slot is free (the bound).
            self._publish(force=self.budget is not None and rate != (0.0, 0.0),
                          spent_usd=cost if self.budget is not None else 0.0)

    def spent(self, provider: str, usd: float) -> None:
        """Dollars reserved for (or settled on) work in a provider's batch: in the group's spend at once."""
        with self._lock:
            self.tally.cost_usd += usd
            self._publish(force=True, spent_usd=usd if self.budget is not None else 0.0)

    def _rate(self, provider: str) -> tuple[float, float] | None:
        if self.budget is not None:
            return self.budget.rate(provider)
        if provider not in self._rates:
            self._rates[provider] = token_rate(self._prices, provider) if self._prices is not None else None
        return self._rates[provider]

    def _publish(self, force: bool = False, spent_usd: float = 0.0) -> None:
        """Write the tally to the board (the caller holds the lock): now, or if the last write is old;
        `spent_usd` (a forced write's) goes into the group's spend with it."""
        if self.board is None or self._closed:
            return
        now = time.monotonic()
        wait = PUBLISH_EVERY_S - (now - self._published)
        if force or wait <= 0:
            if self._flush is not None:
                self._flush.cancel()
                self._flush = None
            self._published = now
            self.board.publish(self.tally, spent_usd)
        elif self._flush is None:
            # A skipped write is made once the throttle allows it: a quiet spell (a slow answer, the
            # last case of a share) never leaves the board behind this process's own figures.
            # Never longer than the longest wait a thread can make: a larger one (an infinite
            # throttle) would fail in the timer's thread instead of waiting.
            self._flush = threading.Timer(min(wait, threading.TIMEOUT_MAX), self._flush_now)
            self._flush.daemon = True
            self._flush.start()

    def _flush_now(self) -> None:
        with self._lock:
            if self._flush is not None:
                self._flush = None
                self._publish(force=True)

    def as_dict(self) -> dict[str, Any]:
        with self._lock:
            return asdict(self.tally)


@dataclass(frozen=True)
class RunTotals:
    """The run's figures summed over every process's tally."""

    workers: int
    total: int
    done: int
    finished: int
    calls: int
    in_flight: int
    tokens: int
    cost_usd: float
    refused_calls: int
    started: float
    unpriced: tuple[str, ...] = ()

    @classmethod
    def of(cls, tallies: Sequence[Tally]) -> RunTotals:
        starts = [t.started for t in tallies if t.started]
        return cls(workers=len(tallies), total=sum(t.total for t in tallies), done=sum(t.done for t in tallies),
                   finished=sum(t.finished for t in tallies), calls=sum(t.calls for t in tallies),
                   in_flight=sum(t.in_flight for t in tallies),
                   tokens=sum(t.prompt_tokens + t.completion_tokens for t in tallies),
                   cost_usd=sum(t.cost_usd for t in tallies), refused_calls=sum(t.refused_calls for t in tallies),
                   started=min(starts, default=0.0),
                   unpriced=tuple(sorted({p for t in tallies for p in t.unpriced})))

    def eta_s(self, now: float) -> float | None:
        """Seconds left at the rate so far; None before the first case is done."""
        if not self.done or not self.started:
            return None
        return max(0.0, (now - self.started) * (self.total - self.done) / self.done)

    def figures(self, live: bool = False) -> str:
        """Calls (with those in flight while it runs), tokens, estimated cost, refusals."""
        flying = f" ({self.in_flight} in flight)" if live else ""
        text = f"{self.calls:,} calls{flying}, {self.tokens:,} tokens, est. ${self.cost_usd:.4f}"
        return text + (f", {self.refused_calls} refused by the budget" if self.refused_calls else "")

    def line(self, now: float) -> str:
        """A plain log line: cases done of total, calls and those in flight, tokens, estimated cost, ETA."""
        share = f" ({100 * self.done // self.total}%)" if self.total else ""
        eta = self.eta_s(now)
        return (f"llmjury planning: {self.done}/{self.total} cases{share}, {self.figures(live=True)}, "
                f"ETA {'?' if eta is None else _duration(eta)}")

    def final_line(self, now: float) -> str:
        took = _duration(now - self.started) if self.started else "0s"
        return f"llmjury planned: {self.done}/{self.total} cases, {self.figures()}, in {took}"


def _duration(seconds_left: float) -> str:
    whole = round(seconds_left)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
