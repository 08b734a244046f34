"""The Batch API lane: a provider's single-turn calls sent through its batch API at the batch rate.

A provider spec with `;batch=1` (or `all`, or `file`) routes its calls here instead of to a
synchronous request. The engine claims a call's keys as for any call, then the lane queues them in
the run store (llmjury.running.batch_queue) and waits; a loop on the engine's event loop packs
queued items into batches under the provider's caps, creates them through the official SDK,
polls them, and writes each answer to the cache, which ends the claim and wakes the waiting case.

Only single-turn requests (no assistant turn yet: a judge's call) go by default: a multi-turn
pipeline (a simulated dialogue) would wait one batch round trip per turn, so it stays synchronous
unless the spec says `batch=all`. `batch=file` queues requests for `llmjury batch export`
(vLLM's `run-batch`, a Ray Data pipeline) and `llmjury batch import` instead of a provider's API.

`--llm-batch submit` submits and does not wait: each case whose call went into a batch is left
pending, and the next run on the same store collects what the provider has answered by then.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from llmjury.batch.api import BatchApi, EnqueuedTokenLimit, PendingItem
from llmjury.chat import ChatRequest, Sample
from llmjury.errors import PermanentProviderError, ProviderError
from llmjury.meter import CallMeter
from llmjury.pricing import PriceTable
from llmjury.providers.base import Provider, ProviderSpec
from llmjury.running.batch_queue import BatchQueue, QueuedItem
from llmjury.running.limits import completion_budget, estimate_prompt_tokens, estimate_tokens
from llmjury.store.location import StoreLocation

BatchMode = Literal["wait", "submit"]
T = TypeVar("T")
#: The shortest pause between two rounds of the lane's loop.
MIN_GAP_S = 0.2
#: The spec option's values: which of a provider's calls go by batch.
LANES = ("1", "all", "file")


#: The cause an unscored verdict's error starts with when its call waits in a batch.
PENDING_CAUSE = "batch pending"


class BatchPendingError(PermanentProviderError):
    """The call is queued or inside a provider's batch, and this run does not wait for it
    (`--llm-batch submit`, or the file lane): the next run on the same store collects it."""

    def __init__(self, provider: str, where: str) -> None:
        super().__init__(provider, where)
        # The text reads from the cause, as a budget refusal's does (llmjury.session.refusals).
        self.args = (f"{PENDING_CAUSE}: {where}; {provider} not called yet: run again on the same store "
                     "to collect it",)


def pending_in_batch(error: str | None) -> bool:
    """Whether an unscored verdict's error text is a call left waiting in a batch."""
    return bool(error) and f"{PENDING_CAUSE}: " in str(error)


@dataclass(frozen=True)
class LaneTiming:
    """How often the loop looks at the store and the provider, how long the queue must be quiet
    before a batch that is not full is sent, and how long a submitter's or poller's hold lasts."""

    poll_s: float = 30.0
    quiet_s: float = 2.0
    lease_s: float = 60.0


class BatchLane:
    def __init__(self, location: StoreLocation, run_id: str, mode: BatchMode, meter: CallMeter, prices: PriceTable,
                 make_api: Callable[[ProviderSpec], BatchApi], timing: LaneTiming = LaneTiming()) -> None:
        self.queue = BatchQueue(location)
        self.run_id, self.mode, self.meter, self.prices, self.timing = run_id, mode, meter, prices, timing
        self._make_api = make_api
        self._apis: dict[ProviderSpec, BatchApi] = {}
        self._holder = f"{run_id}:{secrets.token_hex(4)}"
        self._waiting: dict[str, asyncio.Future[Sample]] = {}  # answers the cases wait for
        self._sending: dict[str, asyncio.Future[None]] = {}  # `--llm-batch submit`: until each is in a batch
        self._provider_of: dict[str, str] = {}
        self._loop_task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._backoff: dict[ProviderSpec, int] = {}
        self._arriving = 0  # calls of this process between their claim and their queue row
        self._collected: list[Callable[[str, dict[str, Sample]], None]] = []

    def on_collected(self, listener: Callable[[str, dict[str, Sample]], None]) -> None:
        """Tell `listener` (provider, answers) of each batch this process collects: a batch is paid
        once, where it is collected, whether its requests are asked before or after (a run that
        adopts a killed run's batches reads most of their answers from the cache)."""
        self._collected.append(listener)

    @staticmethod
    def takes(provider: Provider, request: ChatRequest) -> bool:
        """Whether this call goes by batch: its spec asks for a lane, and the request is single-turn
        (or the spec says `all`)."""
        lane = provider.spec.text_option("batch")
        if lane is None or lane not in LANES:
            return False
        return lane == "all" or not any(message.role == "assistant" for message in request.messages)

    async def fetch(self, provider: Provider, request: ChatRequest, keys: Sequence[str],
                    indices: Sequence[int]) -> tuple[list[Sample], set[str]]:
        """The samples of `keys` (claimed by the caller), through the provider's batch; also the keys
        an earlier run or process had queued already (not paid again). Raises BatchPendingError
        when this run does not wait, and PermanentProviderError for a line given up on."""
        file_lane = provider.spec.text_option("batch") == "file"
        if not file_lane:
            self._start(provider.spec)
        self.meter.admit(provider.name)  # the budget: no new paid work once the spend reached it
        est = estimate_tokens(request, 1)
        reserve = self.prices.batch_cost(provider.name, estimate_prompt_tokens(request), completion_budget(request)) \
            or 0.0
        items = [QueuedItem(key, request.task, request.model_dump_json(), index, est, reserve)
                 for key, index in zip(keys, indices, strict=True)]
        self._arriving += 1
        try:
            queued = await asyncio.wrap_future(self.queue.enqueue(
                provider.name, "file" if file_lane else "api", items, self.run_id))
        finally:
            self._arriving -= 1
        if reserve:
            self.meter.spent(provider.name, reserve * (len(items) - len(queued)))
        if file_lane:
            raise BatchPendingError(provider.name, f"{len(keys)} request(s) queued for `llmjury batch export`")
        self._provider_of.update(dict.fromkeys(keys, provider.name))
        if self.mode == "submit":
            await asyncio.gather(*(self._future(self._sending, key) for key in keys))
            answered = self.queue.answers(keys)
            if len(answered) < len(keys):
                raise BatchPendingError(provider.name, f"{len(keys) - len(answered)} request(s) in its batch")
            return [answered[key] for key in keys], queued
        futures = [self._future(self._waiting, key) for key in keys]
        return list(await asyncio.gather(*futures)), queued

    def _future(self, table: dict[str, asyncio.Future[T]], key: str) -> asyncio.Future[T]:
        if key not in table or table[key].done():
            table[key] = asyncio.get_running_loop().create_future()
        if self._loop_task is not None:
            self._wake.set()
        return table[key]

    def _start(self, spec: ProviderSpec) -> None:
        if spec not in self._apis:
            self._apis[spec] = self._make_api(spec)
        if self._loop_task is None or self._loop_task.done():
            self._loop_task = asyncio.get_running_loop().create_task(self._run(), name="llmjury-batch-lane")
        self._wake.set()

    async def _run(self) -> None:
        while True:
            self._wake.clear()  # before the round: a case queued during it wakes the next one at once
            await self._tick()
            gap = min(self.timing.poll_s, MIN_GAP_S)  # cases queueing fast wake it once a gap, not once each
            await asyncio.sleep(gap)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.timing.poll_s - gap)

    async def _tick(self) -> None:
        """One round: hand answers and give-ups to the waiting cases, send what is queued, collect
        what has ended, and keep this process's holds."""
        self._deliver()
        for spec, api in list(self._apis.items()):
            try:
                await self._adopt(spec, api)
                await self._send(spec, api)
                await self._collect(spec, api)
            except ProviderError:
                continue  # a dropped poll, a server error: the next round tries again
        self.queue.renew(self._holder, self.timing.lease_s)
        self._deliver()

    def _deliver(self) -> None:
        """Wake the cases whose answers are stored, whose lines were given up on, or (submitting
        only) whose requests are inside a batch or already answered."""
        waiting = [key for key, future in self._waiting.items() if not future.done()]
        sending = [key for key, future in self._sending.items() if not future.done()]
        if not waiting and not sending:
            return
        for key, sample in self.queue.answers(waiting).items():
            self._waiting.pop(key).set_result(sample)
        states = self.queue.states([key for key in waiting if key in self._waiting] + sending)
        for key in waiting:
            state = states.get(key)
            if key in self._waiting and state is not None and state.state == "failed":
                self._waiting.pop(key).set_exception(PermanentProviderError(
                    self._provider_of.get(key, "batch"), f"its batch line failed twice ({state.error})"))
        for key in sending:
            state = states.get(key)
            if state is None or state.state in ("submitted", "failed"):
                self._sending.pop(key).set_result(None)

    async def _send(self, spec: ProviderSpec, api: BatchApi) -> None:
        if self._backoff.get(spec, 0) > 0:
            self._backoff[spec] -= 1
            return
        name = str(spec)
        # While this process still queues (the writer has its rows), only a full batch goes.
        quiet_s = float("inf") if self._arriving else self.timing.quiet_s
        while (packed := self.queue.take(name, f"llmjury-{secrets.token_hex(8)}", limit=api.max_lines,
                                         max_bytes=api.max_bytes, quiet_s=quiet_s, holder=self._holder,
                                         lease_s=self.timing.lease_s)) is not None:
            items = [PendingItem(i.key, i.request, i.sample_index, i.est_tokens) for i in packed.items]
            try:
                remote = await api.submit(packed.job, spec.model, items)
            except EnqueuedTokenLimit:
                self.queue.unpack(packed.job)
                self._backoff[spec] = 3  # the provider's queue is full: wait a few rounds
                return
            except ProviderError as exc:
                self._settle(name, packed.job, {}, {item.key: str(exc) for item in packed.items})
                continue
            self.queue.submitted(packed.job, remote)

    async def _adopt(self, spec: ProviderSpec, api: BatchApi) -> None:
        """Batches created by a submitter that died before recording them: found by their tag and
        adopted, or (never created) queued again."""
        for packed in self.queue.stranded(str(spec), self._holder, self.timing.lease_s):
            remote = await api.find(packed.job)
            if remote is None:
                self.queue.unpack(packed.job)
            else:
                self.queue.submitted(packed.job, remote)

    async def _collect(self, spec: ProviderSpec, api: BatchApi) -> None:
        for job, remote in self.queue.to_poll(str(spec), self._holder, self.timing.lease_s):
            status = await api.status(remote)
            if status.state != "ended":
                continue
            results = await api.results(remote)
            failures = {key: f"{failure.code}: {failure.message}" for key, failure in results.failures.items()}
            self._settle(str(spec), job, results.samples, failures)

    def _settle(self, provider: str, job: str, answers: dict[str, Sample], failures: dict[str, str]) -> None:
        answered = self.queue.collected(job, provider, answers, failures)
        for listener in self._collected:
            listener(provider, answers)
        settled = 0.0
        for item, run_id in answered:
            if run_id != self.run_id:
                continue  # reserved by the run that queued it: its estimate stands in that run's spend
            usage = answers[item.key].usage
            price = self.prices.batch_cost(provider, usage.prompt_tokens, usage.completion_tokens) or 0.0
            settled += price - item.reserved_usd
        if settled:
            self.meter.spent(provider, settled)
        self._wake.set()

    async def aclose(self) -> None:
        if self._loop_task is not None:
            self._loop_task.cancel()
            await asyncio.gather(self._loop_task, return_exceptions=True)
        for api in self._apis.values():
            await api.aclose()
        self.queue.release(self._holder)  # the next run polls this run's batches at once
        self.queue.close()
