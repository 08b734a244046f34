"""LoopBridge: futures completed on another thread reach their waiters on the loop, results, errors
and cancellations alike, and the completions that arrive together ride one wake-up of the loop."""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import Future

import pytest

from llmjury.running.loop_bridge import LoopBridge


def complete_elsewhere(futures: list[Future[int]]) -> None:
    """Complete `futures` on a thread of their own (as the store writer does), and wait for it."""
    def complete() -> None:
        for index, future in enumerate(futures):
            if index % 3 == 1:
                future.set_exception(ValueError(f"write {index} failed"))
            elif index % 3 == 2:
                future.cancel()
            else:
                future.set_result(index)
    thread = threading.Thread(target=complete)
    thread.start()
    thread.join()


def test_results_errors_and_cancellations_reach_their_waiters_in_one_wake_up():
    async def scenario() -> tuple[list[object], int]:
        loop = asyncio.get_running_loop()
        wakes = 0
        schedule = loop.call_soon_threadsafe

        def counted(*args):  # type: ignore[no-untyped-def]
            nonlocal wakes
            wakes += 1
            return schedule(*args)

        loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
        bridge = LoopBridge(loop)
        futures: list[Future[int]] = [Future() for _ in range(30)]
        waiters = [bridge.wrap(future) for future in futures]
        complete_elsewhere(futures)  # all thirty complete while the loop is busy here
        outcomes = await asyncio.gather(*waiters, return_exceptions=True)
        return outcomes, wakes

    outcomes, wakes = asyncio.run(scenario())
    assert wakes == 1
    for index, outcome in enumerate(outcomes):
        if index % 3 == 0:
            assert outcome == index
        elif index % 3 == 1:
            assert isinstance(outcome, ValueError) and str(outcome) == f"write {index} failed"
        else:
            assert isinstance(outcome, asyncio.CancelledError)


def test_a_future_done_before_it_is_wrapped_is_carried_over_too():
    async def scenario() -> int:
        done: Future[int] = Future()
        done.set_result(7)
        return await LoopBridge(asyncio.get_running_loop()).wrap(done)

    assert asyncio.run(scenario()) == 7


def test_a_waiter_that_gave_up_is_left_alone_when_its_write_completes():
    async def scenario() -> asyncio.Future[int]:
        bridge = LoopBridge(asyncio.get_running_loop())
        future: Future[int] = Future()
        waiter = bridge.wrap(future)
        waiter.cancel()
        complete_elsewhere([future])
        await asyncio.sleep(0)  # the carry-over runs, and sets nothing on the cancelled waiter
        return waiter

    assert asyncio.run(scenario()).cancelled()


def test_a_completion_after_the_loop_has_closed_is_dropped_quietly(caplog):
    loop = asyncio.new_event_loop()
    bridge = LoopBridge(loop)
    future: Future[int] = Future()
    bridge.wrap(future)
    loop.close()
    with pytest.raises(RuntimeError):  # what the bridge meets: a closed loop takes no callback
        loop.call_soon_threadsafe(print)
    with caplog.at_level(logging.ERROR, logger="concurrent.futures"):
        future.set_result(1)
    # concurrent.futures logs a callback's exception ("exception calling callback"): none here
    assert caplog.records == []
