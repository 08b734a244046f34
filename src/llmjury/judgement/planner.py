"""The planning phase: run every collected case's pipeline, and the body of every `async def`
test that awaits judges, concurrently before tests assert.

After collection (so `-k`, `-m` and `--llm-sample` have already deselected), each process
starts its share of the selected work on the engine loop in plan order, a window of them at once
(`Settings.planning_window`: enough to keep every provider's slots busy; the whole share when a
Batch API lane packs its requests), and pytest's test loop starts at once beside it: each test
waits for its own outcome only (starting it at once if its turn has not come), so tests assert
while later cases are still being judged, and a waiting case costs memory only once it starts.
Another worker's share (under `--dist load` a test often runs where its case was not planned) is
read from that worker's hand-on. A share is a hash of the work's key modulo the worker count, so
every worker computes the same partition and no paid call is made twice.

A test body can be run ahead of its test only when nothing but `case`, `jury` and plain
parametrize values feed it: any other fixture (autouse ones included) needs pytest's setup, so
such a test runs at call time on the engine loop instead.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import threading
import traceback
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, TypeVar

import pytest

from llmjury.cases import Case
from llmjury.errors import LLMJuryError, RunStopError, provider_fault
from llmjury.judgement.jury import Jury, Outcome
from llmjury.judgement.verdicts import Verdict
from llmjury.running.handoff import OutcomeHandoff
from llmjury.running.limits import in_case_order
from llmjury.tracebacks import format_exception

__tracebackhide__ = provider_fault  # pytest shows a provider's error at the test's line

Pipeline: TypeAlias = Callable[[Case, Jury], Awaitable[Outcome]]
T = TypeVar("T")


class Wait(Protocol):
    """How a test waits for a planned future: `Future.result`, or the run's watch showing progress meanwhile."""

    def __call__(self, planned: Future[T], /) -> T: ...
#: Fixtures the planner can supply itself: the plugin's `case` and `jury`.
PLANNED_FIXTURES = frozenset({"case", "jury"})
FIXTURES_MODULE = "llmjury.session.fixtures"


def work_key(pipeline: Pipeline, case: Case) -> str:
    return f"{pipeline.__module__}.{pipeline.__qualname__}::{case.id}"


def owner_of(key: str, worker_count: int) -> int:
    """The worker that plans `key`: a deterministic partition, the same in every process."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") % worker_count


def in_share(key: str, worker_index: int, worker_count: int) -> bool:
    return owner_of(key, worker_count) == worker_index


class PlannedElsewhereError(LLMJuryError):
    """A pipeline or test body that failed on the worker that planned it (its traceback as text)."""


class PlannedStopError(PlannedElsewhereError, RunStopError):
    """A pipeline that met a RunStopError on the worker that planned it: this worker stops too."""


@dataclass(frozen=True)
class PlannedTest:
    """A test body to run ahead of its test, and how to read the verdicts it records on its item."""

    body: Callable[[], Coroutine[Any, Any, Any]]
    recorded: Callable[[], list[dict[str, Any]]]


def is_jury_test(item: pytest.Item) -> bool:
    """An `async def` test that asks for the `jury` fixture: the engine loop runs it (pytest-asyncio's
    auto mode wraps the function in a synchronous runner of its own: unwrapped, it is ours)."""
    return (isinstance(item, pytest.Function) and inspect.iscoroutinefunction(inspect.unwrap(item.obj))
            and "jury" in item._fixtureinfo.argnames)


def plugin_modules(config: pytest.Config) -> frozenset[str]:
    """Modules of the installed pytest plugins: their autouse fixtures (syrupy's, for one) prepare
    nothing a test body reads, unlike a conftest's."""
    return frozenset(getattr(plugin, "__name__", "") for plugin, _ in config.pluginmanager.list_plugin_distinfo())


def plannable(item: pytest.Item, plugins: frozenset[str] = frozenset()) -> bool:
    """A jury test fed only by the plugin's `case` and `jury` and direct parametrize values, with
    no autouse fixture but those of pytest itself and of installed `plugins`."""
    if not is_jury_test(item):
        return False
    params = getattr(getattr(item, "callspec", None), "params", {})
    info = item._fixtureinfo  # type: ignore[attr-defined]
    for name in item.fixturenames:  # type: ignore[attr-defined]
        defs = info.name2fixturedefs.get(name, ())
        func = getattr(defs[-1], "func", None) if defs else None
        module, qualname = getattr(func, "__module__", ""), getattr(func, "__name__", "")
        if name in info.argnames:
            if name in PLANNED_FIXTURES and module == FIXTURES_MODULE:
                continue
            if name in params and qualname == "get_direct_param_fixture_func":
                continue
            return False
        if name != "request" and not (module.startswith("_pytest.") or module in plugins):
            return False
    return True


def coroutine_of(item: pytest.Function, arguments: Mapping[str, Any]) -> Coroutine[Any, Any, Any]:
    """The test's body as a coroutine, called with its arguments out of `arguments`."""
    body: Callable[..., Coroutine[Any, Any, Any]] = inspect.unwrap(item.obj)
    return body(**{name: arguments[name] for name in item._fixtureinfo.argnames})


def body_of(item: pytest.Function, jury: Jury) -> Coroutine[Any, Any, Any]:
    """The coroutine of a plannable test, called with its case, `jury` and parametrize values."""
    return coroutine_of(item, {**getattr(getattr(item, "callspec", None), "params", {}), "jury": jury})


class Planner:
    """Runs this worker's share of the work ahead of the tests; under xdist it hands every planned
    outcome on (`OutcomeHandoff`) and reads the outcomes other workers planned instead of running
    them again."""

    def __init__(self, jury: Jury, *, worker: int = 0, workers: int = 1, handoff: OutcomeHandoff | None = None,
                 typed: Callable[[dict[str, Any]], Verdict] = Verdict.model_validate,
                 wait: Wait = Future.result, window: int | None = None) -> None:
        self.jury = jury
        self.worker, self.workers, self.handoff, self.typed = worker, workers, handoff, typed
        self.wait = wait  # how a test waits for what was planned (the run's progress may show meanwhile)
        #: How many planned cases and test bodies run at once; None: all of them.
        self.window = window
        self._lock = threading.RLock()  # the engine's thread starts planned work, a waiting test its own
        self._feeding: Future[None] | None = None
        self._on_done: Callable[[], None] = lambda: None  # the run's progress, told as each planned work ends
        self._unstarted: dict[str, PlannedTest] = {}  # planned test bodies, by node id, until they start
        self._futures: dict[str, Future[Outcome]] = {}
        self._tests: dict[str, Future[Any]] = {}
        # The verdicts themselves (held by the outcomes anyway), dumped only if a stopped run asks:
        # a second dump of every record cost about a kilobyte a case for the whole run. By key, so
        # a case whose tests have all reported is let go (`release`).
        self._finished: dict[str, list[Verdict | dict[str, Any]]] = {}
        #: How many selected tests read each planned key: its outcome is held until they have all reported.
        self._readers: Counter[str] = Counter()

    def _submit(self, pipeline: Pipeline, case: Case, on_done: Callable[[], None] | None = None,
                order: int = -1) -> Future[Outcome]:
        """Start a case's pipeline; its calls wait behind those of cases of a lower `order` (a test
        waiting for its case now, -1, goes first)."""
        key = work_key(pipeline, case)
        with self._lock:
            if key not in self._futures:
                work = in_case_order(order, self._handed_on(key, pipeline(case, self.jury)))
                self._futures[key] = self.jury.engine.submit(work if on_done is None else _counted(work, on_done))
            return self._futures[key]

    async def _handed_on(self, key: str, outcome: Awaitable[Outcome]) -> Outcome:
        try:
            result = await outcome
        except Exception as exc:
            self._stop_on(exc)
            await self._hand_on(key, {"error": _error_text(exc), "summary": _error_summary(exc),
                                      "stops": isinstance(exc, RunStopError)})
            raise
        self._finished[key] = list(result.verdicts)
        if self.handoff is not None:
            await self._hand_on(key, {"verdicts": [v.record() for v in result.verdicts], "details": result.details})
        return result

    async def _test_handed_on(self, nodeid: str, test: PlannedTest) -> Any:
        try:
            result = await test.body()
        except asyncio.CancelledError:
            raise  # a stopped run: nothing to hand on (and its writer may be gone)
        except BaseException as exc:
            self._stop_on(exc)
            # pytest.skip / xfail inside the body stay a skip / xfail where the test runs.
            kind = ("skip" if isinstance(exc, pytest.skip.Exception)
                    else "xfail" if isinstance(exc, pytest.xfail.Exception) else "fail")
            message = str(exc) if kind != "fail" else _error_text(exc)
            await self._hand_on(nodeid, {"verdicts": test.recorded(), "error": message, "outcome": kind,
                                         "summary": _error_summary(exc)})
            raise
        self._finished[nodeid] = [*test.recorded()]
        await self._hand_on(nodeid, {"verdicts": test.recorded()})
        return result

    def _stop_on(self, exc: BaseException) -> None:
        """A RunStopError in planned work: every other case would meet it too, so the engine makes no
        new call while the test that reports it stops the run."""
        if isinstance(exc, RunStopError):
            self.jury.engine.halt.stop(exc)

    async def _hand_on(self, key: str, payload: dict[str, Any]) -> None:
        if self.handoff is not None:
            await asyncio.wrap_future(self.handoff.put(key, payload))

    def start(self, work: Iterable[tuple[Pipeline, Case]], tests: Mapping[str, PlannedTest] | None = None, *,
              on_done: Callable[[], None] = lambda: None) -> int:
        """Start all pipelines in `work` and all test bodies in `tests` (by node id), in that order and
        `window` at a time, and return how many there are without waiting for any: each test waits
        for its own (`outcome`, `test_result`), and a failure waits for its test to report it.
        `on_done` is called as each one ends, on the engine's thread before its result is set, for
        the run's progress."""
        work = list(work)
        tests = dict(tests or {})
        keys = [work_key(p, c) for p, c in work]
        if self.handoff is not None:
            self.handoff.announce(keys + list(tests))
        self._readers.update([*keys, *tests])
        self._on_done = on_done
        self._unstarted.update(tests)
        self._feeding = self.jury.engine.submit(self._feed(work, list(tests)))
        return len(set(keys)) + len(tests)

    async def _feed(self, work: list[tuple[Pipeline, Case]], tests: list[str]) -> None:
        """Start the planned work in plan order, at most `window` running at once; skip what a test
        already started, or already reported."""
        slots = asyncio.Semaphore(self.window) if self.window is not None else None
        planned: list[tuple[Pipeline, Case] | str] = [*work, *tests]
        for order, item in enumerate(planned):
            if slots is not None:
                await slots.acquire()
            with self._lock:
                if isinstance(item, str):
                    started = self._start_test(item, order, _in_window(self._on_done, slots))
                else:
                    pipeline, case = item
                    key = work_key(pipeline, case)
                    started = key in self._readers and key not in self._futures
                    if started:
                        self._submit(pipeline, case, _in_window(self._on_done, slots), order)
            if not started and slots is not None:
                slots.release()

    def _start_test(self, nodeid: str, order: int, on_done: Callable[[], None]) -> bool:
        """Start a planned test body that has not started yet; whether it did."""
        test = self._unstarted.pop(nodeid, None)
        if test is not None:
            body = in_case_order(order, self._test_handed_on(nodeid, test))
            self._tests[nodeid] = self.jury.engine.submit(_counted(body, on_done))
        return test is not None

    def outcome(self, pipeline: Pipeline, case: Case) -> Outcome:
        """The case's outcome, once it is there: from the plan, this worker's or another's, else
        computed now."""
        key = work_key(pipeline, case)
        if key not in self._futures:
            handed = self._handed(key)
            if handed is not None:
                if handed.get("outcome") == "skip":  # a sequential run decided before this case's batch
                    pytest.skip(handed["error"])
                if "error" in handed:
                    error = PlannedStopError if handed.get("stops") else PlannedElsewhereError
                    raise error(f"{handed['summary']}\n{key}: failed on the worker that planned it:\n"
                                f"{handed['error']}")
                return Outcome([self.typed(r) for r in handed["verdicts"]], details=handed.get("details") or {})
        with self._lock:  # a planned case whose turn has not come starts now, first in line
            planned = key in self._readers and key not in self._futures
            started = self._submit(pipeline, case, self._on_done if planned else None)
        return self.wait(started)

    def settle(self) -> None:
        """Wait until every planned case and test body has ended. An xdist worker calls this before
        it leaves a whole run: its tests are done, but another worker's test may still wait for an
        outcome this worker planned (and its calls belong in this worker's usage)."""
        if self._feeding is not None:
            self._feeding.exception()
        with self._lock:
            started = [*self._futures.values(), *self._tests.values()]
        for future in started:
            future.exception()

    def finished(self) -> list[dict[str, Any]]:
        """The verdict records of every planned case and test body that has finished so far and
        whose tests have not all reported: what a run stopped during planning can still report."""
        return [v.record() if isinstance(v, Verdict) else v for kept in self._finished.values() for v in kept]

    def release(self, key: str) -> None:
        """A test reading `key` (a case's work key, or a planned test's node id) has reported: once
        every test reading it has, its outcome and verdicts are let go, so memory does not grow with
        the suite (its verdicts live on in the reports). A rerun after that runs its pipeline again,
        on answers already in memory or in the cache."""
        with self._lock:
            if key not in self._readers:
                return
            self._readers[key] -= 1
            if self._readers[key] <= 0:
                del self._readers[key]
                self._futures.pop(key, None)
                self._finished.pop(key, None)

    def test_result(self, nodeid: str) -> Future[Any] | None:
        """The planned run of a test's body (taken once: a rerun runs the body again), started now,
        first in line, if its turn has not come; or None."""
        with self._lock:
            self._start_test(nodeid, -1, self._on_done)
            return self._tests.pop(nodeid, None)

    def handed_test(self, nodeid: str) -> dict[str, Any] | None:
        """Another worker's planned run of a test's body: its verdict records and error text, or None."""
        return self._handed(nodeid)

    def _handed(self, key: str) -> dict[str, Any] | None:
        if self.handoff is None or in_share(key, self.worker, self.workers):
            return None
        return self.jury.engine.run(self.handoff.wait(key, owner_of(key, self.workers)))


def _in_window(on_done: Callable[[], None], slots: asyncio.Semaphore | None) -> Callable[[], None]:
    """`on_done`, and then the window's slot freed for the next planned work."""
    if slots is None:
        return on_done

    def done() -> None:
        on_done()
        slots.release()
    return done


async def _counted(work: Awaitable[T], on_done: Callable[[], None]) -> T:
    """`work`, with `on_done` called as it ends and before its result is set, so a test that sees
    the result sees it counted (a cancelled one, in a stopped run, is not counted)."""
    try:
        result = await work
    except asyncio.CancelledError:
        raise
    except BaseException:
        on_done()
        raise
    on_done()
    return result


def _error_text(exc: BaseException) -> str:
    """What a failure handed on to the worker that reports it shows: the test's own frames."""
    return format_exception(exc, own_frames=True)


def _error_summary(exc: BaseException) -> str:
    """The exception's own lines (`AssertionError: ...`): what a failure handed on leads with, as
    pytest's short summary shows the first line."""
    return "".join(traceback.format_exception_only(exc)).rstrip()
