"""`with_retries`: transient failures are tried again up to the attempts allowed, with the server's
Retry-After for the wait; a first attempt that succeeds returns at once, any other error is not retried."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import pytest

from llmjury.errors import PermanentProviderError, TransientProviderError
from llmjury.retry import with_retries


def calls_failing(failures: list[Exception]) -> tuple[Callable[[], Awaitable[str]], list[float]]:
    """A call that raises each of `failures` in turn, then answers; the times it was made."""
    made: list[float] = []

    async def call() -> str:
        made.append(time.monotonic())
        if failures:
            raise failures.pop(0)
        return f"answer {len(made)}"

    return call, made


def retried(call: Callable[[], Awaitable[str]], attempts: int) -> str:
    return asyncio.run(with_retries(call, attempts=attempts, base_wait=0.001, max_wait=0.5))


def test_a_first_attempt_that_succeeds_is_the_answer():
    call, made = calls_failing([])
    assert retried(call, 4) == "answer 1" and len(made) == 1


@pytest.mark.parametrize("failures", [1, 2, 3])
def test_transient_failures_are_tried_again_within_the_attempts(failures):
    call, made = calls_failing([TransientProviderError("p", "HTTP 503") for _ in range(failures)])
    assert retried(call, 4) == f"answer {failures + 1}" and len(made) == failures + 1


@pytest.mark.parametrize("attempts", [1, 2, 3])
def test_past_its_attempts_the_last_transient_error_is_raised(attempts):
    errors = [TransientProviderError("p", f"HTTP 50{i}") for i in range(attempts + 2)]
    call, made = calls_failing(list(errors))
    with pytest.raises(TransientProviderError) as raised:
        retried(call, attempts)
    assert len(made) == attempts and raised.value is errors[attempts - 1]


def test_the_wait_after_the_first_failure_is_what_the_server_asked():
    call, made = calls_failing([TransientProviderError("p", "HTTP 429", retry_after=0.2)])
    assert retried(call, 3) == "answer 2"
    assert made[1] - made[0] >= 0.2


def test_a_permanent_error_is_not_tried_again():
    call, made = calls_failing([PermanentProviderError("p", "HTTP 400"), TransientProviderError("p", "x")])
    with pytest.raises(PermanentProviderError):
        retried(call, 4)
    assert len(made) == 1
