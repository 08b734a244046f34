"""Per-provider concurrency and rate limits.

aiolimiter's leaky bucket does requests- and tokens-per-minute: it is small, asyncio-native
and maintained, and a token budget is just `acquire(amount)` on a second bucket.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import math
from collections.abc import AsyncIterator, Awaitable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

from aiolimiter import AsyncLimiter

from llmjury.chat import ChatRequest
from llmjury.errors import ConfigError, provider_fault
from llmjury.providers.base import ProviderSpec

__tracebackhide__ = provider_fault  # pytest shows a provider's error at the test's line


@dataclass(frozen=True)
class RateLimit:
    """Limits for one provider: concurrent calls, requests per minute, tokens per minute."""

    concurrency: int
    rpm: float | None = None
    tpm: float | None = None

    @classmethod
    def parse(cls, text: str, default_concurrency: int) -> tuple[str, RateLimit]:
        """Parse an ini line `openai:gpt-4o-mini rpm=500 tpm=200000 concurrency=32`, keyed by the
        provider's `kind:model` name (the name calls are counted under, options left out). A typo,
        or a limit of zero or less, is a ConfigError: a zero would block every call or none."""
        spec, *fields = text.split()
        try:
            name = str(ProviderSpec.parse(spec))
        except ConfigError as exc:
            raise ConfigError(f"llm_rate_limits line {text!r}: {exc}") from None
        values: dict[str, float] = {}
        for item in fields:
            key, _, raw = item.partition("=")
            if key not in {"rpm", "tpm", "concurrency"}:
                raise ConfigError(f"llm_rate_limits line {text!r}: unknown field {key!r} (use rpm, tpm, concurrency)")
            try:
                values[key] = float(raw)
            except ValueError:
                raise ConfigError(f"llm_rate_limits line {text!r}: {key} must be a number") from None
            if key == "concurrency" and not (values[key] >= 1 and values[key].is_integer()):
                raise ConfigError(f"llm_rate_limits line {text!r}: concurrency must be a whole number of at least 1")
            if not values[key] > 0:
                raise ConfigError(f"llm_rate_limits line {text!r}: {key} must be above 0")
        return name, cls(
            concurrency=int(values.get("concurrency", default_concurrency)),
            rpm=values.get("rpm"),
            tpm=values.get("tpm"),
        )

    def share(self, workers: int) -> RateLimit:
        return RateLimit(
            concurrency=max(1, math.ceil(self.concurrency / workers)),
            rpm=None if self.rpm is None else self.rpm / workers,
            tpm=None if self.tpm is None else self.tpm / workers,
        )


def estimate_tokens(request: ChatRequest, n: int) -> int:
    """A cheap upper-ish estimate for the tokens-per-minute bucket: the prompt, and `n` answers."""
    return estimate_prompt_tokens(request) + n * completion_budget(request)


def estimate_prompt_tokens(request: ChatRequest) -> int:
    """The prompt's tokens, at 4 characters a token."""
    return sum(len(m.content) for m in request.messages) // 4 + 1


def completion_budget(request: ChatRequest) -> int:
    """The most tokens one answer may take: the request's `max_tokens`, else 256."""
    return request.max_tokens or 256


T = TypeVar("T")


class CaseTicket:
    """A planned case's place in line (the order the planner started it in), and the slots kept
    for it between its calls: under a concurrency limit, calls of cases started earlier go first,
    and a case's next call (asked a moment after its last one freed its slot: the answer is
    committed to the cache, parsed, the next request claimed) finds its slot still there, so a slow
    server, a stop or a budget leaves whole cases rather than many half-judged ones."""

    def __init__(self, order: int) -> None:
        self.order = order
        self.ended = False
        self.kept: set[PrioritySlots] = set()

    def hand_back(self) -> None:
        """Give up the slots kept for this case: it waits on another case's or process's call,
        which may need one of them."""
        for slots in list(self.kept):
            slots.unkeep(self)

    def end(self) -> None:
        """The case is over: its kept slots go to the next case, and none is kept for it again."""
        self.ended = True
        self.hand_back()


#: The planned case the current task's calls belong to; None for calls outside a planned case (a
#: test running its own body), which go before any planned case's and keep no slot.
CASE: ContextVar[CaseTicket | None] = ContextVar("llmjury_case", default=None)


async def in_case_order(order: int, work: Awaitable[T]) -> T:
    """Run `work` (a case's pipeline) with its calls ranked by `order` at every limiter."""
    ticket = CaseTicket(order)
    CASE.set(ticket)  # this task's own context: the calls it awaits, and tasks it starts, inherit it
    try:
        return await work
    finally:
        ticket.end()


def hand_back_kept_slots() -> None:
    """Before the current case waits on another's call (the same request in flight, or claimed by
    another process): a slot kept for it could be the one that call needs."""
    ticket = CASE.get()
    if ticket is not None:
        ticket.hand_back()


class PrioritySlots:
    """A semaphore that hands a freed slot to the waiter of the earliest case (then the earliest
    to arrive), not to whoever waited longest: asyncio.Semaphore's first-come order interleaves
    every case's calls, and a run stopped half way had judged almost no case to its end. A slot a
    case's call frees stays kept for that case until it asks again or ends, unless an earlier case
    waits (an earlier case also takes a slot kept for a later one): orders are strictly ranked, so
    no two cases wait on each other's kept slots."""

    def __init__(self, slots: int) -> None:
        self._free = slots
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._arrival = itertools.count()
        self._kept: dict[CaseTicket, int] = {}  # slots kept for each case (compare's two orders: two)

    async def acquire(self, case: CaseTicket | None) -> None:
        if case is not None and case in self._kept:
            self._take_kept(case)
            return
        if self._free > 0 and not self._waiting:
            self._free -= 1
            return
        order = -1 if case is None else case.order
        later = max(self._kept, key=lambda kept: kept.order, default=None)
        if later is not None and later.order >= order:
            self._take_kept(later)  # an earlier case (or one as early) goes first
            return
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (order, next(self._arrival), granted))
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self.release()  # handed a slot as it was cancelled: pass it on
            raise

    def release(self, case: CaseTicket | None = None) -> None:
        """Free a slot a call of `case` held: to the earliest waiter, unless that waiter's case
        was started after `case`, which then keeps the slot for its next call."""
        while self._waiting:
            order, _, waiter = self._waiting[0]
            if waiter.done():  # a cancelled waiter is skipped here, not searched for when cancelled
                heapq.heappop(self._waiting)
                continue
            if case is not None and not case.ended and order > case.order:
                break
            heapq.heappop(self._waiting)
            waiter.set_result(None)
            return
        if case is not None and not case.ended:
            self._kept[case] = self._kept.get(case, 0) + 1
            case.kept.add(self)
            return
        self._free += 1

    def unkeep(self, case: CaseTicket) -> None:
        """Free every slot kept for `case`, which will not ask for them."""
        while case in self._kept:
            self._take_kept(case)
            self.release()

    def _take_kept(self, case: CaseTicket) -> None:
        """One of the slots kept for `case`, taken."""
        self._kept[case] -= 1
        if not self._kept[case]:
            del self._kept[case]
            case.kept.discard(self)

    @contextlib.asynccontextmanager
    async def held(self, case: CaseTicket | None) -> AsyncIterator[None]:
        await self.acquire(case)
        try:
            yield
        finally:
            self.release(case)


class Limiter:
    """Gates calls to one provider; must be created on the loop that uses it."""

    def __init__(self, limit: RateLimit) -> None:
        self.limit = limit
        self._slots = PrioritySlots(limit.concurrency)
        self._requests = AsyncLimiter(limit.rpm, 60) if limit.rpm else None
        self._tokens = AsyncLimiter(limit.tpm, 60) if limit.tpm else None

    @contextlib.asynccontextmanager
    async def slot(self, tokens: int) -> AsyncIterator[None]:
        if self._requests is not None:
            await self._requests.acquire()
        if self._tokens is not None:
            await self._tokens.acquire(min(tokens, self.limit.tpm or tokens))
        async with self._slots.held(CASE.get()):
            yield
