"""The Batch API lane against an in-memory provider: packing under the caps, durable state in the
store (a new lane on the same store resumes and sends nothing twice), adoption of a batch created
before a crash, partial expiry, lines given up on, submit-and-end, the file lane and the budget.

The same scenarios through the real SDKs and the fake servers are in tests/batch/test_lane_sdk.py."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from llmjury.batch.api import BatchApi, EnqueuedTokenLimit, JobStatus, PendingItem
from llmjury.batch.results import BatchResults, LineFailure
from llmjury.chat import Sample, Usage, chat
from llmjury.errors import PermanentProviderError
from llmjury.pricing import Price, PriceTable
from llmjury.providers.base import ProviderSpec
from llmjury.running.batch_lane import BatchLane, BatchPendingError, LaneTiming
from llmjury.running.cache import SampleStore
from llmjury.running.engine import Engine
from llmjury.running.ledger import usage_by_provider
from llmjury.running.settings import Settings

FAST = LaneTiming(poll_s=0.05, quiet_s=0.2, lease_s=0.5)


@dataclass
class Remote:
    job: str
    items: list[PendingItem]
    polls: int = 0
    ended: bool = False


@dataclass
class MemoryBatches:
    """A provider's batch API in memory: every batch ends after `polls` polls; `expire` answers only
    the first share of a batch's lines, `fail` names keys whose lines fail."""

    max_lines: int = 50_000
    max_bytes: int = 200_000_000
    polls: int = 1
    expire: float | None = None
    fail: set[str] = field(default_factory=set)
    token_limit_once: bool = False
    remotes: dict[str, Remote] = field(default_factory=dict)
    ids: itertools.count[int] = field(default_factory=itertools.count)

    async def submit(self, job: str, model: str, items: Sequence[PendingItem]) -> str:
        if self.token_limit_once:
            self.token_limit_once = False
            raise EnqueuedTokenLimit("enqueued token limit reached")
        remote = f"batch_{next(self.ids)}"
        self.remotes[remote] = Remote(job, list(items))
        return remote

    async def find(self, job: str) -> str | None:
        return next((rid for rid, remote in self.remotes.items() if remote.job == job), None)

    async def status(self, remote_id: str) -> JobStatus:
        remote = self.remotes[remote_id]
        remote.polls += 1
        remote.ended = remote.polls >= self.polls
        return JobStatus("ended" if remote.ended else "running", "completed" if remote.ended else "in_progress")

    async def results(self, remote_id: str) -> BatchResults:
        items = self.remotes[remote_id].items
        answered = len(items) if self.expire is None else int(len(items) * self.expire)
        results = BatchResults()
        for position, item in enumerate(items):
            if item.key in self.fail:
                results.failures[item.key] = LineFailure(item.key, "server_error", "the line failed")
            elif position < answered:
                results.samples[item.key] = Sample(text=f"answer {item.key[:8]}",
                                                   usage=Usage(prompt_tokens=10, completion_tokens=2))
            else:
                results.failures[item.key] = LineFailure(item.key, "batch_expired", "not run before the window")
        return results

    async def cancel(self, remote_id: str) -> None:
        return None

    async def aclose(self) -> None:
        return None

    @property
    def lines(self) -> int:
        return sum(len(remote.items) for remote in self.remotes.values())


SPEC = ProviderSpec.parse("openai:judge-model;batch=1")
PRICES = PriceTable({"judge-model": Price(input=1_000_000, output=1_000_000, batch_input=500_000,
                                          batch_output=500_000)})


def requests(count: int) -> list:
    return [chat(("user", f"rate answer {i}"), max_tokens=8) for i in range(count)]


@pytest.fixture
def lane_engine(store_location):
    made: list[Engine] = []

    def make(api: BatchApi, *, mode: str = "wait", run_id: str = "run-1", meter=None,
             timing: LaneTiming = FAST) -> Engine:
        store = SampleStore(store_location)
        lane = BatchLane(store_location, run_id, mode, meter or RecordingMeter(), PRICES, lambda spec: api, timing)
        engine = Engine(Settings(retry_base_wait=0.01), store, run_id, lane=lane, meter=meter)
        made.append(engine)
        return engine

    yield make
    for engine in made:
        engine.close()


@dataclass
class RecordingMeter:
    spend: float = 0.0
    limit: float | None = None
    calls: int = 0

    def flight(self, provider):
        from contextlib import nullcontext

        self.calls += 1
        return nullcontext()

    def paid(self, provider, samples):
        return None

    def admit(self, provider):
        if self.limit is not None and self.spend >= self.limit:
            raise PermanentProviderError(provider, "budget: the run's budget is spent")

    def spent(self, provider, usd):
        self.spend += usd


def ask_all(engine: Engine, reqs) -> list:
    async def every():
        return await asyncio.gather(*(engine.complete(SPEC, r) for r in reqs), return_exceptions=True)

    return engine.run(every())


def test_a_batch_stays_under_the_providers_file_cap(lane_engine):
    api = MemoryBatches(max_bytes=4_000)  # a few requests' worth of bytes
    engine = lane_engine(api)
    results = ask_all(engine, requests(20))
    assert all(r.text.startswith("answer") for r in results)
    assert len(api.remotes) >= 2 and api.lines == 20
    for remote in api.remotes.values():
        assert sum(len(item.request.model_dump_json()) for item in remote.items) * 1.5 <= 4_000


def test_queued_calls_go_in_batches_under_the_line_cap_and_none_is_sent_synchronously(lane_engine):
    """Only a full batch goes until all 100 requests are queued (a quiet spell under load must not
    seal a partial one): then the rest goes as the last batch. Waits on the queue, not on time."""
    api = MemoryBatches(max_lines=40)
    engine = lane_engine(api, timing=dataclasses.replace(FAST, quiet_s=float("inf")))
    reqs = requests(100)

    async def every():
        return await asyncio.gather(*(engine.complete(SPEC, r) for r in reqs), return_exceptions=True)

    running = engine.submit(every())
    lane = engine.lane
    assert lane is not None
    deadline = time.monotonic() + 120
    keys = [q.sample_key("openai:judge-model", 0) for q in reqs]
    def seen() -> int:  # queued, inside a batch or already answered (a first batch may end before the last is queued)
        return len(set(lane.queue.states(keys)) | set(lane.queue.answers(keys)))

    while seen() < 100 and not running.done():
        assert time.monotonic() < deadline, "the requests were never all queued"
        time.sleep(0.01)
    lane.timing = FAST  # now a quiet queue may send its partial batch
    results = running.result(timeout=120)
    assert [r.text for r in results] == [f"answer {q.sample_key('openai:judge-model', 0)[:8]}" for q in reqs]
    assert len(api.remotes) == 3 and api.lines == 100  # 40 + 40 + 20
    assert usage_by_provider(engine.ledger)["openai:judge-model"]["calls"] == 0
    assert usage_by_provider(engine.ledger)["openai:judge-model"]["batch_samples"] == 100


def test_a_new_lane_on_the_same_store_resumes_the_batches_and_sends_nothing_twice(lane_engine):
    api = MemoryBatches(polls=10**9)  # never ends while the first run lives
    first = lane_engine(api, mode="submit", run_id="run-1")
    pending = ask_all(first, requests(30))
    assert all(isinstance(r, BatchPendingError) for r in pending), pending
    assert len(api.remotes) == 1
    first.close()
    api.polls = 1  # the provider finishes meanwhile
    meter = RecordingMeter()
    second = lane_engine(api, run_id="run-2", meter=meter)
    answers = ask_all(second, requests(30))
    assert all(r.text.startswith("answer") for r in answers), answers
    assert len(api.remotes) == 1 and api.lines == 30  # resumed: nothing sent again
    # The first run reserved the batch's estimate; this one settles nothing of it (it went negative).
    assert meter.spend == 0.0


def test_a_batch_adopted_from_an_earlier_run_is_counted_where_collected_though_read_from_the_cache(lane_engine):
    """The next run collects the whole batch for its first request: the other 29 read their answers
    from the cache, yet all 30 were paid through the batch in this run (its cost is this run's)."""
    api = MemoryBatches(polls=10**9)
    first = lane_engine(api, mode="submit", run_id="run-1")
    ask_all(first, requests(30))
    first.close()
    api.polls = 1
    second = lane_engine(api, run_id="run-2")
    reqs = requests(30)
    assert ask_all(second, reqs[:1])[0].text.startswith("answer")  # the lane collected all 30 for it
    assert all(r.text.startswith("answer") for r in ask_all(second, reqs[1:]))
    usage = usage_by_provider(second.ledger)["openai:judge-model"]
    assert (usage["batch_samples"], usage["batch_prompt_tokens"], usage["cached_samples"]) == (30, 300, 0)


def test_a_run_that_ends_lets_the_next_poll_its_batches_at_once(lane_engine, store_location):
    """A run's hold on the batches it polls ends with it: the next run waited out the hold (a minute)."""
    from llmjury.running.batch_queue import BatchQueue

    first = lane_engine(MemoryBatches(polls=10**9), mode="submit", run_id="run-1")
    ask_all(first, requests(3))
    first.close()
    queue = BatchQueue(store_location)
    assert len(queue.to_poll("openai:judge-model", "run-2:x", lease_s=60)) == 1
    queue.close()


def test_a_line_an_earlier_run_gave_up_on_is_asked_again_by_the_next(lane_engine):
    api = MemoryBatches()
    reqs = requests(4)
    api.fail = {reqs[0].sample_key("openai:judge-model", 0)}
    failed = ask_all(lane_engine(api, run_id="run-1"), reqs)
    assert "failed twice" in str(failed[0])
    api.fail = set()
    again = ask_all(lane_engine(api, run_id="run-2"), reqs[:1])
    assert again[0].text.startswith("answer")


def test_expired_lines_are_sent_once_more_and_completed_ones_kept(lane_engine):
    api = MemoryBatches(expire=0.6)
    engine = lane_engine(api)
    results = ask_all(engine, requests(10))
    sizes = [len(remote.items) for remote in api.remotes.values()]
    assert sizes == [10, 4]  # 60% answered; the missing 40% sent once more (60% of it answered), never again
    failed = [r for r in results if isinstance(r, Exception)]
    assert len(failed) == 2 and all("failed twice" in str(r) for r in failed)
    assert sum(not isinstance(r, Exception) for r in results) == 8


def test_a_batch_created_before_the_submitter_died_is_adopted_not_created_again(lane_engine, store_location):
    from llmjury.running.batch_queue import BatchQueue, QueuedItem

    api = MemoryBatches()
    reqs = requests(5)
    keys = [r.sample_key("openai:judge-model", 0) for r in reqs]
    queue = BatchQueue(store_location)
    items = [QueuedItem(k, r.task, r.model_dump_json(), 0, 10, 0.0) for k, r in zip(keys, reqs, strict=True)]
    queue.enqueue("openai:judge-model", "api", items, "run-dead").result()
    packed = queue.take("openai:judge-model", "job-dead", limit=100, max_bytes=10**9, quiet_s=0, holder="run-dead:1",
                        lease_s=0.2)
    assert packed is not None
    # The dead submitter asked the provider, then died before recording the batch's id.
    asyncio.run(api.submit(packed.job, "judge-model", [PendingItem(i.key, i.request, 0, 10) for i in packed.items]))
    queue.close()
    engine = lane_engine(api, run_id="run-2")
    results = ask_all(engine, reqs)
    assert all(r.text.startswith("answer") for r in results), results
    assert len(api.remotes) == 1  # adopted by its tag


def test_the_enqueued_token_limit_holds_the_batch_back_and_it_goes_later(lane_engine):
    api = MemoryBatches(token_limit_once=True)
    results = ask_all(lane_engine(api), requests(4))
    assert all(r.text.startswith("answer") for r in results)
    assert len(api.remotes) == 1


def test_the_file_lane_queues_for_export_and_import_fills_the_cache(lane_engine, store_location, tmp_path):
    from llmjury.running.batch_queue import BatchQueue

    file_spec = ProviderSpec.parse("openai:judge-model;batch=file")
    engine = lane_engine(MemoryBatches())
    reqs = requests(3)

    async def every():
        return await asyncio.gather(*(engine.complete(file_spec, r) for r in reqs), return_exceptions=True)

    assert all(isinstance(r, BatchPendingError) for r in engine.run(every()))
    queue = BatchQueue(store_location)
    queued = queue.queued_for_file()
    assert [provider for provider, _ in queued] == ["openai:judge-model"] * 3
    assert len(queue.import_answers({item.key: Sample(text="from vllm") for _, item in queued})) == 3
    queue.close()
    again = lane_engine(MemoryBatches(), run_id="run-2")
    async def replayed():
        return await asyncio.gather(*(again.complete(file_spec, r) for r in reqs))

    answers = again.run(replayed())
    assert [a.text for a in answers] == ["from vllm"] * 3 and all(a.cached == [True] for a in answers)


def test_the_budget_reserves_at_the_batch_rate_when_queued_and_settles_on_collection(lane_engine):
    meter = RecordingMeter()
    engine = lane_engine(MemoryBatches(), meter=meter)
    ask_all(engine, requests(4))
    # Each answer: 10 prompt + 2 completion tokens at $0.5 per token.
    assert meter.spend == pytest.approx(4 * 12 * 0.5)


def test_a_spent_budget_queues_nothing(lane_engine):
    api = MemoryBatches()
    results = ask_all(lane_engine(api, meter=RecordingMeter(spend=5.0, limit=1.0)), requests(2))
    assert all("budget" in str(r) for r in results) and api.remotes == {}


def test_a_multi_turn_request_stays_synchronous_unless_the_spec_says_all():
    from llmjury.providers.base import resolve

    turn = chat(("user", "hi"), ("assistant", "hello"), ("user", "and then?"))
    assert not BatchLane.takes(resolve(ProviderSpec.parse("openai:m;batch=1")), turn)
    assert BatchLane.takes(resolve(ProviderSpec.parse("openai:m;batch=all")), turn)
    assert BatchLane.takes(resolve(ProviderSpec.parse("openai:m;batch=1")), chat(("user", "rate this")))
    assert not BatchLane.takes(resolve(ProviderSpec.parse("openai:m")), chat(("user", "rate this")))
