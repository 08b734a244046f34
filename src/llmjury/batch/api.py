"""The one interface the batch lane sends work through, whatever the provider: submit a batch tagged
with the lane's job name, find it again after a crash, poll it, read its answers, cancel it.

Each provider's client (llmjury.batch.openai_api, gemini_api) speaks its official async SDK; they are
imported only when a spec of their kind asks for one, so a missing SDK gives a pip hint.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from llmjury.batch.results import BatchResults
from llmjury.chat import ChatRequest
from llmjury.errors import ConfigError
from llmjury.providers.base import KINDS, ProviderSpec


@dataclass(frozen=True)
class PendingItem:
    """One request the lane has queued for a batch."""

    #: The cache key: the OpenAI line's `custom_id`, the Gemini request's metadata `key`.
    key: str
    request: ChatRequest
    sample_index: int
    #: An estimate of prompt + completion tokens (for the enqueued-token budget).
    est_tokens: int


JobState = Literal["running", "ended"]


@dataclass(frozen=True)
class JobStatus:
    """Where a batch is: still running, or ended (its results can be read)."""

    state: JobState
    #: The provider's own word: "in_progress", "JOB_STATE_SUCCEEDED", ...
    provider_state: str


class EnqueuedTokenLimit(Exception):
    """The provider refused a create for its enqueued-token limit: try again later with fewer."""


class BatchApi(Protocol):
    """A provider's batch API, as the lane uses it."""

    #: Requests per batch.
    max_lines: int
    #: Bytes of one batch's requests as sent.
    max_bytes: int

    async def submit(self, job: str, model: str, items: Sequence[PendingItem]) -> str:
        """Create one batch of `items` tagged with `job`; its remote id. Raises EnqueuedTokenLimit on the
        provider's enqueued-token refusal, ProviderError subclasses for other failures."""
        ...

    async def find(self, job: str) -> str | None:
        """The remote id of a batch tagged with `job`, if one exists (a crash between create and the
        store's commit)."""
        ...

    async def status(self, remote_id: str) -> JobStatus:
        """Whether the batch is still running, in the lane's words and the provider's."""
        ...

    async def results(self, remote_id: str) -> BatchResults:
        """An ended batch's answers and failures by key; unreadable lines in `malformed`."""
        ...

    async def cancel(self, remote_id: str) -> None:
        """Ask the provider to stop the batch (its unanswered lines then fail `batch_cancelled`)."""
        ...

    async def aclose(self) -> None:
        """Release the SDK's network client."""
        ...


#: Where each kind's batch client lives, imported on demand.
_CLIENTS = {"openai": ("llmjury.batch.openai_api", "OpenAIBatchApi"),
            "gemini": ("llmjury.batch.gemini_api", "GeminiBatchApi")}


def batch_api(spec: ProviderSpec) -> BatchApi:
    """The client for `spec`'s kind (openai, gemini); a ConfigError for a kind with no batch API."""
    if spec.kind not in _CLIENTS:
        raise ConfigError(f"provider {spec}: the {spec.kind!r} kind has no batch API; "
                          f"batch calls go to {' or '.join(_CLIENTS)} specs only")
    module_name, cls = _CLIENTS[spec.kind]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"provider {spec}: cannot import its SDK ({exc}); "
                          f"install it with `pip install {KINDS[spec.kind].package}`") from exc
    client: BatchApi = getattr(module, cls)(spec)
    return client
