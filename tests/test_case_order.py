"""Under a concurrency limit, calls of cases started earlier go first: a run stopped half way keeps
about half of its cases whole, instead of every case half judged."""

from __future__ import annotations

import asyncio

from llmjury.chat import chat
from llmjury.limits import PrioritySlots, in_case_order


def test_a_freed_slot_goes_to_the_earliest_case_then_the_earliest_arrival():
    async def scenario() -> list[str]:
        slots, served = PrioritySlots(1), []
        await slots.acquire(0)  # held: everyone below waits

        async def wait(name: str, order: int) -> None:
            await slots.acquire(order)
            served.append(name)
            slots.release()

        waiters = [asyncio.create_task(wait(name, order)) for name, order in
                   [("case3-a", 3), ("case1-a", 1), ("case3-b", 3), ("case2", 2), ("case1-b", 1)]]
        cancelled = asyncio.create_task(wait("gone", 0))
        await asyncio.sleep(0)
        cancelled.cancel()
        await asyncio.sleep(0)
        slots.release()
        await asyncio.gather(*waiters)
        return served

    assert asyncio.run(scenario()) == ["case1-a", "case1-b", "case2", "case3-a", "case3-b"]


def test_with_one_slot_half_the_calls_finish_half_the_cases(openai_server, make_engine):
    """Eight cases of three calls each against one slot, stopped after twelve calls: whole cases
    (first-come order would have finished none: every case's first call before any second)."""
    engine = make_engine(concurrency=1)
    spec = f"openai:m;base_url={openai_server.base_url}"
    done: list[int] = []

    async def case(i: int) -> None:
        for turn in range(3):
            await engine.complete(spec, chat(("user", f"case {i} turn {turn}")))
        done.append(i)

    async def run() -> None:
        tasks = [asyncio.create_task(in_case_order(i, case(i))) for i in range(8)]
        while len(openai_server.requests) < 12:
            await asyncio.sleep(0.01)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    openai_server.latency = 0.02
    engine.run(run())
    # Whole cases (about four; a case's next call reaches the limiter a moment after its slot is freed,
    # so two cases at a time move on), where first-come order finished none: every first turn came first.
    assert len(done) >= 2
