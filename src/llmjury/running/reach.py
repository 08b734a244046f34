"""Whether a provider can be reached, so a run with no server to call says so in seconds."""

from __future__ import annotations

from dataclasses import dataclass

from llmjury.errors import PermanentProviderError, UnreachableProviderError

#: Connection attempts in a row (retries included) that found no server, from a provider that has
#: not answered once in this process, before its remaining calls are refused instead of made: two
#: calls' worth of retries at the default four attempts.
UNREACHABLE_AFTER = 8


@dataclass
class Reach:
    """Whether a provider can be reached: with no network or a wrong base URL every call would fail
    only after its retries, and a run of thousands of cases took minutes to say so. Once a provider
    that never answered has failed to connect `UNREACHABLE_AFTER` times in a row, its other calls
    (and the retries of those in flight) fail at once with that cause. A provider that answered
    once is never given up on: its server may come back."""

    answered: bool = False
    failures: int = 0
    cause: str = ""

    def check(self, provider: str) -> None:
        """Refuse a call to `provider` once it is given up on."""
        if self.failures >= UNREACHABLE_AFTER:
            raise PermanentProviderError(provider, f"unreachable: {self.failures} connection attempts in a row "
                                                   f"found no server and none was answered in this run (last: "
                                                   f"{self.cause}); its other calls are not made")

    def failed(self, error: UnreachableProviderError) -> None:
        """A connection attempt found no server."""
        if not self.answered:
            self.failures += 1
            self.cause = error.cause

    def succeeded(self) -> None:
        """The provider answered: it is never given up on in this process."""
        self.answered, self.failures = True, 0
