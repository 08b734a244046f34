"""The plugin's side of long runs: who publishes progress, who shows it, and what the run's summary
and terminal say about the budget.

Every process meters its own calls and cases (`progress.Meter`) onto the run board. The process
that reports (xdist's controller, or the only process under `-n 0`) shows the board: in a log, a
line every interval; on a terminal, a bar until the first test reports, then (pytest writes its
progress on the current line) a status line below pytest's, drawn again after each of pytest's
writes. Planning runs beside the test loop, so the board is shown between pytest's writes: by
xdist's controller from a thread of its own, holding a lock that pytest's writes for a test are
made under, and from its report hooks; under `-n 0`, where a thread would write into a test's
captured output, from the report hooks and while a test waits for its case, with capture
suspended (and no bar: its tests start at once).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import nullcontext
from typing import Any, TypeVar

import pytest

from llmjury.jurors import JurySpec
from llmjury.pricing import PriceTable
from llmjury.running.budget import Budget, budget_facts
from llmjury.running.settings import Settings
from llmjury.session.progress import Board, Meter, RunTotals
from llmjury.session.progress_display import Display, progress_style, status_frame

T = TypeVar("T")


def budget_of(settings: Settings, models: Sequence[JurySpec]) -> Budget | None:
    """The run's budget, checked against the `models` it may call (a ConfigError names the first
    unpriced one and the option); None without `--llm-budget`."""
    if settings.budget is None:
        return None
    budget = Budget(settings.budget, PriceTable.load(settings.prices), settings.budget_unknown,
                    settings.budget_source)
    budget.check_models(models)
    return budget


class RunWatch:
    """Registered in every process, next to the run's `JurySession`."""

    def __init__(self, config: pytest.Config, settings: Settings, budget: Budget | None, run_id: str,
                 expected_workers: Callable[[], int]) -> None:
        self.config, self.settings, self.budget = config, settings, budget
        workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)  # xdist sets it on a worker
        self.is_worker = workerinput is not None
        worker = str(workerinput["workerid"]) if workerinput is not None else "main"
        self.board = (Board(settings.board(run_id), run_id, settings.run_group)
                      if settings.progress != "off" or budget is not None else None)
        self.meter = Meter(worker, self.board, PriceTable.load(settings.prices), budget)
        self.expected_workers = expected_workers
        self.display: Display | None = None
        self._ticked = float("-inf")  # when the report hook last looked at the board
        #: Held around pytest's writes for a test (and by the display's thread while it draws), so a
        #: status frame never lands in the middle of pytest's dot or percentage.
        self._writing = threading.Lock()
        self.note: str | None = None

    def _show(self, *, thread: bool, status_only: bool = False) -> None:
        """Start showing the board, when progress is on and a terminal reporter is there to write to;
        from a thread of its own only where no test's output is captured (xdist's controller)."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        style = progress_style(self.settings.progress, bool(getattr(reporter, "isatty", False)))
        if self.board is None or style is None or reporter is None:
            return

        def write(line: str) -> None:
            if reporter._tw.width_of_current_line:  # after pytest's progress dots: a line of its own
                reporter.line("")
            reporter.write_line(line)
            reporter.flush()  # a CI log is a pipe: show the line now, not when a buffer fills

        def status(text: str | None) -> None:
            terminal = reporter._tw
            terminal._file.write(status_frame(text, terminal.width_of_current_line, terminal.fullwidth))
            terminal.flush()

        self.display = Display(self.board, style, self.settings.progress_interval, write, self.expected_workers,
                               status=status if style == "bar" else None, lock=self._writing)
        if status_only:
            self.display.hand_over()
        if thread:
            self.display.start()
        else:
            self.display.tick(time.time())

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """xdist's controller plans nothing itself: it shows its workers' planning from the start."""
        if not self.is_worker and self.config.pluginmanager.has_plugin("dsession"):
            self._show(thread=True)

    def planning(self, total: int) -> Callable[[], None]:
        """This process starts planning `total` items; returns what to call as each one is done (the
        meter ends this process's planning on the board at the last)."""
        self.meter.planning(total)
        if not self.is_worker and self.display is None:
            # The only process: its test loop starts at once, and pytest's progress with it (no bar).
            self._show(thread=False, status_only=True)
        if total == 0:
            self.meter.planned()  # an empty share says so, so the controller knows it is not coming
        return self.meter.case_done

    def wait(self, planned: Future[T]) -> T:
        """A test waits for what was planned for it. The only process (`-n 0`) shows its progress
        meanwhile (lines in a log, the status line on a terminal), with pytest's output capture
        suspended for each write: a case that takes minutes would otherwise leave it silent."""
        display = self.display
        if display is None or self.is_worker or (display.style == "bar" and not display.handed):
            return planned.result()
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        while True:
            try:
                return planned.result(timeout=display.period)
            except FutureTimeout:
                if display.done:
                    return planned.result()
                with capture.global_and_fixture_disabled() if capture is not None else nullcontext():
                    self._ticked = time.monotonic()
                    display.tick(time.time())

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_logstart(self) -> Generator[None, Any, Any]:
        """pytest writes a test's file name or line here: not while the display's thread draws."""
        with self._writing:
            return (yield)

    @pytest.hookimpl(wrapper=True, tryfirst=True, specname="pytest_runtest_logreport")
    def pytest_runtest_logreport_writing(self) -> Generator[None, Any, Any]:
        """pytest writes a test's result here (and the display draws after it): one writer at a time."""
        with self._writing:
            return (yield)

    @pytest.hookimpl(wrapper=True, tryfirst=True, specname="pytest_runtest_logfinish")
    def pytest_runtest_logfinish_writing(self) -> Generator[None, Any, Any]:
        """pytest writes its percentage here: not while the display's thread draws."""
        with self._writing:
            return (yield)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Show the board between pytest's own writes (after its progress dot for this report)."""
        display = self.display
        if display is None or display.done:
            return
        display.hand_over()
        now = time.monotonic()
        if now - self._ticked >= display.period:
            self._ticked = now
            display.tick(time.time())
        else:
            display.redraw()

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        """pytest may write its percentage at the end of a test: the status line goes below it again."""
        if self.display is not None:
            self.display.redraw()

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Stop the display before the session's reports are written below it."""
        if self.display is not None:
            self.display.stop()
            self.display = None

    def summary(self, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """What the run's summary adds about the budget (nothing without one), from every process's
        published tally."""
        if self.budget is None or self.board is None:
            return {}
        totals = RunTotals.of(self.board.read())
        group = self.settings.run_group
        facts = budget_facts(self.budget, totals.cost_usd, totals.refused_calls, totals.unpriced, records,
                             None if group is None else (group, self.board.spent()))
        self.note = facts["note"] if facts["stopped"] else None
        return {"budget": facts}

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Say, last, that the budget stopped paid calls (when it did)."""
        if self.note:
            terminalreporter.write_line(self.note, yellow=True, bold=True)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """Publish this process's last tally; the process that reports removes the run's board."""
        self.meter.close()
        if self.board is not None:
            if not self.is_worker:
                self.board.remove()
            self.board.close()
