"""Live progress of the planning phase across xdist workers, and the run-wide spend the budget reads.

xdist has no channel from a worker to the controller while a test (or collection) runs, so each
process publishes its figures to the run board: a folder under the system's temp dir holding one
small JSON file per process, replaced atomically (a reader sees the old file or the new one,
never half of one). A controller thread reads the board and prints one updating bar on a
terminal, or a plain line every `--llm-progress-interval` seconds in a CI log. Under `-n 0` the
only process publishes and reads the same board: one code path.

Publishing is throttled (at most every `PUBLISH_EVERY_S`), except that with a budget every paid
call publishes its cost before it releases its concurrency slot, so that no worker starts a
paid call after the run's published spend reached the budget (see `Meter.admit`).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from llmjury.budget import Budget, price_of, token_rate
from llmjury.chat import Sample
from llmjury.pricing import PriceTable

PROGRESS_MODES = ("off", "auto", "lines")
DEFAULT_INTERVAL_S = 5.0
#: How often a process rewrites its board file at most while nothing forces it (no budget).
PUBLISH_EVERY_S = 0.5
#: How often the terminal bar redraws (lines mode prints every interval instead).
BAR_EVERY_S = 0.5


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
    """The run's shared folder of tallies, one file per process."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._made = False

    @classmethod
    def for_run(cls, run_id: str) -> Board:
        """The same folder in every process of a run (xdist's workers share the controller's run id)."""
        return cls(Path(tempfile.gettempdir()) / f"llmjury-run-{run_id}")

    def publish(self, tally: Tally) -> None:
        if not self._made:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._made = True
        path = self.folder / f"{tally.worker}.json"
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(asdict(tally)), encoding="utf-8")
        os.replace(tmp, path)

    def read(self, *, skip: str | None = None) -> list[Tally]:
        """Every process's last published tally (but `skip`'s), in worker order."""
        tallies = []
        try:
            paths = sorted(self.folder.glob("*.json"))
        except OSError:
            return []
        for path in paths:
            if path.stem == skip:
                continue
            try:
                tallies.append(Tally(**json.loads(path.read_text(encoding="utf-8"))))
            except (OSError, ValueError, TypeError):
                continue  # removed at the end of the run while being read
        return tallies

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


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
        """Raise BudgetExhaustedError when a paid call to `provider` may not start: the run's
        published spend (this process's own, exact, plus the other workers') reached the budget.

        Bound: every admitted call publishes its cost before its concurrency slot is released, so
        the run's spend exceeds the budget by at most the calls in flight when it was reached (at
        most one per concurrency slot of the run's paid providers, less the call that reached it)."""
        if self.budget is None or self.budget.free(provider):
            return
        others = sum(t.cost_usd for t in self.board.read(skip=self.tally.worker)) if self.board else 0.0
        with self._lock:
            refusal = self.budget.refusal(provider, self.tally.cost_usd + others)
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
        with self._lock:
            t = self.tally
            t.calls += 1
            t.prompt_tokens += prompt
            t.completion_tokens += completion
            t.cost_usd += price_of(rate, prompt, completion)
            if rate is None and provider not in t.unpriced:
                t.unpriced.append(provider)
            # With a budget, a paid call's cost is on the board before its slot is free (the bound).
            self._publish(force=self.budget is not None and rate != (0.0, 0.0))

    def _rate(self, provider: str) -> tuple[float, float] | None:
        if self.budget is not None:
            return self.budget.rate(provider)
        if provider not in self._rates:
            self._rates[provider] = token_rate(self._prices, provider) if self._prices is not None else None
        return self._rates[provider]

    def _publish(self, force: bool = False) -> None:
        """Write the tally to the board (the caller holds the lock): now, or if the last write is old."""
        if self.board is None or self._closed:
            return
        now = time.monotonic()
        wait = PUBLISH_EVERY_S - (now - self._published)
        if force or wait <= 0:
            if self._flush is not None:
                self._flush.cancel()
                self._flush = None
            self._published = now
            self.board.publish(self.tally)
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


def status_frame(text: str | None, column: int, width: int) -> str:
    """The terminal codes that draw `text` (None: nothing) on the line below the cursor's and put
    the cursor back where it was, `column` cells into its line: pytest goes on writing its own
    progress there and never sees the status line, which is drawn again after each of its writes.
    What pytest left of an old frame right of the cursor, or on the status line, is cleared first."""
    shown = (text or "")[:max(width - 1, 0)]
    back = f"\x1b[{column}C" if column else ""
    return f"\x1b[K\n\x1b[2K{shown}\x1b[1A\r{back}"


class Display:
    """Reads the board and shows the run's planning progress: a bar on a terminal (`bar`), or a
    line every `interval` seconds (`lines`); then one final line once every process has planned.
    Once tests report, pytest writes its progress on the terminal's current line: the bar gives way
    to a status line below it, redrawn (`status`) after each of pytest's writes. The thread (xdist's
    controller only) ticks holding `lock`, which the caller holds around pytest's own writes.
    `tick` does one step, so it is tested without a thread or a clock."""

    def __init__(self, board: Board, style: str, interval: float, write: Callable[[str], None],
                 expected_workers: Callable[[], int], bar_file: TextIO | None = None,
                 status: Callable[[str | None], None] | None = None,
                 lock: AbstractContextManager[Any] | None = None) -> None:
        self.board, self.style, self.interval, self.write = board, style, interval, write
        self.expected_workers = expected_workers
        self.bar_file = bar_file
        self.status = status  # draws a status line below pytest's (None clears it); a terminal only
        self._status_text: str | None = None
        self._lock = lock if lock is not None else nullcontext()
        self._bar: Any = None
        self._last_line = float("-inf")
        self._last_shown: RunTotals | None = None
        self.done = False
        self._handed = False  # tests report now: no thread, no bar
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def period(self) -> float:
        """How often a look at the board may change what is shown."""
        return BAR_EVERY_S if self.style == "bar" else min(self.interval, BAR_EVERY_S)

    @property
    def handed(self) -> bool:
        return self._handed

    def hand_over(self) -> None:
        """Tests have started to report, and pytest writes its progress on the current line: clear
        the bar; a status line below pytest's takes over on a terminal (a log keeps getting lines),
        from `tick` calls between pytest's writes and from the thread; the final line is kept for
        the end."""
        if self._handed:
            return
        self._handed = True
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def tick(self, now: float, clock: float | None = None) -> None:
        """One look at the board at wall-clock `now` (and monotonic `clock`, for the line interval)."""
        if self.done:
            return
        clock = time.monotonic() if clock is None else clock
        totals = RunTotals.of(self.board.read())
        if not totals.workers or totals.workers < self.expected_workers():
            return  # a worker still collecting: its share is not in the total yet
        if totals.finished == totals.workers:
            self.finish(now, totals)
            return
        if totals.total == 0:
            return  # nothing planned: a run with no planning phase shows no progress
        if self.style == "bar":
            if not self._handed:
                self._draw(totals)
            elif self.status is not None:
                self._status_text = totals.line(now)
                self.status(self._status_text)
        elif clock - self._last_line >= self.interval and totals != self._last_shown:
            self._last_line, self._last_shown = clock, totals
            self.write(totals.line(now))

    def finish(self, now: float, totals: RunTotals | None = None) -> None:
        """The final line (if anything was planned), once."""
        if self.done:
            return
        self.done = True
        totals = totals if totals is not None else RunTotals.of(self.board.read())
        if self._bar is not None:
            self._bar.close()
        if self._status_text is not None and self.status is not None:
            self.status(None)
            self._status_text = None
        if totals.total:
            self.write(totals.final_line(now))

    def redraw(self) -> None:
        """Draw the status line again as it was (pytest has just written over or beside it)."""
        if self._status_text is not None and self.status is not None and not self.done:
            self.status(self._status_text)

    def _draw(self, totals: RunTotals) -> None:
        # tqdm is a dependency already (and handles terminal width, rates and redraws).
        from tqdm import tqdm

        if self._bar is None:
            self._bar = tqdm(total=totals.total, desc="llmjury planning", unit="case", leave=False,
                             file=self.bar_file or sys.stderr, dynamic_ncols=True)
        self._bar.total = totals.total
        self._bar.set_postfix_str(totals.figures(live=True), refresh=False)
        self._bar.update(totals.done - self._bar.n)
        self._bar.refresh()  # each tick redraws: tqdm would skip draws closer than its own interval

    # -- the thread ------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, args=(self.period,), name="llmjury-progress", daemon=True)
        self._thread.start()

    def _run(self, period: float) -> None:
        while not self.done and not self._stop.wait(period):
            with self._lock:
                self.tick(time.time())

    def stop(self) -> None:
        """Stop the thread and print the final line now (the run's planning is over or it ends)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            self.finish(time.time())


def progress_style(mode: str, interactive: bool) -> str | None:
    """`auto`: a bar on a terminal, lines otherwise; `off`: nothing."""
    if mode == "off":
        return None
    return "bar" if mode == "auto" and interactive else "lines"
