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
from llmjury.errors import ConfigError
from llmjury.providers.base import ProviderSpec


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
    """A cheap upper-ish estimate (4 characters a token) for the tokens-per-minute bucket."""
    prompt = sum(len(m.content) for m in request.messages) // 4 + 1
    return prompt + n * (request.max_tokens or 256)


T = TypeVar("T")
#: The order in which the planner started the case a call belongs to: under a concurrency limit,
#: calls of cases started earlier go first, so a slow server, a stop or a budget leaves whole cases
#: rather than many half-judged ones. Calls outside a planned case (a test running its own body)
#: go before any planned case's.
CASE_ORDER: ContextVar[int] = ContextVar("llmjury_case_order", default=-1)


async def in_case_order(order: int, work: Awaitable[T]) -> T:
    """Run `work` (a case's pipeline) with its calls ranked by `order` at every limiter."""
    CASE_ORDER.set(order)  # this task's own context: the calls it awaits, and tasks it starts, inherit it
    return await work


class PrioritySlots:
    """A semaphore that hands a freed slot to the waiter of the earliest case (then the earliest
    to arrive), not to whoever waited longest: asyncio.Semaphore's first-come order interleaves
    every case's calls, and a run stopped half way had judged almost no case to its end."""

    def __init__(self, slots: int) -> None:
        self._free = slots
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._arrival = itertools.count()

    async def acquire(self, order: int) -> None:
        if self._free > 0 and not self._waiting:
            self._free -= 1
            return
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (order, next(self._arrival), granted))
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self.release()  # handed a slot as it was cancelled: pass it on
            raise

    def release(self) -> None:
        while self._waiting:
            _, _, waiter = heapq.heappop(self._waiting)
            if not waiter.done():  # a cancelled waiter is skipped here, not searched for when cancelled
                waiter.set_result(None)
                return
        self._free += 1

    @contextlib.asynccontextmanager
    async def held(self, order: int) -> AsyncIterator[None]:
        await self.acquire(order)
        try:
            yield
        finally:
            self.release()


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
        async with self._slots.held(CASE_ORDER.get()):
            yield
