"""The Batch API lane end to end, through the real `openai` and `google-genai` SDKs against the fake
servers: 100,000 requests in exactly two batches that survive a `kill -9` of the run that submitted
them; an expired batch whose missing share alone is sent once more; a batch created just before its
submitter died, adopted by its tag instead of created again. Each scenario for OpenAI and Gemini."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from llmjury.batch.api import batch_api
from llmjury.chat import ChatRequest, chat
from llmjury.pricing import Price, PriceTable
from llmjury.providers.base import ProviderSpec
from llmjury.results.aggregate import usage_section
from llmjury.running.batch_lane import BatchLane, LaneTiming
from llmjury.running.cache import SampleStore
from llmjury.running.engine import Engine
from llmjury.running.ledger import usage_by_provider
from llmjury.running.settings import Settings
from llmjury.store.location import StoreLocation
from llmjury.testing import FakeGemini, FakeOpenAI
from llmjury.testing.fake_server import FakeServer

MODEL = "judge-model"
PRICES = PriceTable({MODEL: Price(input=0.15, output=0.60, batch_input=0.075, batch_output=0.30)})
FAST = LaneTiming(poll_s=0.2, quiet_s=2.0, lease_s=1.0)


def spec_for(kind: str, server: FakeServer) -> ProviderSpec:
    url = server.base_url if kind == "openai" else server.origin  # type: ignore[attr-defined]
    return ProviderSpec.parse(f"{kind}:{MODEL};api_key=test-key;base_url={url};batch=1")


def tiny(count: int) -> list[ChatRequest]:
    return [chat(("user", f"is {i} even? yes or no"), max_tokens=2) for i in range(count)]


class HeldCreate:
    """Wraps a fake's responder: a batch create is made, then its answer never comes (the client's
    process is killed while it waits), as a crash between `create` and the store's commit."""

    def __init__(self, server: FakeServer) -> None:
        self.server, self.created = server, threading.Event()
        self._release = threading.Event()
        self._respond = server.respond
        server.respond = self.respond  # type: ignore[method-assign]

    def respond(self, method: str, path: str, body: dict[str, Any], raw: bytes, headers: dict[str, str]) -> Any:
        before = self.server.batches.creations  # type: ignore[attr-defined]
        answer = self._respond(method, path, body, raw, headers)
        if self.server.batches.creations > before:  # type: ignore[attr-defined]
            self.created.set()
            self._release.wait(timeout=120)
        return answer

    def release(self) -> None:
        self._release.set()


@pytest.fixture(params=["openai", "gemini"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def server(kind: str) -> Iterator[FakeServer]:
    made: FakeServer = FakeOpenAI() if kind == "openai" else FakeGemini()
    with made:
        made.batches.script.polls_per_step = None  # type: ignore[attr-defined]  # batches end when a test says
        yield made


def lane_engine(location: StoreLocation, run_id: str, mode: str = "wait", timing: LaneTiming = FAST) -> Engine:
    lane = BatchLane(location, run_id, mode, _NoMeter(), PRICES, batch_api, timing)  # type: ignore[arg-type]
    return Engine(Settings(retry_base_wait=0.01), SampleStore(location), run_id, lane=lane)


class _NoMeter:
    def flight(self, provider: str) -> Any:
        from contextlib import nullcontext

        return nullcontext()

    def paid(self, provider: str, samples: Any) -> None:
        return None

    def admit(self, provider: str) -> None:
        return None

    def spent(self, provider: str, usd: float) -> None:
        return None


def ask(engine: Engine, spec: ProviderSpec, requests: list[ChatRequest]) -> Any:
    async def every() -> list[Any]:
        return await asyncio.gather(*(engine.complete(spec, r) for r in requests), return_exceptions=True)

    return engine.submit(every())


def until(what: str, done: Callable[[], bool], timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def open_jobs(path: Path) -> int:
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        try:
            return int(db.execute("SELECT COUNT(*) FROM batch_jobs WHERE state = 'open'").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


SUBMITTER = """
import asyncio, sys, pathlib
sys.path.insert(0, sys.argv[4])
from test_lane_sdk import ask, lane_engine, spec_for, tiny
from llmjury.providers.base import ProviderSpec
from llmjury.store.location import StoreLocation
engine = lane_engine(StoreLocation("sqlite", pathlib.Path(sys.argv[1])), "run-killed")
spec = ProviderSpec.parse(sys.argv[2])
ask(engine, spec, tiny(int(sys.argv[3]))).result()
print("finished", flush=True)
"""


def submitter(cache: Path, spec: ProviderSpec, count: int) -> subprocess.Popen[str]:
    text = f"{spec.kind}:{spec.model};api_key=test-key;base_url={spec.text_option('base_url')};batch=1"
    return subprocess.Popen([sys.executable, "-c", SUBMITTER, str(cache), text, str(count), str(Path(__file__).parent)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


@pytest.mark.e2e  # 100,000 requests in a process killed after it submitted them, then a second run
def test_100k_requests_go_in_two_batches_that_survive_a_kill_and_are_collected_by_the_next_run(
        kind, server, tmp_path):
    count = 100_000
    cache = tmp_path / "cache.sqlite"
    spec = spec_for(kind, server)
    first = submitter(cache, spec, count)
    try:
        until("two batches created and recorded", lambda: open_jobs(cache) == 2 or first.poll() is not None)
        assert first.poll() is None, first.communicate()
        assert server.batches.creations == 2  # type: ignore[attr-defined]
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    for batch in server.batches.listing():  # type: ignore[attr-defined]
        assert len(batch.items) == 50_000
        server.batches.complete(batch.id)  # type: ignore[attr-defined]
    engine = lane_engine(StoreLocation("sqlite", cache), "run-again")
    try:
        results = ask(engine, spec, tiny(count)).result(timeout=900)
        assert not [r for r in results if isinstance(r, BaseException)][:3]
        ledger = usage_by_provider(engine.ledger)[str(spec)]
    finally:
        engine.close()
    assert server.batches.creations == 2  # type: ignore[attr-defined]  # nothing sent again
    assert server.chat_calls == 0  # type: ignore[attr-defined]  # and nothing synchronously
    assert ledger["calls"] == 0 and ledger["batch_samples"] == count
    with sqlite3.connect(cache) as db:
        assert db.execute("SELECT COUNT(*) FROM samples").fetchone() == (count,)
    usage = usage_section({str(spec): ledger}, PRICES, {}).providers[str(spec)]
    tokens = ledger["batch_prompt_tokens"], ledger["batch_completion_tokens"]
    assert usage["cost_usd"] == pytest.approx(PRICES.batch_cost(str(spec), *map(int, tokens)))
    assert usage["batch_saving_usd"] == pytest.approx(usage["cost_usd"])  # half the synchronous price


def test_an_expired_batch_sends_only_its_missing_share_again_and_once(kind, server, tmp_path):
    # 50 requests are queued at once (the 2 s quiet spell is for 100,000 on a loaded machine)
    engine = lane_engine(StoreLocation("sqlite", tmp_path / "cache.sqlite"), "run-1",
                         timing=dataclasses.replace(FAST, quiet_s=0.5))
    spec = spec_for(kind, server)
    try:
        asked = ask(engine, spec, tiny(50))
        until("the first batch", lambda: server.batches.creations == 1)  # type: ignore[attr-defined]
        (first,) = server.batches.listing()  # type: ignore[attr-defined]
        server.batches.expire(first.id, 0.6)  # type: ignore[attr-defined]
        until("the second batch", lambda: server.batches.creations == 2)  # type: ignore[attr-defined]
        second = server.batches.listing()[0]  # type: ignore[attr-defined]
        assert len(second.items) == 20  # the 40% the expired batch did not run
        server.batches.expire(second.id, 0.5)  # type: ignore[attr-defined]
        results = asked.result(timeout=120)
    finally:
        engine.close()
    assert server.batches.creations == 2  # type: ignore[attr-defined]  # never a third time
    failed = [r for r in results if isinstance(r, BaseException)]
    assert len(failed) == 10 and all("failed twice" in str(r) for r in failed)
    assert sum(not isinstance(r, BaseException) for r in results) == 40
    assert server.chat_calls == 0  # type: ignore[attr-defined]


@pytest.mark.e2e  # a process killed while the provider's create answer is on its way
def test_a_batch_created_just_before_its_submitter_died_is_adopted_not_created_again(kind, server, tmp_path):
    cache = tmp_path / "cache.sqlite"
    spec = spec_for(kind, server)
    held = HeldCreate(server)
    first = submitter(cache, spec, 30)
    try:
        until("the create", lambda: held.created.is_set() or first.poll() is not None)
        assert first.poll() is None, first.communicate()
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        held.release()
    assert open_jobs(cache) == 0  # the store never heard of the batch's id
    (batch,) = server.batches.listing()  # type: ignore[attr-defined]
    server.batches.complete(batch.id)  # type: ignore[attr-defined]
    engine = lane_engine(StoreLocation("sqlite", cache), "run-again")
    try:
        results = ask(engine, spec, tiny(30)).result(timeout=120)
    finally:
        engine.close()
    assert all(not isinstance(r, BaseException) for r in results), results[:3]
    assert server.batches.creations == 1  # type: ignore[attr-defined]  # adopted by its tag
    assert server.chat_calls == 0  # type: ignore[attr-defined]
