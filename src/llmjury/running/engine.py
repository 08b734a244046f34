"""The engine: every LLM call of a process goes through here.

It owns one asyncio loop on a background thread, so any number of calls can be in flight while
pytest itself stays synchronous: the planner starts the collected cases a window at a time, and a
test submits its own pipeline and waits. The engine layers, in order: the run's own memory of answers,
the persistent cache, de-duplication of identical in-flight requests, claims shared with the other
processes, per-provider limits, and retries. Only successful samples are cached.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import secrets
import threading
from collections import defaultdict
from collections.abc import Coroutine, Mapping
from concurrent.futures import Future
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

from llmjury.chat import ChatRequest, Completion, Sample
from llmjury.errors import (
    CacheMissError,
    ProviderError,
    RunStopError,
    SchemaRefusedError,
    UnreachableProviderError,
    provider_fault,
)
from llmjury.meter import CallMeter, Unmetered
from llmjury.providers import Provider, ProviderSpec, resolve
from llmjury.providers.offline import Heuristic
from llmjury.retry import with_retries
from llmjury.running.answers import RunAnswers, ended_outcome
from llmjury.running.batch_lane import BatchLane
from llmjury.running.cache import ENDED, CacheMode, SampleStore
from llmjury.running.claim_waits import ClaimWaits, ClaimWindows
from llmjury.running.flights import Flights
from llmjury.running.freshness import ReplayPolicy, replay_policy
from llmjury.running.halt import Halt
from llmjury.running.ledger import ProviderLedger, RoleLedger
from llmjury.running.limits import Limiter, estimate_tokens, hand_back_kept_slots
from llmjury.running.loop_bridge import LoopBridge
from llmjury.running.reach import Reach
from llmjury.running.reads import CoalescedReads
from llmjury.running.settings import Settings

__tracebackhide__ = provider_fault  # pytest shows a provider's error at the test's line

T = TypeVar("T")


class Engine:
    def __init__(self, settings: Settings, store: SampleStore | None, run_id: str,
                 offline_answers: Mapping[str, Heuristic] | None = None, meter: CallMeter | None = None,
                 lane: BatchLane | None = None) -> None:
        self.settings = settings
        self.lane = lane  # the Batch API lane, when a spec asks for one
        if lane is not None:
            lane.on_collected(self._collected)
        self.meter: CallMeter = meter or Unmetered()  # progress and budget: told before and after each fresh call
        self.offline_answers = dict(offline_answers or {})
        self.owner = f"{run_id}:{secrets.token_hex(4)}"  # this process, in the cache's claims
        self.store = store
        self._reads = CoalescedReads(store) if store is not None else None
        self._waits = ClaimWaits(store, run_id) if store is not None else None
        self._windows = ClaimWindows()
        self.run_id = run_id
        self.ledger: dict[str, ProviderLedger] = defaultdict(ProviderLedger)
        self.roles: dict[tuple[str, str], RoleLedger] = {}
        self._policies: dict[tuple[str | None, ProviderSpec], ReplayPolicy] = {}
        self.reach: dict[str, Reach] = defaultdict(Reach)
        self.halt = Halt()  # set by the planner when planned work meets a RunStopError
        self.flights = Flights(self.stopping_on_store)
        self._providers: dict[ProviderSpec, Provider] = {}
        self._limiters: dict[str, Limiter] = {}
        self._answers = RunAnswers()  # what this process paid for, and answers the store cannot give back
        self._unanswered: dict[str, Sample | str] = {}  # keys whose call this process ended with no answer to cache
        self._inflight: dict[tuple[str, str, int], asyncio.Future[Completion]] = {}
        self._loop = asyncio.new_event_loop()
        self._writes = LoopBridge(self._loop)  # the store's commits, carried to the loop in batches
        self._thread = threading.Thread(target=self._loop.run_forever, name="llmjury-engine", daemon=True)
        self._thread.start()

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        """Schedule a coroutine on the engine loop from any thread."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the engine loop and wait for its result."""
        return self.submit(coro).result()

    def land(self) -> None:
        """A run stopping on its store: let the calls it sent end, their answers kept (llmjury.running.flights)."""
        if self.stopping_on_store() and self._thread.is_alive():
            self.halt.stop(RunStopError("the run is ending while its store is out of reach"))  # no new call
            self.run(self.flights.land())

    def stopping_on_store(self) -> bool:
        """A RunStopError met, or the store away: the calls in flight land."""
        return self.halt.error is not None or (self.store is not None and self.store.location.outage.away)

    def close(self) -> None:
        """Land or cancel what is still running (a run stopped early), then close the providers."""
        self.land()

        async def shutdown() -> None:
            running = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            for provider in self._providers.values():
                await provider.aclose()
            if self.lane is not None:
                await self.lane.aclose()

        if self._thread.is_alive():
            self.run(shutdown())
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
        if not self._thread.is_alive() and not self._loop.is_closed():
            self._loop.close()
        if self.store is not None:
            self.store.close()

    def provider(self, spec: ProviderSpec) -> Provider:
        """The one provider (clients, learned server limits) of this process for `spec`."""
        if spec not in self._providers:
            self._providers[spec] = resolve(spec, self.offline_answers)
        return self._providers[spec]

    def policy(self, role: str | None, spec: ProviderSpec) -> ReplayPolicy:
        """Whether `role`'s answers from `spec` may come from earlier runs (llmjury.running.freshness)."""
        if (role, spec) not in self._policies:
            provider, s = self.provider(spec), self.settings
            self._policies[role, spec] = replay_policy(
                role, spec, cacheable=provider.cacheable, under_test=s.under_test,
                replay_under_test=s.replay_under_test, cache_mode=s.cache_mode)
        return self._policies[role, spec]

    async def complete(self, spec: ProviderSpec, request: ChatRequest, *, role: str | None = None) -> Completion:
        """n samples for `request` from the provider `spec` (a juror's, a role's) names, cached one by
        one; the spec is the value parsed at start-up, never its text. `role` says who
        asks: a role under test gets answers of this run only (llmjury.running.freshness)."""
        provider = self.provider(spec)
        policy = self.policy(role, spec)
        keys = request.sample_keys(provider.cache_name, request.n)
        flight = (provider.name, keys[0], request.n)
        if flight in self._inflight:
            hand_back_kept_slots()  # the call in flight may be waiting for a slot kept for this case
            return await asyncio.shield(self._inflight[flight])
        future: asyncio.Future[Completion] = self._loop.create_future()
        self._inflight[flight] = future
        try:
            result, paid, replayed = await self._complete(provider, request, keys, policy.fresh)
            if role is not None:
                self.roles.setdefault((role, provider.name), RoleLedger(policy.why)).add(paid, replayed)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiting callers re-raise it themselves
            raise
        else:
            future.set_result(result)
            return result
        finally:
            del self._inflight[flight]

    async def _complete(self, provider: Provider, request: ChatRequest, keys: list[str], fresh: bool
                        ) -> tuple[Completion, int, int]:
        """The completion, how many samples this call paid for (not those it was handed back), and how
        many it replayed from an earlier run (not those another process of this run paid for)."""
        found: dict[int, Sample] = {}
        paid = replayed = 0
        cached: dict[int, bool] = {}
        for index, key in enumerate(keys):
            looked = await self._lookup(provider, key, fresh)
            if looked is not None:
                # A sample this process fetched earlier in the run (a judge re-asked for a later
                # sample of the same request) was paid now, not served from the cache.
                found[index], cached[index] = looked[0], not self._answers.paid(key)
                replayed += looked[1]
        missing = [i for i in range(request.n) if i not in found]
        self.ledger[provider.name].cached_samples += sum(cached.values())
        if missing and provider.cacheable and self.settings.cache_mode is CacheMode.REPLAY:
            raise CacheMissError(
                f"--llm-cache replay: no recorded response from {provider.name} for prompt "
                f"{request.task or '(untemplated)'} sample(s) {missing} (key {keys[missing[0]][:16]}); "
                "run once with --llm-cache record to record it"
            )
        for index in missing:  # ended unanswered by this process a moment ago (not committed yet): not paid again
            if (ended := ended_outcome(provider.name, self._unanswered.get(keys[index]))) is not None:
                found[index], cached[index] = ended, False
        missing = [i for i in missing if i not in found]
        batched = self._batched_lane(provider, request, fresh)
        while missing:  # claimed only when about to be called (llmjury.running.claim_waits)
            async with self._claim_window(provider, batched):
                mine, theirs = await self._claim(provider, keys, missing, fresh)
                await self._fetch_claimed(provider, request, keys, mine, found, cached, batched)
                paid += len(mine)
            for index, holder in theirs.items():
                answer = await self._claimed(provider, keys[index], fresh, holder)
                if answer is not None:
                    found[index], cached[index], earlier = answer
                    replayed += earlier
            # A holder that ended with no outcome (a cancelled call, a dead process): claim again.
            missing = [i for i in theirs if i not in found]
        return Completion(provider=provider.name, samples=[found[i] for i in range(request.n)],
                          cached=[cached[i] for i in range(request.n)]), paid, replayed

    def _batched_lane(self, provider: Provider, request: ChatRequest, fresh: bool) -> bool:
        """Whether the request's samples go through the provider's Batch API lane."""
        return (self.lane is not None and self.store is not None and provider.cacheable and not fresh
                and self.lane.takes(provider, request))

    def _claim_window(self, provider: Provider, batched: bool) -> AbstractAsyncContextManager[None]:
        """A place in the process's claim window (a batch's requests are claimed all at once: they wait in it)."""
        if batched or self.store is None or not provider.cacheable:
            return contextlib.nullcontext()
        return self._windows.place(provider.name, self._limiter(provider).limit.concurrency)

    async def _fetch_claimed(self, provider: Provider, request: ChatRequest, keys: list[str], mine: list[int],
                             found: dict[int, Sample], cached: dict[int, bool], batched: bool) -> None:
        """Pay for the samples this process claimed, ending each claim with its outcome."""
        failure: str | None = None
        try:
            if mine and batched:
                answers = await self._batched(provider, request, [keys[i] for i in mine], mine)
                for index, sample in zip(mine, answers, strict=True):
                    found[index], cached[index] = sample, False
            elif mine:
                answers = await self._call(provider, request, mine, keys)
                for index, sample in zip(mine, answers, strict=True):
                    found[index], cached[index] = sample, False
        except SchemaRefusedError:
            raise  # the claim is handed back: another process learns the refusal itself and asks in text
        except ProviderError as exc:
            failure = str(exc)
            raise
        finally:
            # A stored answer ended its claim. A refused or empty answer, or a failure, ends it
            # with that outcome for the run's other processes (paid once); a cancelled call
            # hands the key back.
            unstored = [i for i in mine if not self._answers.paid(keys[i])]
            if unstored and self.store is not None and provider.cacheable:
                outcomes: dict[str, Sample | str] = {keys[i]: found[i] for i in unstored if i in found}
                if failure is not None:
                    outcomes |= {keys[i]: failure for i in unstored if i not in found}
                if outcomes:
                    self._unanswered |= outcomes  # seen here at once; by the others once committed
                    self.store.settle(outcomes, self.owner, self.run_id)
                if len(outcomes) < len(unstored):
                    self.store.release([keys[i] for i in unstored if keys[i] not in outcomes], self.owner)

    async def _batched(self, provider: Provider, request: ChatRequest, keys: list[str],
                       indices: list[int]) -> list[Sample]:
        """Samples through the provider's Batch API, stored by the lane as collected (a key an
        earlier run had queued is not queued again); counted where collected (`_collected`)."""
        assert self.lane is not None
        samples, _ = await self.lane.fetch(provider, request, keys, indices)
        self._answers.keep_paid(dict(zip(keys, samples, strict=True)))
        return samples

    def _collected(self, provider: str, answers: dict[str, Sample]) -> None:
        """Count a batch where this process collected it (paid in this run, wherever read)."""
        self.ledger[provider].add_batch(answers.values())
        self._answers.add_paid(list(answers))

    async def _claim(self, provider: Provider, keys: list[str], missing: list[int],
                     fresh: bool) -> tuple[list[int], dict[int, str]]:
        """Split the missing samples into those this process fetches and those another process (of
        any run, on any machine) is fetching or has ended, so identical requests are paid once.
        Samples taken over from a process that died holding them are counted: maybe paid twice."""
        if self.store is None or not provider.cacheable:
            return missing, {}
        claimed = await self._writes.wrap(self.store.claim([keys[i] for i in missing], self.owner,
                                                             run_id=self.run_id, any_run=not fresh))
        # Asked afresh by each run (a role under test): only its own run's dead process's call is paid twice.
        self.ledger[provider.name].repaid_samples += sum(
            not fresh or dead.startswith(f"{self.run_id}:") for dead in claimed.taken_over.values())
        held = claimed.held
        return [i for i in missing if keys[i] not in held], {i: held[keys[i]] for i in missing if keys[i] in held}

    async def _claimed(self, provider: Provider, key: str, fresh: bool, holder: str
                       ) -> tuple[Sample, bool, bool] | None:
        """Wait for another process's fetch of `key` (llmjury.running.claim_waits): its answer (cached;
        whether an earlier run wrote it), or this run's outcome of it; None when the holder let go with
        neither (cancelled, or dead), and the caller claims again. `holder` ENDED: committed already."""
        assert self.store is not None and self._waits is not None
        hand_back_kept_slots()  # however long the other process takes, this one's slots serve other cases
        if holder == ENDED:
            looked = await self._lookup(provider, key, fresh)
        else:
            row = await self._waits.settled(key, self.run_id if fresh else None)
            looked = None if row is None else self.store.answer(key, row, self.run_id, fresh)
        if looked is None:  # this run's own outcome (a refusal, an empty answer, a failure), if any
            ended = self._unanswered.get(key) or await asyncio.to_thread(self.store.unanswered, key, self.run_id)
            return None if (outcome := ended_outcome(provider.name, ended)) is None else (outcome, False, False)
        self.ledger[provider.name].cached_samples += 1
        return looked[0], True, looked[1]

    async def _lookup(self, provider: Provider, key: str, fresh: bool) -> tuple[Sample, bool] | None:
        """A stored answer of `key`, and whether an earlier run wrote it (a replay, where another
        process of this run paying for it is not); None when there is none this call may use."""
        if (held := self._answers.get(key)) is not None:
            return held, False
        if self._reads is None or not provider.cacheable:
            return None
        return self._reads.store.answer(key, await self._reads.row(key), self.run_id, fresh)

    def _remember(self, provider: Provider, key: str, request: ChatRequest, request_json: str,
                  sample: Sample) -> Future[None] | None:
        """Keep a fresh answer for this run and queue it for the cache; the future completes once
        it is committed (None when nothing is written), and from then on the store holds it for the run."""
        self._answers.keep_paid({key: sample})
        if self.store is None or not provider.cacheable:
            return None
        write = self.store.put(key, provider.name, request.task, request_json, sample, self.run_id)
        self._answers.stored(key, sample, write)
        return write

    async def _call(self, provider: Provider, request: ChatRequest, indices: list[int],
                    keys: list[str]) -> list[Sample]:
        """Fetch fresh samples for `indices`, in as many calls as the provider's per-call limit needs.

        Each call's answers are committed to the cache as they arrive, by the cache's writer thread,
        before they are passed on and before the other calls of the batch finish: a later call that
        fails or hangs, or a kill, never loses an answer already paid for."""
        limiter = self._limiter(provider)
        step = provider.max_samples_per_call
        chunks = [indices[start:start + step] for start in range(0, len(indices), step)]
        ledger, reach = self.ledger[provider.name], self.reach[provider.name]

        async def one(chunk: list[int]) -> list[Sample]:
            size = len(chunk)

            async def attempt() -> list[Sample]:
                async with limiter.slot(estimate_tokens(request, size)):
                    reach.check(provider.name)  # a provider given up on: never retried either
                    self.halt.check()  # a run that is stopping: no new call
                    # The budget may refuse a paid call (never retried); the run's progress shows it in flight.
                    with self.meter.flight(provider.name):
                        if self.store is not None and provider.cacheable:  # committed before the call leaves
                            await self._writes.wrap(self.store.started([keys[index] for index in chunk], self.owner))
                        ledger.calls += 1
                        try:
                            answered = await provider.generate(request, size, chunk)
                        except UnreachableProviderError as exc:
                            reach.failed(exc)
                            raise
                        reach.succeeded()
                        self.meter.paid(provider.name, answered)  # published before the slot is free again
                        return answered

            try:
                samples = await with_retries(attempt, attempts=self.settings.retry_attempts,
                                             base_wait=self.settings.retry_base_wait,
                                             max_wait=self.settings.retry_max_wait)
            except RunStopError:
                raise  # the run stops (its store is out of reach): no call failed
            except Exception:
                ledger.failures += 1
                raise
            samples = samples[:size]
            for sample in samples:  # paid, whether or not the store can keep them
                ledger.fresh_samples += 1
                ledger.prompt_tokens += sample.usage.prompt_tokens
                ledger.completion_tokens += sample.usage.completion_tokens
                ledger.latency_s += sample.latency_s
            request_json = request.model_dump_json()
            writes = [self._remember(provider, keys[index], request, request_json, sample)
                      for index, sample in zip(chunk, samples, strict=False)
                      if sample.problem is None]  # a refusal or an empty answer is asked again next run
            # Committed before the answers go anywhere: a kill after this point loses none of them.
            await asyncio.gather(*(self._writes.wrap(w) for w in writes if w is not None))
            if len(samples) < size:
                # The server answers fewer choices than `n` asks (llama.cpp, Ollama): keep them, ask
                # for the rest one call per sample from now on, and say so in the run's report.
                provider.max_samples_per_call = len(samples)
                adaptations = getattr(provider, "adaptations", None)
                if adaptations is not None:
                    adaptations["n"] = f"asked {size} choices, got {len(samples)}: one call per sample"
                samples = samples + await self._call(provider, request, chunk[len(samples):], keys)
            return samples

        parts = await asyncio.gather(*(self.flights.fly(functools.partial(one, chunk)) for chunk in chunks))
        return [sample for part in parts for sample in part]

    def adaptations(self) -> dict[str, dict[str, str]]:
        """What each provider learned its server does differently (ignores `n`, refuses json_schema)."""
        return {provider.name: dict(found) for provider in self._providers.values()
                if (found := getattr(provider, "adaptations", None))}

    def _limiter(self, provider: Provider) -> Limiter:
        if provider.name not in self._limiters:
            self._limiters[provider.name] = Limiter(self.settings.limit_for(provider.name))
        return self._limiters[provider.name]
