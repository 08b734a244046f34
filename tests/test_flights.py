"""Calls in flight outlive the cases that wait for them, so a stopping run can let them land
(llmjury.running.flights)."""

from __future__ import annotations

import asyncio
import gc

import pytest

from llmjury.running.flights import Flights


def test_cancelling_the_waiting_case_leaves_the_call_to_land():
    async def scenario() -> list[str]:
        flights, landed, release = Flights(lambda: True), [], asyncio.Event()

        async def call() -> str:
            await release.wait()
            landed.append("answer")
            return "answer"

        case = asyncio.ensure_future(flights.fly(call))
        await asyncio.sleep(0)
        case.cancel()  # the run stops: its cases are cancelled
        with pytest.raises(asyncio.CancelledError):
            await case
        release.set()
        await flights.land(within=5)
        return landed

    assert asyncio.run(scenario()) == ["answer"]


async def flying_for_ever() -> tuple[Flights, asyncio.Future[object]]:
    """A call that never ends, in flight, and its flights."""
    flights, never = Flights(lambda: True), asyncio.Event()
    flown = asyncio.ensure_future(flights.fly(never.wait))
    await asyncio.sleep(0)
    return flights, flown


def test_landing_waits_no_longer_than_it_is_given():
    async def scenario() -> bool:
        flights, flown = await flying_for_ever()
        await flights.land(within=0.01)
        done = flown.done()
        flown.cancel()
        return done

    assert asyncio.run(scenario()) is False



def test_a_call_that_fails_after_its_case_was_cancelled_is_not_logged_unread(caplog):
    async def scenario() -> None:
        flights, release = Flights(lambda: True), asyncio.Event()

        async def fails() -> None:
            await release.wait()
            raise RuntimeError("the store went away")

        case = asyncio.ensure_future(flights.fly(fails))
        await asyncio.sleep(0)
        case.cancel()
        with pytest.raises(asyncio.CancelledError):
            await case
        release.set()
        await flights.land(within=5)

    with caplog.at_level("ERROR", logger="asyncio"):
        asyncio.run(scenario())
        gc.collect()
    assert "never retrieved" not in caplog.text


def test_a_second_landing_waits_only_what_is_left_of_the_first():
    async def scenario() -> float:
        flights, flown = await flying_for_ever()
        await flights.land(within=0.05)
        started = asyncio.get_running_loop().time()
        await flights.land(within=30)  # the close after the report: no second window
        flown.cancel()
        return asyncio.get_running_loop().time() - started

    assert asyncio.run(scenario()) < 1


def test_a_call_whose_run_does_not_stop_on_its_store_is_cancelled_with_its_case():
    """Ctrl-C, `-x`: the call goes with its case, at once, as it always did."""
    async def scenario() -> bool:
        flights, never = Flights(lambda: False), asyncio.Event()
        flown = asyncio.ensure_future(never.wait())
        case = asyncio.ensure_future(flights.fly(lambda: flown))
        await asyncio.sleep(0)
        case.cancel()
        with pytest.raises(asyncio.CancelledError):
            await case
        await asyncio.sleep(0)
        return flown.cancelled()

    assert asyncio.run(scenario()) is True


def test_a_case_cancelled_before_its_call_started_leaves_no_coroutine_unawaited(recwarn):
    """A run with warnings as errors (filterwarnings = error) would fail on one."""
    async def scenario() -> None:
        flights = Flights(lambda: False)

        async def call() -> str:
            return "answer"

        case = asyncio.ensure_future(asyncio.gather(flights.fly(call)))
        case.cancel()  # before the gather's tasks ever ran
        with pytest.raises(asyncio.CancelledError):
            await case

    asyncio.run(scenario())
    gc.collect()
    assert not [w for w in recwarn if "never awaited" in str(w.message)]
