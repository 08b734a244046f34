"""On PostgreSQL a process waiting on another's calls is woken by the store when a waited key's claim
ends (LISTEN/NOTIFY), not by a timer; a lost listening connection is opened again; keys it does not
wait for do not wake it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llmjury.chat import Sample
from llmjury.running import claim_waits
from llmjury.running.cache import SampleStore
from llmjury.running.claim_waits import ClaimWaits
from llmjury.store import notices
from llmjury.store.location import StoreLocation
from llmjury.testing.postgres import fresh_schema

DEADLINE_S = 30.0  # far below the quiet interval the tests set: only an announcement wakes the waiter in time


@given(st.lists(st.text(alphabet="0123456789abcdef", min_size=1, max_size=300), max_size=200))
def test_payloads_carry_every_key_in_order_each_under_postgresql_s_limit(keys: list[str]) -> None:
    sent = list(notices.payloads(keys))
    assert all(len(payload.encode()) <= notices.PAYLOAD_BYTES for payload in sent)
    assert [key for payload in sent for key in payload.split("\n")] == keys


@pytest.fixture
def postgres_location(postgres_dsn: str, tmp_path: Path) -> StoreLocation:
    return StoreLocation("postgres", tmp_path / "cache.sqlite", fresh_schema(postgres_dsn))


@pytest.fixture
def quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    """No look on a timer within the tests' deadlines: a waiter that answers in time was woken."""
    monkeypatch.setattr(claim_waits, "QUIET_POLL_S", 3600.0)
    monkeypatch.setattr(claim_waits, "POLL_S", 0.01)


async def until(condition: Callable[[], bool], what: str) -> None:
    """Wait (on the loop) for `condition`, failing after DEADLINE_S."""
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, f"never {what}"
        await asyncio.sleep(0.01)


def answer(holder: SampleStore, key: str) -> Awaitable[None]:
    """The holder stores `key`'s answer (ending its claim), committed when this returns."""
    return asyncio.to_thread(lambda: holder.put(key, "openai:m", "", "{}", Sample(text=f"answer {key}"),
                                                "run-0").result())


def listening(waits: ClaimWaits) -> bool:
    return waits.notices is not None and waits.notices.listening


def parked(waits: ClaimWaits) -> bool:
    """Listening, every look it was woken for made, and its poller waiting for the next wake-up."""
    woken = waits._woken
    return listening(waits) and not woken.is_set() and bool(getattr(woken, "_waiters", None))


def test_a_waiter_reads_an_answer_when_its_claim_ends_not_on_a_timer(postgres_location, quiet):
    holder, waiting = SampleStore(postgres_location), SampleStore(postgres_location)
    held = ["key-a", "key-b"]
    assert holder.claim(held, "run-0:holder", run_id="run-0").result().held == {}

    async def scenario() -> list[Any]:
        waits = ClaimWaits(waiting, "run-1")
        waited = [asyncio.ensure_future(waits.settled(key)) for key in held]
        await until(lambda: parked(waits), "parked, listening")
        await answer(holder, "key-a")
        first = await asyncio.wait_for(waited[0], DEADLINE_S)
        assert not waited[1].done()
        await until(lambda: parked(waits), "parked again")
        await answer(holder, "key-b")
        return [first, await asyncio.wait_for(waited[1], DEADLINE_S)]

    try:
        rows = asyncio.run(scenario())
    finally:
        holder.close()
        waiting.close()
    assert [Sample.model_validate_json(row[0]).text for row in rows] == ["answer key-a", "answer key-b"]


def read_after_a_loss(location: StoreLocation, lose: Callable[[ClaimWaits], Awaitable[None]]) -> str:
    """A waiter parked on a key, its listening connection lost (`lose`) and opened again: the text of
    the answer the holder stores then, which only an announcement brings in time."""
    holder, waiting = SampleStore(location), SampleStore(location)
    assert holder.claim(["key-a"], "run-0:holder", run_id="run-0").result().held == {}

    async def scenario() -> Any:
        waits = ClaimWaits(waiting, "run-1")
        waited = asyncio.ensure_future(waits.settled("key-a"))
        await until(lambda: parked(waits), "parked, listening")
        await lose(waits)
        await until(lambda: waits.notices is not None and waits.notices.connections == 2 and parked(waits),
                    "parked, listening again")
        await answer(holder, "key-a")
        return await asyncio.wait_for(waited, DEADLINE_S)

    try:
        row = asyncio.run(scenario())
    finally:
        holder.close()
        waiting.close()
    return Sample.model_validate_json(row[0]).text


def test_a_lost_listening_connection_is_opened_again(postgres_location, quiet, monkeypatch):
    monkeypatch.setattr(notices, "RECONNECT_S", 0.05)
    admin = postgres_location.open()

    async def terminated(waits: ClaimWaits) -> None:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                      "WHERE application_name = 'llmjury-claims-listener' AND pid <> pg_backend_pid()")

    try:
        assert read_after_a_loss(postgres_location, terminated) == "answer key-a"
    finally:
        admin.close()


def test_keys_it_does_not_wait_for_do_not_wake_a_waiter(tmp_path: Path) -> None:
    """The store announces every claim that ends, in the whole database; a waiter looks only for its own."""
    store = SampleStore(StoreLocation("sqlite", tmp_path / "cache.sqlite"))

    async def scenario() -> tuple[bool, bool]:
        waits = ClaimWaits(store, "run-1")
        woken = waits._woken  # what the listener wakes on PostgreSQL
        waited = asyncio.ensure_future(waits.settled("mine"))
        await asyncio.sleep(0)  # `settled` has registered its key
        woken.clear()
        waits._heard(["theirs", "other"])
        unrelated = woken.is_set()
        waits._heard(["theirs", "mine"])
        related = woken.is_set()
        waited.cancel()
        return unrelated, related

    try:
        assert asyncio.run(scenario()) == (False, True)
    finally:
        store.close()


def test_a_transaction_announces_the_keys_it_ended_at_its_commit_and_a_rolled_back_one_none(postgres_location):
    import psycopg

    from llmjury.running.cache import store_samples
    from llmjury.store.schema import ensure_schema

    def rows(*keys: str) -> list[tuple[str, str, str, str, str, str, float]]:
        return [(key, "openai:m", "", "{}", Sample(text=key).model_dump_json(), "run-0", 0.0) for key in keys]

    with psycopg.connect(postgres_location.dsn, autocommit=True) as listener:
        listener.execute(f"LISTEN {notices.CHANNEL}")
        db = postgres_location.open()
        try:
            ensure_schema(db)
            db.begin()
            store_samples(db, rows("undone"))
            db.rollback()
            db.begin()
            store_samples(db, rows("key-a", "key-b"))
            store_samples(db, rows("key-c"))
            db.commit()
        finally:
            db.close()
        heard = [notice.payload.split("\n") for notice in listener.notifies(timeout=DEADLINE_S, stop_after=1)]
    assert heard == [["key-a", "key-b", "key-c"]]


def test_a_waiter_listens_again_after_a_postgres_restart(own_postgres, tmp_path, quiet, monkeypatch):
    from llmjury.store.outage import Outage
    from llmjury.testing.postgres import resume, stop

    monkeypatch.setattr(notices, "RECONNECT_S", 0.05)
    folder, dsn = own_postgres
    location = StoreLocation("postgres", tmp_path / "unused.sqlite", fresh_schema(dsn), Outage(60))

    async def restarted(waits: ClaimWaits) -> None:
        await asyncio.to_thread(stop, folder)
        await until(lambda: not listening(waits), "aware the server went away")
        await asyncio.to_thread(resume, folder)

    assert read_after_a_loss(location, restarted) == "answer key-a"


def test_a_process_that_waits_for_nothing_stops_listening_and_listens_again_for_its_next_wait(
        postgres_location, quiet, monkeypatch):
    """Every claim that ends in the database wakes a listener: one waiting for nothing lets go of its
    connection after LINGER_S, and its next wait opens one again."""
    monkeypatch.setattr(claim_waits, "LINGER_S", 0.05)
    holder, waiting = SampleStore(postgres_location), SampleStore(postgres_location)
    assert holder.claim(["key-a", "key-b"], "run-0:holder", run_id="run-0").result().held == {}
    admin = postgres_location.open()

    def listeners() -> int:
        ((count,),) = admin.execute("SELECT COUNT(*) FROM pg_stat_activity "
                                    "WHERE application_name = 'llmjury-claims-listener'")
        return int(count)

    async def scenario() -> list[str]:
        waits = ClaimWaits(waiting, "run-1")
        read = []
        for key in ("key-a", "key-b"):
            waited = asyncio.ensure_future(waits.settled(key))
            await until(lambda: parked(waits), f"parked, listening for {key}")
            assert listeners() == 1
            await answer(holder, key)
            read.append(Sample.model_validate_json((await asyncio.wait_for(waited, DEADLINE_S))[0]).text)
            await until(lambda: waits.notices is None and listeners() == 0, "no longer listening")
        return read

    try:
        assert asyncio.run(scenario()) == ["answer key-a", "answer key-b"]
    finally:
        admin.close()
        holder.close()
        waiting.close()
