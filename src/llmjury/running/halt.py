"""A run that is stopping makes no new call: every case left would meet the same cause."""

from __future__ import annotations

from dataclasses import dataclass

from llmjury.errors import RunStopError


@dataclass
class Halt:
    """What stops this process's run (a RunStopError met by planned work: a store out of reach, forced
    logprobs on a server that sends none), once something does. Planned cases run ahead of their
    tests, so dozens of calls may be queued when the first test reports the cause; they are refused
    with the same error instead of paid for. Answers already cached are still read."""

    error: RunStopError | None = None

    def stop(self, error: RunStopError) -> None:
        """Keep the first cause: what came after it is its consequence."""
        self.error = self.error or error

    def check(self) -> None:
        """Refuse a call once the run stops, with the error that stopped it (its class and text)."""
        if self.error is not None:
            raise type(self.error)(str(self.error))
