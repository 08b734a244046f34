"""A process waiting on calls another process claimed costs the store one statement a poll, however many
keys it waits on, and few polls a second; it reads each answer once the holder commits it. Claims follow
calls: a process holds no more claims than its window, whatever number of cases it has planned."""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
from collections.abc import Sequence
from typing import Any

import pytest

from llmjury.chat import Sample, chat
from llmjury.providers.base import ProviderSpec
from llmjury.running import claim_waits
from llmjury.running.cache import SampleStore
from llmjury.running.claim_waits import CLAIM_WINDOW
from llmjury.running.limits import RateLimit
from llmjury.store.database import Database, Row
from llmjury.store.location import StoreLocation

WAITED = 30
POLLS = 6


class Counting:
    """A Database that counts the statements sent through it."""

    def __init__(self, db: Database, counter: list[str]) -> None:
        self._db, self._counter = db, counter

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        self._counter.append(sql)
        return self._db.execute(sql, params)

    def executemany(self, sql: str, rows: Any) -> None:
        self._counter.append(sql)
        self._db.executemany(sql, rows)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


def spec(server: Any) -> ProviderSpec:
    return ProviderSpec.parse(f"openai:gpt-4o-mini;base_url={server.base_url}")


def test_a_waiting_process_sends_one_statement_a_poll_for_all_its_keys(store_location, make_engine, openai_server,
                                                                       monkeypatch):
    poll_s = claim_waits.POLL_S
    monkeypatch.setattr(claim_waits, "POLL_S", 0.1)  # the looks sooner: their count is what is checked
    monkeypatch.setattr(claim_waits, "QUIET_POLL_S", 0.12)  # PostgreSQL's looks of a quiet spell too
    holder = SampleStore(store_location)  # another live process of this machine holds every key
    requests = [chat(("user", f"q{i}")) for i in range(WAITED)]
    keys = [r.sample_key("openai:gpt-4o-mini", 0) for r in requests]
    assert holder.claim(keys, "run-0:holder", run_id="run-0").result().held == {}
    statements: list[str] = []
    opened = StoreLocation.open
    monkeypatch.setattr(StoreLocation, "open", lambda self: Counting(opened(self), statements))
    waiting = make_engine(store=store_location)
    assert waiting._waits is not None
    polled, watch = threading.Event(), waiting._waits.store.watch
    looks: list[int] = []

    def counted_watch(wanted: Sequence[str], run_id: str) -> Any:
        if len(wanted) < WAITED:  # some requests are still being claimed: their claims are statements too
            return watch(wanted, run_id)
        looks.append(len(statements))
        if len(looks) == POLLS:
            polled.set()
        return watch(wanted, run_id)

    monkeypatch.setattr(waiting._waits.store, "watch", counted_watch)

    async def ask_all() -> list[str]:
        done = await asyncio.gather(*(waiting.complete(spec(openai_server), r) for r in requests))
        return [c.text for c in done]

    running = waiting.submit(ask_all())
    assert polled.wait(timeout=60)
    # Between two looks at the store, the waiting process sends one statement: the look itself.
    assert [b - a for a, b in itertools.pairwise(looks)][:POLLS - 1] == [1] * (POLLS - 1)
    assert poll_s >= 0.2  # so at most five statements a second, however many keys wait
    for request, key in zip(requests, keys, strict=True):
        holder.put(key, "openai:gpt-4o-mini", "", request.model_dump_json(),
                   Sample(text=f"held {key[:6]}"), "run-0").result()
    assert running.result(timeout=60) == [f"held {key[:6]}" for key in keys]
    assert openai_server.requests == []  # nothing the holder paid for is paid again
    holder.close()


def test_claims_follow_calls_a_process_holds_no_more_than_its_window(make_engine, openai_server, tmp_path):
    """Sixty requests planned at once, the server holding every answer: the process has claimed only
    its window (CLAIM_WINDOW x its concurrency), so a process killed now leaves only those to take over."""
    gate, arrived = threading.Event(), threading.Event()

    def reply(body: dict[str, Any], index: int) -> str:
        if len(openai_server.requests) >= 2:
            arrived.set()
        gate.wait(timeout=60)
        return "answer"

    openai_server.reply = reply
    engine = make_engine(rate_limits={"openai:gpt-4o-mini": RateLimit(concurrency=2)})
    assert engine.store is not None

    async def ask_all() -> list[Any]:
        return await asyncio.gather(*(engine.complete(spec(openai_server), chat(("user", f"q{i}")))
                                      for i in range(60)))

    running = engine.submit(ask_all())
    try:
        assert arrived.wait(timeout=60)
        db = engine.store.location.open()
        try:
            ((claims,),) = db.execute("SELECT COUNT(*) FROM claims WHERE pid = ?", (os.getpid(),))
        finally:
            db.close()
        assert 2 <= claims <= CLAIM_WINDOW * 2
    finally:
        gate.set()
    assert len(running.result(timeout=60)) == 60


def test_machines_sharing_a_host_name_are_told_apart_by_their_pid_namespace():
    """Two containers named alike must not read each other's pids as their own (and take over live claims)."""
    import subprocess
    import sys

    from llmjury.running.leases import HOST, machine

    assert machine() == HOST and HOST.split("/")[0] == __import__("socket").gethostname()
    probe = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c",
                            "from llmjury.running.leases import HOST; print(HOST)"],
                           capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"`unshare --pid` cannot be run here (it needs root): {probe.stderr.strip()[:200]}")
    other = probe.stdout.strip()
    assert other.split("/")[0] == HOST.split("/")[0] and other != HOST
