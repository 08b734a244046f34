"""What a process's calls cost, per provider and per role: the figures behind the usage tables."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from llmjury.chat import Sample


@dataclass
class ProviderLedger:
    """What one provider cost this process: the figures behind the usage table in reports."""

    calls: int = 0
    fresh_samples: int = 0
    cached_samples: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    failures: int = 0
    #: Samples whose call a process (of any run or host) had started when it died, paid again here.
    repaid_samples: int = 0
    #: Samples answered through the provider's Batch API (llmjury.running.batch_lane), and their tokens:
    #: counted by the process that collected their batch.
    batch_samples: int = 0
    batch_prompt_tokens: int = 0
    batch_completion_tokens: int = 0

    def add_batch(self, samples: Iterable[Sample]) -> None:
        for sample in samples:
            self.batch_samples += 1
            self.batch_prompt_tokens += sample.usage.prompt_tokens
            self.batch_completion_tokens += sample.usage.completion_tokens

    def as_dict(self) -> dict[str, float]:
        return dict(self.__dict__)


@dataclass
class RoleLedger:
    """Where one role's samples from one provider came from, and why: the usage report's per-role rows."""

    policy: str
    fresh_samples: int = 0
    replayed_samples: int = 0

    def add(self, fresh: int, replayed: int) -> None:
        """A call's samples: those it paid for, and those the cache replayed (none counted twice)."""
        self.fresh_samples += fresh
        self.replayed_samples += replayed

    def as_dict(self) -> dict[str, str | int]:
        return dict(self.__dict__)


def usage_by_provider(ledgers: Mapping[str, ProviderLedger]) -> dict[str, dict[str, float]]:
    """Plain JSON-able usage per provider, for xdist's workeroutput and reports."""
    return {name: entry.as_dict() for name, entry in sorted(ledgers.items())}


def usage_by_role(roles: Mapping[tuple[str, str], RoleLedger]) -> dict[str, dict[str, dict[str, str | int]]]:
    """Plain JSON-able usage per role and provider (where its samples came from, and why)."""
    found: dict[str, dict[str, dict[str, str | int]]] = {}
    for (role, provider), entry in sorted(roles.items()):
        found.setdefault(role, {})[provider] = entry.as_dict()
    return found
