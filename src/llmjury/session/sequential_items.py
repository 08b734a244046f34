"""A sequential run's case tests that the planner cannot run ahead (a plain `def` test of a case, a
jury test with fixtures of its own): ordered by the seeded batches, and skipped as decided once the
gates are decided on the batches before theirs.

Such a test's verdicts exist only once pytest has run it, in whichever process xdist gave it to. So
each process puts every such test's verdicts on the run store when the test ends, and before a test
of batch k runs, it reads the verdicts of every test of the batches before k from the store (waiting
for those still running elsewhere) and looks at the gates on exactly them: every process computes
the same looks on the same records. The tests are sorted by batch at collection, the same in every
process, and xdist hands each worker its tests in that order, so a test waits only for tests before
it in every worker's queue, never for one behind it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from llmjury.cases import PIPELINE_MARK
from llmjury.judgement.planner import plannable, plugin_modules
from llmjury.results.sequential_gates import SequentialGates
from llmjury.running.handoff import POLL_S, OutcomeHandoff, forget_run
from llmjury.running.settings import Settings
from llmjury.sequential.order import batches
from llmjury.sequential.settings import SequentialSettings
from llmjury.session.item_verdicts import carried, case_of

#: The prefix of these tests' keys in the run store's hand-off table (planned work uses none).
KEY = "sequential-test:"
#: How long a look waits for a test running elsewhere before it gives up looking (a crashed worker).
WAIT_S = 600.0


class Board(OutcomeHandoff):
    """The run store's hand-off table, read by key without an owner: whoever ran a test put it there."""

    def read(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        with self._lock:
            for key in keys:
                rows = self._db.execute("SELECT payload FROM outcomes WHERE run_id = ? AND key = ?",
                                        (self.run_id, key))
                if rows:
                    found[key] = dict(json.loads(rows[0][0]))
        return found


class SequentialItems:
    """Registered in every process of a sequential run; inert where nothing is collected (xdist's controller)."""

    def __init__(self, settings: Settings, gates: SequentialGates, run_id: str, *, worker: bool) -> None:
        self.settings, self.gates, self.run_id, self.worker = settings, gates, run_id, worker
        self.size = (settings.sequential or SequentialSettings()).batch
        self.batch_of: dict[str, int] = {}
        self.members: list[list[str]] = []
        self.records: list[dict[str, Any]] = []
        self.looked = 0  # looks taken: after batches 0 .. looked-1
        self.decision: str | None = None
        self.gave_up = False
        self._board: Board | None = None

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Case tests the planner cannot run ahead, in the seeded batches (other tests first, in their order)."""
        plugins = plugin_modules(config)
        cases: dict[str, str] = {}
        for item in items:
            case = case_of(item)
            if case is not None and item.get_closest_marker(PIPELINE_MARK) is None and not plannable(item, plugins):
                cases[item.nodeid] = case.id
        cut = batches(cases.values(), self.settings.seed, self.size)
        batch_of_case = {case: b for b, batch in enumerate(cut) for case in batch}
        self.batch_of = {nodeid: batch_of_case[case] for nodeid, case in cases.items()}
        self.members = [[] for _ in cut]
        for nodeid, b in self.batch_of.items():
            self.members[b].append(nodeid)
        position = {item.nodeid: i for i, item in enumerate(items)}
        items.sort(key=lambda item: (self.batch_of.get(item.nodeid, -1), position[item.nodeid]))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """A test whose batch comes after the decision is skipped as decided."""
        batch = self.batch_of.get(item.nodeid)
        if batch is None or batch == 0:
            return
        self.look_until(batch, lambda: bool(item.session.shouldstop or item.session.shouldfail))
        if self.decision is not None:
            pytest.skip(self.decision)

    def look_until(self, batch: int, stopping: Callable[[], bool] = lambda: False) -> None:
        """Take the looks after every batch before `batch`, until one decides (or the session stops)."""
        while self.decision is None and not self.gave_up and self.looked < batch:
            keys = [KEY + nodeid for nodeid in self.members[self.looked]]
            found = self._wait(keys, stopping)
            if found is None:
                self.gave_up = True  # a test of this batch never ended: no look can be complete
                return
            self.records += [r for key in keys for r in found[key].get("verdicts", [])]
            self.looked += 1
            self.decision = self.gates.all_decided(self.records)

    def _wait(self, keys: list[str], stopping: Callable[[], bool]) -> dict[str, dict[str, Any]] | None:
        """Every key's outcome once all are on the store; None when one never comes (a crashed worker,
        a session stopping by -x or a signal)."""
        started = time.monotonic()
        found: dict[str, dict[str, Any]] = {}
        while True:
            found |= self.board.read([key for key in keys if key not in found])
            if len(found) == len(keys):
                return found
            if stopping() or time.monotonic() - started > WAIT_S:
                return None
            time.sleep(POLL_S)

    @property
    def board(self) -> Board:
        if self._board is None:
            self._board = Board(self.settings.answers(self.run_id), self.run_id, 0)
        return self._board

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Where a test ran: its verdicts (or none) on the store, for every process's looks."""
        if report.when == "teardown" and report.nodeid in self.batch_of:
            self.board.put(KEY + report.nodeid, {"verdicts": carried(report)})

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """Commit what is queued and close; the only process of a run deletes its rows (under xdist the
        controller deletes the run's hand-off rows)."""
        if self._board is not None:
            self._board.close()
            if not self.worker:
                forget_run(self.settings.answers(self.run_id), self.run_id)
