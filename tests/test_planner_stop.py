"""A stopped run's planned work ends quietly: a cancelled test body hands nothing on to the other
workers (it has no outcome, and the hand-off may already be closing), and closing the engine never
waits on it. A worker that ran all its tests is not a stopped run, so it waits for what it planned
before it leaves (a worker that left early hung the run: its peers waited on outcomes never handed on)."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future
from typing import Any

import pytest

from llmjury.judgement.jury import Jury
from llmjury.judgement.planner import PlannedTest, Planner
from llmjury.pricing import PriceTable
from llmjury.prompts import PromptLibrary


class RecordingHandoff:
    def __init__(self) -> None:
        self.put_calls: list[str] = []

    def announce(self, keys: list[str]) -> None:
        pass

    def put(self, key: str, payload: dict[str, Any]) -> Future[None]:
        self.put_calls.append(key)
        return Future()  # never completes, as a closed writer's would not


def test_a_cancelled_test_body_hands_nothing_on_and_the_engine_closes(make_engine):
    engine = make_engine()
    handoff = RecordingHandoff()
    planner = Planner(Jury(engine, engine.settings, PromptLibrary(), PriceTable.load()), worker=0, workers=2,
                      handoff=handoff)  # type: ignore[arg-type]
    started = asyncio.Event()

    async def forever() -> None:
        engine._loop.call_soon(started.set)
        await asyncio.Event().wait()

    planner.start([], {"t.py::test_x[a]": PlannedTest(forever, list)})
    engine.run(asyncio.wait_for(started.wait(), 10))
    closing = threading.Thread(target=engine.close)  # cancels the body, which must not wait on the hand-off
    closing.start()
    closing.join(timeout=30)
    assert not closing.is_alive(), "closing the engine waited on a cancelled body's hand-off"
    assert handoff.put_calls == []
    with pytest.raises(BaseException):  # noqa: B017 - the body's future ends cancelled
        planner.test_result("t.py::test_x[a]").result(timeout=1)
