"""Showing the run board (llmjury.session.progress): a bar on a terminal, or a line every interval in a log.

A controller thread (xdist's) or the report hooks (`-n 0`) read the board and print one updating bar
on a terminal, or a plain line every `--llm-progress-interval` seconds in a CI log; once tests report,
a status line below pytest's own progress. `Display.tick` does one step, so it is tested without a
thread or a clock.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TextIO

from llmjury.session.progress import Board, RunTotals

PROGRESS_MODES = ("off", "auto", "lines")
DEFAULT_INTERVAL_S = 5.0
#: How often the terminal bar redraws (lines mode prints every interval instead).
BAR_EVERY_S = 0.5


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
