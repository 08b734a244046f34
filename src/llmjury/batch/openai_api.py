"""OpenAI's Batch API through `openai.AsyncOpenAI`: one JSONL input file uploaded (`purpose="batch"`)
per batch, created with `completion_window="24h"` and `metadata={"llmjury_job": job}`, polled with
`batches.retrieve`, answered in an output file and an error file. The client is built as the chat
provider builds its own (llmjury.providers.openai_chat.sdk_client): same key, base_url, timeout.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Final

import openai
from openai.types import Batch

from llmjury.batch.api import EnqueuedTokenLimit, JobStatus, PendingItem
from llmjury.batch.openai_lines import InputLine, decode_output, input_line
from llmjury.batch.results import BatchResults, LineFailure, read_lines
from llmjury.errors import ProviderError
from llmjury.providers.base import ProviderSpec
from llmjury.providers.openai_chat import sdk_client, status_error
from llmjury.providers.status import connection_error
from llmjury.redact import scrub

#: The metadata key a batch's job name travels under (what `find` looks for).
JOB_TAG = "llmjury_job"
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
ENDPOINT: Final = "/v1/chat/completions"


class OpenAIBatchApi:
    """The Batch API's caps per input file: 50,000 requests, 200 MB."""

    max_lines = 50_000
    max_bytes = 200 * 1024 * 1024

    def __init__(self, spec: ProviderSpec) -> None:
        self.name = str(spec)
        self.client, self.secrets = sdk_client(spec)

    async def submit(self, job: str, model: str, items: Sequence[PendingItem]) -> str:
        """Upload the items as one input file and create its batch; a batch refused at once for the
        enqueued-token limit (429, or failed validating for it) raises EnqueuedTokenLimit."""
        data = b"".join(input_line(item.request, model, item.sample_index, item.key).model_dump_json().encode()
                        + b"\n" for item in items)
        if not items or len(items) > self.max_lines or len(data) > self.max_bytes:
            raise ValueError(f"batch {job!r}: {len(items):,} requests, {len(data):,} bytes; a batch takes 1 to "
                             f"{self.max_lines:,} requests and at most {self.max_bytes:,} bytes")
        with self._errors():
            uploaded = await self.client.files.create(file=(f"{job}.jsonl", data), purpose="batch")
            batch = await self.client.batches.create(input_file_id=uploaded.id, endpoint=ENDPOINT,
                                                     completion_window="24h", metadata={JOB_TAG: job})
        refusal = token_refusal(batch)
        if refusal is not None:
            raise EnqueuedTokenLimit(f"{self.name}: batch {job!r} refused: {refusal}")
        return batch.id

    async def find(self, job: str) -> str | None:
        """The newest batch tagged with `job` that the provider took (a refusal for the enqueued-token
        limit is not work in flight)."""
        with self._errors():
            async for batch in self.client.batches.list(limit=100):
                if (batch.metadata or {}).get(JOB_TAG) == job and token_refusal(batch) is None:
                    return batch.id
        return None

    async def status(self, remote_id: str) -> JobStatus:
        with self._errors():
            batch = await self.client.batches.retrieve(remote_id)
        return JobStatus("ended" if batch.status in ENDED else "running", batch.status)

    async def results(self, remote_id: str) -> BatchResults:
        """The output file's answers and the error file's failures; a batch that ended with neither
        (failed validating, cancelled before it ran) fails every line of its input file with its cause."""
        with self._errors():
            batch = await self.client.batches.retrieve(remote_id)
            if batch.status not in ENDED:
                raise ValueError(f"batch {remote_id} has not ended (status {batch.status!r})")
            results = BatchResults()
            files = [f for f in (batch.output_file_id, batch.error_file_id) if f]
            for file_id in files:
                content = await self.client.files.content(file_id)
                read_lines(content.text.splitlines(), f"{remote_id} file {file_id}", decode_output, results)
            if not files:
                content = await self.client.files.content(batch.input_file_id)
                code, message = _why_ended(batch)
                read_lines(content.text.splitlines(), f"{remote_id} input file {batch.input_file_id}",
                           lambda text: _not_run(text, code, message), results)
        return results

    async def cancel(self, remote_id: str) -> None:
        with self._errors():
            await self.client.batches.cancel(remote_id)

    async def aclose(self) -> None:
        await self.client.close()

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """The SDK's failures as llmjury's: a 429 for the enqueued-token limit as EnqueuedTokenLimit,
        other HTTP errors and dropped connections as ProviderErrors (raised `from None` and scrubbed:
        the SDK's text may quote the key)."""
        try:
            yield
        except openai.APIStatusError as exc:
            if exc.status_code == 429 and _is_token_limit(exc.code, exc.message):
                raise EnqueuedTokenLimit(f"{self.name}: {scrub(exc.message, self.secrets)}") from None
            raise status_error(self.name, exc, self.secrets) from None
        except openai.APIConnectionError as exc:  # time-outs included
            raise connection_error(self.name, exc, self.secrets) from None
        except openai.OpenAIError as exc:
            raise ProviderError(self.name, scrub(f"{type(exc).__name__}: {exc}", self.secrets)) from None


def token_refusal(batch: Batch) -> str | None:
    """Why a failed batch was refused for the enqueued-token limit, else None."""
    if batch.status != "failed" or batch.errors is None:
        return None
    for error in batch.errors.data or []:
        if _is_token_limit(error.code, error.message):
            return error.message or error.code
    return None


def _is_token_limit(code: str | None, message: str | None) -> bool:
    return code == "token_limit_exceeded" or "enqueued token" in (message or "").lower()


def _why_ended(batch: Batch) -> tuple[str, str]:
    """The code and message every line of a batch that ran none of them fails with."""
    errors = batch.errors.data if batch.errors and batch.errors.data else []
    if errors:
        return errors[0].code or f"batch_{batch.status}", "; ".join(e.message or "" for e in errors)
    return f"batch_{batch.status}", f"the batch ended {batch.status} before it ran this request"


def _not_run(text: str, code: str, message: str) -> tuple[str, LineFailure]:
    """An input line as the failure of a request the batch never ran."""
    key = InputLine.model_validate_json(text).custom_id
    return key, LineFailure(key, code, message)
