"""What a process that runs tests does: plan its share of the selected cases concurrently, run jury
tests on the engine's loop, and put each test's verdicts on its teardown report.

Registered in every process. Under xdist it works in the workers; xdist's controller collects and runs
nothing, so its hooks never fire there and its jury is never built. Under `-n 0` the only process runs
the tests and reports, and its controller reads this process's engine and planner at the session end.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Generator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from llmjury.batch.api import batch_api
from llmjury.cases import PIPELINE_MARK, Case, loaded_key
from llmjury.families import offline_answers
from llmjury.family import AnyFamily
from llmjury.fingerprints import stamp
from llmjury.judgement.jury import Jury
from llmjury.judgement.planner import (
    Pipeline,
    PlannedTest,
    Planner,
    body_of,
    coroutine_of,
    in_share,
    is_jury_test,
    plannable,
    plugin_modules,
    work_key,
)
from llmjury.judgement.sequential_planner import Looks, SequentialPlanner, look_items
from llmjury.judgement.verdicts import Verdict
from llmjury.loading import LoadReport
from llmjury.model import StoreFacts
from llmjury.pricing import PriceTable
from llmjury.prompts import PromptLibrary, use_library
from llmjury.running.batch_lane import BatchLane, LaneTiming
from llmjury.running.cache import SampleStore, shards
from llmjury.running.engine import Engine
from llmjury.running.handoff import OutcomeHandoff
from llmjury.running.settings import Settings
from llmjury.session.case_sets import OPTIONS
from llmjury.session.frozen import freeze_run
from llmjury.session.item_verdicts import VERDICTS, bound_jury, carry, case_of, recorded, taken
from llmjury.session.watch import RunWatch

RUNNER = pytest.StashKey["TestRunner"]()


@dataclass(frozen=True)
class Share:
    """This process's place in the run: the run's id, and which of how many workers plans what."""

    run_id: str
    index: int = 0
    count: int = 1

    @classmethod
    def of(cls, config: pytest.Config) -> Share:
        """A worker's share, handed down by the controller; else a new run of one process."""
        workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
        if workerinput is None:
            return cls(time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3))
        return cls(str(workerinput["llmjury_run_id"]), int(workerinput["llmjury_worker_index"]),
                   int(workerinput["workercount"]))


def runner_of(config: pytest.Config) -> TestRunner:
    """The run's test runner in this process, stashed once at configure."""
    return config.stash[RUNNER]


class TestRunner:
    """The jury and planner of one process, built lazily so a session with no llmjury tests opens no
    cache and starts no thread."""

    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self, config: pytest.Config, settings: Settings, families: dict[str, AnyFamily], share: Share,
                 watch: RunWatch, given_files: list[Path], looks: Looks | None = None) -> None:
        self.config, self.families, self.share, self.watch = config, families, share, watch
        #: A sequential run's looks (`--llm-sequential`): its cases are planned a batch at a time.
        self.looks = looks
        self.settings = settings.share(share.count)
        self.given_files = given_files
        #: Load reports of the datasets the selected tests use (set once collection has selected them).
        self.loading: list[LoadReport] = []
        self._jury: Jury | None = None
        self._planner: Planner | None = None

    @property
    def jury(self) -> Jury:
        """The run's jury: providers by role, prompts, the cache and the engine that makes calls."""
        if self._jury is None:
            settings = self.settings
            store = SampleStore(settings.answers(self.share.run_id), shards(settings.recordings),
                                lease_s=settings.lease_s, unsaved=settings.unsaved())
            prompts = PromptLibrary([settings.prompts] if settings.prompts else [])
            use_library(prompts)
            prices = PriceTable.load(settings.prices)
            lane = None
            if settings.batched():
                lane = BatchLane(store.location, self.share.run_id, settings.batch_mode, self.watch.meter, prices,
                                 batch_api, LaneTiming(poll_s=settings.batch_poll_s))
            engine = Engine(settings, store, self.share.run_id, offline_answers(self.families),
                            meter=self.watch.meter, lane=lane)
            self._jury = Jury(engine, settings, prompts, prices,
                              options=self.config.stash[OPTIONS])
        return self._jury

    @property
    def planner(self) -> Planner:
        """The planner of this process's share, handing outcomes on to other workers through the cache file."""
        if self._planner is None:
            store = self.jury.engine.store
            handoff = None
            if self.share.count > 1 and store is not None:
                handoff = OutcomeHandoff(store.location, self.share.run_id, self.share.index)
            if self.looks is not None:
                self._planner = SequentialPlanner(self.jury, self.looks, worker=self.share.index,
                                                  workers=self.share.count, handoff=handoff,
                                                  typed=self.typed_verdict, wait=self.watch.wait)
            else:
                self._planner = Planner(self.jury, worker=self.share.index, workers=self.share.count,
                                        handoff=handoff, typed=self.typed_verdict, wait=self.watch.wait,
                                        window=self.settings.planning_window())
        return self._planner

    def store_facts(self) -> StoreFacts:
        """What this process's store went through: an outage ridden out, answers kept or handed back."""
        store = self._jury.engine.store if self._jury is not None else None
        unsaved = store.unsaved if store is not None else None
        kept = unsaved.kept if unsaved is not None else 0
        return StoreFacts(away_s=self.settings.location.outage.ridden_s, kept_answers=kept,
                          kept_in=str(unsaved.folder) if unsaved is not None and kept else None,
                          recovered_answers=store.recovered if store is not None else 0)

    @property
    def built_jury(self) -> Jury | None:
        """The jury if this process built one (it made or replayed calls), else None."""
        return self._jury

    @property
    def built_planner(self) -> Planner | None:
        """The planner if this process planned, else None."""
        return self._planner

    def typed_verdict(self, record: dict[str, Any]) -> Verdict:
        """A verdict record with its result typed by its family, when the run knows the family."""
        family = self.families.get(record.get("family", ""))
        return family.typed(record) if family is not None else Verdict.foreign(record)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Collection has selected the tests (after -k, -m and --llm-sample): plan their cases now."""
        loaded = self.config.stash.get(loaded_key(), None)
        if loaded is not None:  # only the datasets of the tests that run
            self.loading = loaded.used(filter(None, map(case_of, session.items)), self.given_files)
        if self.config.getoption("llm_no_plan") or self.config.getoption("collectonly"):
            return
        if self.looks is not None:
            self.plan_looks(session.items)
            return
        work, tests = self.planned_work(session.items)
        if work or tests or any(case_of(item) is not None or is_jury_test(item) for item in session.items):
            freeze_run(self.config)
            # A worker with an empty share says so too, so the progress display knows it is not coming.
            done = self.watch.planning(len({work_key(p, c) for p, c in work}) + len(tests))
            if work or tests:
                self.planner.start(work, tests, on_done=done)

    def plan_looks(self, items: list[pytest.Item]) -> None:
        """A sequential run: every worker's work, in batches of the seeded order (this worker runs its share)."""
        work, tests = self.planned_work(items, everyone=True)
        index, count = self.share.index, self.share.count
        owned: dict[str, tuple[str, PlannedTest | None]] = {}
        for item in items:
            if item.nodeid in tests:
                case = case_of(item)
                owned[item.nodeid] = (item.nodeid if case is None else case.id,
                                      tests[item.nodeid] if in_share(item.nodeid, index, count) else None)
        found = look_items(work, owned, index, count)
        if found or any(case_of(item) is not None or is_jury_test(item) for item in items):
            freeze_run(self.config)
            done = self.watch.planning(sum(item.owner == index for item in found))
            if found:
                planner = self.planner
                assert isinstance(planner, SequentialPlanner)
                planner.start_looks(found, on_done=done)

    def planned_work(self, items: list[pytest.Item]
                    , everyone: bool = False) -> tuple[list[tuple[Pipeline, Case]], dict[str, PlannedTest]]:
        """This process's share (or `everyone`'s) of the pipelines to run on cases and of the jury test
        bodies to run ahead."""
        work: list[tuple[Pipeline, Case]] = []
        tests: dict[str, PlannedTest] = {}
        plugins = plugin_modules(self.config)
        index, count = (0, 1) if everyone else (self.share.index, self.share.count)
        for item in items:
            marker, case = item.get_closest_marker(PIPELINE_MARK), case_of(item)
            if marker is not None and case is not None:
                pipeline = marker.args[0]
                if in_share(work_key(pipeline, case), index, count):
                    work.append((pipeline, case))
            elif isinstance(item, pytest.Function) and plannable(item, plugins) and in_share(item.nodeid, index, count):
                tests[item.nodeid] = PlannedTest(partial(body_of, item, bound_jury(self.jury, item)),
                                                 partial(recorded, item))
        return work, tests

    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(self, pyfuncitem: pytest.Function) -> bool | None:
        """An `async def` test taking `jury`: its planned result, else its body run now on the engine
        loop (pytest itself would skip it); an exception in the body is the test's outcome."""
        if not is_jury_test(pyfuncitem):
            return None
        planned = self.planner.test_result(pyfuncitem.nodeid)
        if planned is not None:
            self.watch.wait(planned)
            return True
        handed = self.planner.handed_test(pyfuncitem.nodeid)
        if handed is None:
            self.jury.engine.run(coroutine_of(pyfuncitem, pyfuncitem.funcargs))
            return True
        # Planned by another worker: its verdicts and its outcome, not a second run of the body.
        pyfuncitem.stash.setdefault(VERDICTS, []).extend(handed["verdicts"])
        if handed.get("outcome") == "skip":
            pytest.skip(handed["error"])
        if handed.get("outcome") == "xfail":
            pytest.xfail(handed["error"])
        if "error" in handed:
            pytest.fail(handed_failure(handed["summary"], handed["error"]), pytrace=False)
        return True

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]
                                  ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """Only the teardown report carries a test's verdicts, so nothing is counted twice; from then
        on neither the item nor the planner holds them."""
        report = yield
        if report.when == "teardown":
            case = case_of(item)  # each verdict carries what its case showed, for the comparison
            records = taken(item) if case is None else stamp(taken(item), case.id, case.model_dump(mode="json"))
            carry(report, records)
            if self._planner is not None:
                marker = item.get_closest_marker(PIPELINE_MARK)
                self._planner.release(item.nodeid if marker is None or case is None else work_key(marker.args[0], case))
        return report

    def close(self) -> None:
        """Stop the engine, then the hand-off: the engine's cancelled work may still hand on through it."""
        if self._jury is not None:
            self._jury.engine.close()
        if self._planner is not None and self._planner.handoff is not None:
            self._planner.handoff.close()


def handed_failure(summary: str, trace: str) -> str:
    """A failure another worker planned, as this one reports it: the exception's lines first (pytest's
    short summary shows the first), then where it was raised, without those lines again."""
    trace = trace.rstrip()
    if trace.endswith(summary):
        trace = trace[:-len(summary)].rstrip()
    return f"{summary}\n{trace}\n(planned by another worker)"
