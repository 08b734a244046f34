"""The xdist hand-off's reader: the planner's outcome once it is there, None when its owner did not
plan it or died; one statement a look, and a few looks a second once the wait is long."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from test_claim_waits import Counting

from llmjury.running import handoff
from llmjury.running.handoff import OutcomeHandoff
from llmjury.store.location import StoreLocation


def test_a_reader_gets_the_owners_outcome_or_none_when_the_owner_did_not_plan_it(store_location):
    owner = OutcomeHandoff(store_location, "run-1", worker=0)
    owner.announce(["planned"])
    owner.put("planned", {"verdicts": ["v"]}).result()
    reader = OutcomeHandoff(store_location, "run-1", worker=1)
    try:
        assert asyncio.run(reader.wait("planned", owner=0)) == {"verdicts": ["v"]}
        assert asyncio.run(reader.wait("not planned", owner=0)) is None  # the caller computes it
    finally:
        owner.close()
        reader.close()


def test_a_long_wait_sends_one_statement_a_look_and_a_few_looks_a_second(store_location, monkeypatch):
    """A worker whose test waits on another worker's slow call polled the shared store with three
    statements every 50 ms: sixty a second for as long as the call took."""
    statements: list[str] = []
    opened = StoreLocation.open
    monkeypatch.setattr(StoreLocation, "open", lambda self: Counting(opened(self), statements))
    owner = OutcomeHandoff(store_location, "run-1", worker=0)
    owner.announce(["slow"])  # this live process planned it: the reader waits
    reader = OutcomeHandoff(store_location, "run-1", worker=1)
    clock = SimpleNamespace(now=0.0)
    looks_at: list[float] = []

    async def sleep(seconds: float) -> None:
        looks_at.append(clock.now)
        clock.now += seconds
        if clock.now >= 10:  # the slow call is answered after ten seconds
            owner.put("slow", {"verdicts": ["late"]}).result()

    monkeypatch.setattr(handoff, "time", SimpleNamespace(monotonic=lambda: clock.now))
    monkeypatch.setattr(handoff, "asyncio", SimpleNamespace(sleep=sleep))
    before = len(statements)
    try:
        found = asyncio.run(reader.wait("slow", owner=0))
    finally:
        owner.close()
        reader.close()
    assert found == {"verdicts": ["late"]}
    reads = [sql for sql in statements[before:] if sql.lstrip().upper().startswith("SELECT")]
    assert len(reads) == len(looks_at) + 1  # one statement a look (the last finds the outcome)
    assert sum(1 <= at < 2 for at in looks_at) <= 5 and sum(5 <= at < 6 for at in looks_at) <= 5
    assert sum(at < 0.5 for at in looks_at) >= 8  # an outcome about to be committed is read at once
