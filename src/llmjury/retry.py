"""Retrying transient provider failures.

tenacity supplies the retry loop, stop rule and jittered exponential backoff; the one thing
added here is honouring a server's Retry-After, which tenacity leaves to the caller.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt
from tenacity.wait import wait_random_exponential

from llmjury.errors import TransientProviderError, provider_fault

__tracebackhide__ = provider_fault  # pytest shows a provider's error at the test's line

T = TypeVar("T")


class WaitRetryAfter:
    """Wait what the server asked for (plus a little jitter), else back off exponentially."""

    def __init__(self, base: float, cap: float) -> None:
        self.cap = cap
        self.backoff = wait_random_exponential(multiplier=base, max=cap)

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        asked = exc.retry_after if isinstance(exc, TransientProviderError) else None
        if asked is not None:
            return min(asked, self.cap) + random.uniform(0, 0.1 * max(asked, 0.01))
        return self.backoff(state)


async def with_retries(
    call: Callable[[], Awaitable[T]], *, attempts: int, base_wait: float, max_wait: float
) -> T:
    """Run `call`, retrying TransientProviderError up to `attempts` times in all.

    The first attempt is made directly: most calls succeed, and tenacity's loop (its state, its
    futures) costs more CPU than a fast local call. After a failure, tenacity takes over as if it
    had made that attempt itself: the same waits, the same count."""
    try:
        return await call()
    except TransientProviderError as exc:
        if attempts <= 1:
            raise
        failed: list[TransientProviderError] = [exc]

    async def again() -> T:
        if failed:
            raise failed.pop()  # the first attempt's failure, as tenacity's own first attempt
        return await call()

    retrying = AsyncRetrying(
        retry=retry_if_exception_type(TransientProviderError),
        stop=stop_after_attempt(attempts),
        wait=WaitRetryAfter(base_wait, max_wait),
        reraise=True,
    )
    async for attempt in retrying:
        with attempt:
            return await again()
    raise AssertionError("unreachable: tenacity either returns or reraises")
