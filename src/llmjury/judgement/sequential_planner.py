"""The planning phase of a sequential run (`--llm-sequential`): cases in a seeded order, a batch at a
time, with a look at the gates after each batch; once every gate is decided the cases left are not
judged, and their tests are skipped as `decided`.

Every process cuts the same seeded order into the same batches. A worker runs its share of a batch,
then waits for the other workers' shares of it (handed on through the run store, as every planned
outcome is), and looks at the gates on exactly the verdicts of the batches so far: every worker
computes the same look on the same records, so all stop after the same batch without a message
between them. A test waits for its own case's batch, or for the decision that skips it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol

import pytest

from llmjury.cases import Case
from llmjury.judgement.jury import Jury, Outcome
from llmjury.judgement.planner import Pipeline, PlannedTest, Planner, owner_of, work_key
from llmjury.running.limits import in_case_order


class Looks(Protocol):
    """What a sequential plan asks of the run: the order of the cases, and after each batch whether
    every gate is decided (the reason, or None)."""

    def batches(self, case_ids: Sequence[str]) -> list[list[str]]: ...

    def decided(self, records: Sequence[dict[str, Any]]) -> str | None: ...


@dataclass(frozen=True)
class LookItem:
    """One piece of planned work of the whole run (every worker's): its key, case, owner, and for
    this worker's own share how to start it."""

    key: str
    case_id: str
    owner: int
    pipeline: tuple[Pipeline, Case] | None = None
    test: PlannedTest | None = None


class SequentialPlanner(Planner):
    """A planner that judges a batch at a time and stops once every gate is decided."""

    def __init__(self, jury: Jury, looks: Looks, **kwargs: Any) -> None:
        super().__init__(jury, **kwargs)
        self.looks = looks
        #: Why the run stopped judging (every gate decided), once it has; None while it has not.
        self.decision: str | None = None
        #: This worker's items' futures, by key, until their batch runs or the decision skips them.
        self._held: dict[str, Future[Any]] = {}

    def start_looks(self, items: Sequence[LookItem], on_done: Callable[[], None] = lambda: None) -> int:
        """Hold a waiting future for each of this worker's items, and start the batches; return how
        many items are this worker's."""
        mine = [i for i in items if i.owner == self.worker]
        if self.handoff is not None:
            self.handoff.announce([i.key for i in mine])
        for item in mine:
            # Held here too: a test takes its planned future out of `_tests` when it starts waiting.
            future: Future[Any] = Future()
            self._held[item.key] = future
            if item.test is not None:
                self._tests[item.key] = future
            else:
                self._futures[item.key] = future
        by_case: dict[str, list[LookItem]] = {}
        for item in items:
            by_case.setdefault(item.case_id, []).append(item)
        batches = [[i for case in batch for i in by_case[case]] for batch in self.looks.batches(list(by_case))]
        self.jury.engine.submit(self._batches(batches, on_done))
        return len(mine)

    async def _batches(self, batches: list[list[LookItem]], on_done: Callable[[], None]) -> None:
        records: list[dict[str, Any]] = []
        order = 0
        try:
            for at, batch in enumerate(batches):
                runs = []
                for item in batch:
                    if item.owner == self.worker:
                        runs.append(self._own(item, order, on_done))
                    order += 1
                for found in await asyncio.gather(*runs):
                    records += found
                for item in batch:
                    if item.owner != self.worker:
                        records += await self._theirs(item)
                if at + 1 < len(batches):
                    self.decision = await asyncio.to_thread(self.looks.decided, list(records))
                    if self.decision is not None:
                        await self._skip([i for rest in batches[at + 1:] for i in rest], self.decision, on_done)
                        return
        except Exception as exc:  # a look that cannot be computed: every waiting test says why
            await self._skip([i for rest in batches for i in rest], exc, on_done)
            raise

    async def _own(self, item: LookItem, order: int, on_done: Callable[[], None]) -> list[dict[str, Any]]:
        """Run one of this worker's items into its waiting future; its verdict records."""
        future = self._held[item.key]
        work: Awaitable[Any]
        if item.test is not None:
            work = self._test_handed_on(item.key, item.test)
        else:
            assert item.pipeline is not None  # an item of this worker's share has its work
            pipeline, case = item.pipeline
            work = self._handed_on(item.key, pipeline(case, self.jury))
        try:
            result = await in_case_order(order, work)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # the test that waits for it reports it
            on_done()
            future.set_exception(exc)
            return item.test.recorded() if item.test is not None else []
        on_done()
        future.set_result(result)
        if item.test is not None:
            return item.test.recorded()
        return [v.record() for v in result.verdicts] if isinstance(result, Outcome) else []

    async def _theirs(self, item: LookItem) -> list[dict[str, Any]]:
        """Another worker's item, once it has handed it on."""
        if self.handoff is None:
            return []
        payload = await self.handoff.wait(item.key, item.owner)
        return list((payload or {}).get("verdicts") or [])

    async def _skip(self, items: list[LookItem], why: str | BaseException, on_done: Callable[[], None]) -> None:
        """End the waiting futures of items no batch will run: skipped as decided, or failed with the error."""
        for item in items:
            if item.owner != self.worker:
                continue
            future = self._held[item.key]
            if future.done():
                continue
            exc = why if isinstance(why, BaseException) else pytest.skip.Exception(why)
            if isinstance(why, str):
                await self._hand_on(item.key, {"verdicts": [], "outcome": "skip", "error": why, "summary": why})
            future.set_exception(exc)
            on_done()


def look_items(work: Sequence[tuple[Pipeline, Case]], tests: dict[str, tuple[str, PlannedTest | None]],
               worker: int, workers: int) -> list[LookItem]:
    """Every worker's work as look items: pipelines on cases, and test bodies by node id (with the
    case each tests; a test of no case is a case of its own)."""
    items, seen = [], set()
    for pipeline, case in work:
        key = work_key(pipeline, case)
        if key in seen:  # several tests of one outcome: one run of its pipeline
            continue
        seen.add(key)
        owner = owner_of(key, workers)
        items.append(LookItem(key, case.id, owner, (pipeline, case) if owner == worker else None))
    for nodeid, (case_id, test) in tests.items():
        owner = owner_of(nodeid, workers)
        items.append(LookItem(nodeid, case_id, owner, test=test if owner == worker else None))
    return items

