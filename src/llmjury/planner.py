"""The planning phase: run every collected case's pipeline, and the body of every `async def`
test that awaits judges, concurrently before tests assert.

After collection (so `-k`, `-m` and `--llm-sample` have already deselected), each process
submits its share of the selected work to the engine loop at once, bounded only by the
providers' limits. Tests then ask for their result: planned ones are ready; anything else
(another worker's share under `--dist load`) runs then, hitting the shared cache. A share is a
hash of the work's key modulo the worker count, so every worker computes the same partition
and no paid call is made twice.

A test body can be run ahead of its test only when nothing but `case`, `jury` and plain
parametrize values feed it: any other fixture (autouse ones included) needs pytest's setup, so
such a test runs at call time on the engine loop instead.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from concurrent.futures import Future
from typing import Any, TypeAlias

import pytest
from tqdm import tqdm

from llmjury.cases import Case
from llmjury.jury import Jury, Outcome

Pipeline: TypeAlias = Callable[[Case, Jury], Awaitable[Outcome]]
#: Fixtures the planner can supply itself: the plugin's `case` and `jury`.
PLANNED_FIXTURES = frozenset({"case", "jury"})
PLUGIN_MODULE = "llmjury.plugin"


def work_key(pipeline: Pipeline, case: Case) -> str:
    return f"{pipeline.__module__}.{pipeline.__qualname__}::{case.id}"


def in_share(key: str, worker_index: int, worker_count: int) -> bool:
    """Deterministic partition of work across xdist workers (stable across processes)."""
    digest = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    return digest % worker_count == worker_index


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
            if name in PLANNED_FIXTURES and module == PLUGIN_MODULE:
                continue
            if name in params and qualname == "get_direct_param_fixture_func":
                continue
            return False
        if name != "request" and not (module.startswith("_pytest.") or module in plugins):
            return False
    return True


def coroutine_of(item: pytest.Function, arguments: Mapping[str, Any]) -> Coroutine[Any, Any, Any]:
    """The test's body as a coroutine, called with its arguments out of `arguments`."""
    return inspect.unwrap(item.obj)(**{name: arguments[name] for name in item._fixtureinfo.argnames})


def body_of(item: pytest.Function, jury: Jury) -> Coroutine[Any, Any, Any]:
    """The coroutine of a plannable test, called with its case, `jury` and parametrize values."""
    return coroutine_of(item, {**getattr(getattr(item, "callspec", None), "params", {}), "jury": jury})


class Planner:
    def __init__(self, jury: Jury) -> None:
        self.jury = jury
        self._futures: dict[str, Future[Outcome]] = {}
        self._tests: dict[str, Future[Any]] = {}

    def _submit(self, pipeline: Pipeline, case: Case) -> Future[Outcome]:
        key = work_key(pipeline, case)
        if key not in self._futures:
            self._futures[key] = self.jury.engine.submit(pipeline(case, self.jury))
        return self._futures[key]

    def plan(self, work: Iterable[tuple[Pipeline, Case]],
             tests: Mapping[str, Callable[[], Coroutine[Any, Any, Any]]] | None = None, *,
             label: str = "llmjury plan") -> int:
        """Run all pipelines in `work` and all test bodies in `tests` (by node id) concurrently and
        wait; failures wait for their test to report them."""
        futures = [*{work_key(p, c): self._submit(p, c) for p, c in work}.values()]
        for nodeid, body in (tests or {}).items():
            self._tests[nodeid] = self.jury.engine.submit(body())
            futures.append(self._tests[nodeid])
        with tqdm(total=len(futures), desc=label, unit="case", disable=None, leave=False) as bar:
            for future in futures:
                future.exception()  # waits; a failure is re-raised inside its test
                bar.update()
        return len(futures)

    def outcome(self, pipeline: Pipeline, case: Case) -> Outcome:
        """The case's outcome: from the plan if planned here, else computed now."""
        return self._submit(pipeline, case).result()

    def test_result(self, nodeid: str) -> Future[Any] | None:
        """The planned run of a test's body (taken once: a rerun runs the body again), or None."""
        return self._tests.pop(nodeid, None)
