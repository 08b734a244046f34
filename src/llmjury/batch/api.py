"""The provider-neutral face of a Batch API (OpenAI's, Gemini's): what the lane asks of one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from llmjury.batch.results import BatchResults
from llmjury.chat import ChatRequest
from llmjury.errors import ConfigError
from llmjury.providers.base import ProviderSpec

JobState = Literal["running", "ended"]


@dataclass(frozen=True)
class PendingItem:
    key: str
    request: ChatRequest
    sample_index: int
    est_tokens: int


@dataclass(frozen=True)
class JobStatus:
    state: JobState
    provider_state: str


class EnqueuedTokenLimit(Exception):
    """The provider refused a create for its enqueued-token limit: try again later with fewer."""


class BatchApi(Protocol):
    max_lines: int
    max_bytes: int

    async def submit(self, job: str, model: str, items: Sequence[PendingItem]) -> str: ...

    async def find(self, job: str) -> str | None: ...

    async def status(self, remote_id: str) -> JobStatus: ...

    async def results(self, remote_id: str) -> BatchResults: ...

    async def cancel(self, remote_id: str) -> None: ...

    async def aclose(self) -> None: ...


def batch_api(spec: ProviderSpec) -> BatchApi:
    """The client for `spec`'s kind (openai, gemini); a ConfigError for a kind with no batch API."""
    raise ConfigError(f"provider {spec}: no batch API client yet")
