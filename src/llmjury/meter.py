"""What the engine tells about its fresh calls: the seam between running calls and whoever counts them.

The engine is handed a `CallMeter` (the run's progress and budget, `llmjury.session.progress.Meter`, in a
pytest session) instead of importing a display: running calls sit below the pytest integration.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Protocol

from llmjury.chat import Sample


class CallMeter(Protocol):
    """Told before and after each fresh (paid) provider call, on the engine loop's thread."""

    def flight(self, provider: str) -> AbstractContextManager[None]:
        """Admit a fresh call to `provider` (raise to refuse it, e.g. an exhausted budget) and count
        it in flight until the context ends."""
        ...

    def paid(self, provider: str, samples: Sequence[Sample]) -> None:
        """A fresh call answered with `samples` (their usage is what it cost)."""
        ...

    def admit(self, provider: str) -> None:
        """Raise when no paid work for `provider` may start now (the Batch API lane asks before it queues)."""
        ...

    def spent(self, provider: str, usd: float) -> None:
        """Estimated dollars spent outside a call: a batch's reservation when it is queued, and the
        difference to its price at the batch rate when it is collected (negative when it cost less)."""
        ...


class Unmetered:
    """The meter of an engine nobody watches (tests, `llmjury` commands): admits every call, counts nothing."""

    def flight(self, provider: str) -> AbstractContextManager[None]:
        return nullcontext()

    def paid(self, provider: str, samples: Sequence[Sample]) -> None:
        return None

    def admit(self, provider: str) -> None:
        return None

    def spent(self, provider: str, usd: float) -> None:
        return None
