"""Under a concurrency limit, calls of cases started earlier go first: a run stopped half way keeps
about half of its cases whole, instead of every case half judged."""

from __future__ import annotations

import asyncio
import threading

from llmjury.chat import chat
from llmjury.providers.base import ProviderSpec
from llmjury.running.engine import Engine
from llmjury.running.limits import CaseTicket, PrioritySlots, in_case_order
from llmjury.running.settings import Settings


def test_a_freed_slot_goes_to_the_earliest_case_then_the_earliest_arrival():
    async def scenario() -> list[str]:
        slots, served = PrioritySlots(1), []
        await slots.acquire(CaseTicket(0))  # held: everyone below waits

        async def wait(name: str, order: int) -> None:
            await slots.acquire(CaseTicket(order))
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


def test_a_case_keeps_its_slot_between_its_calls_until_it_ends():
    """A case's next call comes a moment after its last one freed the slot (the answer is committed
    and parsed first): a later case waiting meanwhile must not take it, or two cases move on at once."""
    async def scenario() -> None:
        slots = PrioritySlots(1)
        first, second = CaseTicket(0), CaseTicket(1)
        await slots.acquire(first)
        waiting = asyncio.create_task(slots.acquire(second))
        await asyncio.sleep(0)
        slots.release(first)  # the first case's call is answered; its next one is not asked yet
        await asyncio.sleep(0)
        assert not waiting.done()
        await slots.acquire(first)  # kept for it: at once
        slots.release(first)
        first.end()  # the first case is whole: the second takes the slot
        await waiting

    asyncio.run(scenario())


def test_a_case_with_two_calls_in_flight_keeps_both_slots_and_gives_both_back():
    """Compare's two orders are two calls of one case at once: when both end while a later case waits,
    both slots are kept for the case and both go on when it ends. The second overwrote the first, so
    a slot was lost at each such case: a run at 16 slots went on 8, 4, 2, then one call at a time."""
    async def scenario() -> None:
        slots = PrioritySlots(2)
        early, late = CaseTicket(0), CaseTicket(1)
        await slots.acquire(early)
        await slots.acquire(early)  # both orders of one comparison in flight
        waiting = [asyncio.create_task(slots.acquire(late)) for _ in range(2)]
        await asyncio.sleep(0)
        slots.release(early)
        slots.release(early)  # both answered while the later case waits: both kept for `early`
        await asyncio.sleep(0)
        assert not any(task.done() for task in waiting)
        early.end()
        await asyncio.wait_for(asyncio.gather(*waiting), 5)  # both slots go on
        slots.release(late)
        slots.release(late)
        late.end()
        await asyncio.wait_for(asyncio.gather(slots.acquire(None), slots.acquire(None)), 5)  # none lost

    asyncio.run(scenario())


def test_an_earlier_case_or_a_test_waiting_now_takes_a_slot_kept_for_a_later_case():
    """Orders are strictly ranked, so no two cases wait on each other's kept slots; a case waiting on
    another's call hands back what is kept for it."""
    async def scenario() -> None:
        slots = PrioritySlots(1)
        early, late = CaseTicket(0), CaseTicket(5)
        await slots.acquire(late)
        slots.release(late)  # kept for the later case
        await slots.acquire(early)  # taken from it at once
        slots.release(early)
        await slots.acquire(None)  # a test's own call (order -1) takes the slot kept for `early`
        slots.release()
        await slots.acquire(early)
        slots.release(early)
        waiting = asyncio.create_task(slots.acquire(late))
        await asyncio.sleep(0)
        assert not waiting.done()
        early.hand_back()  # `early` now waits on another case's call: its slot serves `late`
        await waiting

    asyncio.run(scenario())


def test_with_one_slot_half_the_calls_finish_half_the_cases(openai_server, make_engine):
    """Eight cases of three calls each against one slot, stopped once twelve calls are answered:
    exactly four whole cases and none half judged (first-come order would have finished none,
    every case's first call before any second; without a slot kept between a case's calls, two
    cases at a time moved on and a stop left two half judged)."""
    engine = make_engine(concurrency=1)
    spec = ProviderSpec.parse(f"openai:m;base_url={openai_server.base_url}")
    done: list[int] = []
    asked = threading.Event()  # the thirteenth request reached the server: it is never answered
    release = threading.Event()

    def reply(body: dict, index: int) -> str:
        if len(openai_server.requests) > 12:
            asked.set()
            release.wait(timeout=60)
        return "reply"

    async def case(i: int) -> None:
        for turn in range(3):
            await engine.complete(spec, chat(("user", f"case {i} turn {turn}")))
        done.append(i)

    async def run() -> None:
        tasks = [asyncio.create_task(in_case_order(i, case(i))) for i in range(8)]
        await asyncio.to_thread(asked.wait, 60)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    openai_server.reply = reply
    try:
        engine.run(run())
    finally:
        release.set()
    assert asked.is_set()
    started = {int(body["messages"][-1]["content"].split()[1]) for body in openai_server.requests[:12]}
    # One slot: the thirteenth call is asked only once the case of the twelfth has ended.
    assert sorted(done) == sorted(started) == [0, 1, 2, 3]


def test_a_case_waiting_on_a_later_cases_identical_call_hands_back_its_kept_slot(openai_server):
    """The later case's call waits for the one slot, kept for the earlier case, which then asks the
    same request and so waits on that very call: kept, the two would wait on each other for ever.
    (No cache: nothing between the calls leaves the engine's loop, so the order below is fixed.)"""
    engine = Engine(Settings(concurrency=1), None, "run-1")
    spec = ProviderSpec.parse(f"openai:m;base_url={openai_server.base_url}")
    ended: list[str] = []

    async def earlier() -> None:
        await engine.complete(spec, chat(("user", "own")))  # answered while `later` waits for the slot
        await engine.complete(spec, chat(("user", "shared")))  # `later`'s call: wait for it
        ended.append("earlier")

    async def later() -> None:
        await engine.complete(spec, chat(("user", "shared")))
        ended.append("later")

    async def run() -> None:
        first = asyncio.create_task(in_case_order(0, earlier()))
        await asyncio.sleep(0)  # the earlier case's first call takes the free slot
        second = asyncio.create_task(in_case_order(1, later()))
        # A guard against a hang, not a timing assertion: the two calls take milliseconds.
        await asyncio.wait_for(asyncio.gather(first, second), timeout=60)

    try:
        engine.run(run())
    finally:
        engine.close()
    assert sorted(ended) == ["earlier", "later"]
    assert [body["messages"][-1]["content"] for body in openai_server.requests] == ["own", "shared"]
