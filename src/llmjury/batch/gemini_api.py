"""Gemini's batch mode through google-genai's async client (`client.aio`): a batch's requests travel
inline in the create call while they fit in 20 MB, else as a JSONL file uploaded with `files.upload`;
`display_name` carries the lane's job name; answers come back inline or in a result file. The client
is built as the provider builds its own (llmjury.providers.gemini.sdk_client): same key, base_url,
timeout.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator, Sequence

from google.genai import errors as genai_errors
from google.genai import types

from llmjury.batch.api import EnqueuedTokenLimit, JobStatus, PendingItem
from llmjury.batch.gemini_lines import decode_inline_all, decode_result_line, file_line, inline_request
from llmjury.batch.results import BatchResults, LineFailure, read_lines
from llmjury.errors import ProviderError
from llmjury.providers.base import ProviderSpec
from llmjury.providers.gemini import TRANSPORT_ERRORS, api_error, sdk_client
from llmjury.providers.status import connection_error
from llmjury.redact import scrub

#: The states a batch never leaves (the SDK's own list lacks PARTIALLY_SUCCEEDED).
ENDED = frozenset({"JOB_STATE_SUCCEEDED", "JOB_STATE_PARTIALLY_SUCCEEDED", "JOB_STATE_FAILED",
                   "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED"})
#: google.rpc codes of requests a batch never ran, by the state it ended in, as the lane names them.
NOT_RUN = {("JOB_STATE_EXPIRED", "4"): "batch_expired", ("JOB_STATE_CANCELLED", "1"): "batch_cancelled"}
#: What the create call's body may carry inline (the API's request cap), less room for its wrapping.
INLINE_BYTES = 20 * 1024 * 1024


class GeminiBatchApi:
    """Requests per batch: the API documents no cap, so OpenAI's 50,000; bytes: the File API's 2 GB
    per input file (inline requests only while under `inline_bytes`)."""

    max_lines = 50_000
    max_bytes = 2 * 1024 * 1024 * 1024

    def __init__(self, spec: ProviderSpec) -> None:
        self.name = str(spec)
        self.client, self.secrets = sdk_client(spec)
        self.inline_bytes = INLINE_BYTES

    async def submit(self, job: str, model: str, items: Sequence[PendingItem]) -> str:
        """Create one batch of the items, inline or from an uploaded file by their size; a 429 for the
        enqueued-token limit raises EnqueuedTokenLimit. (A batch that fails as a whole cannot be told
        apart: the SDK drops a batch's error, so it is seen only as JOB_STATE_FAILED with no answers.)"""
        lines = [file_line(item.request, item.sample_index, item.key) for item in items]
        data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
        if not items or len(items) > self.max_lines or len(data) > self.max_bytes:
            raise ValueError(f"batch {job!r}: {len(items):,} requests, {len(data):,} bytes; a batch takes 1 to "
                             f"{self.max_lines:,} requests and at most {self.max_bytes:,} bytes")
        config = types.CreateBatchJobConfig(display_name=job)
        with self._errors():
            # Each inline request also carries `"metadata": {"key": ...}` and the call its wrapping.
            if len(data) + 32 * len(items) + 1024 <= self.inline_bytes:
                src: list[types.InlinedRequest] | str = [
                    inline_request(item.request, item.sample_index, item.key) for item in items]
            else:
                uploaded = await self.client.aio.files.upload(
                    file=io.BytesIO(data), config=types.UploadFileConfig(mime_type="jsonl", display_name=job))
                if uploaded.name is None:
                    raise ProviderError(self.name, f"batch {job!r}: the uploaded input file has no name")
                src = uploaded.name
            created = await self.client.aio.batches.create(model=model, src=src, config=config)
        if created.name is None:
            raise ProviderError(self.name, f"batch {job!r}: the created batch has no name")
        return created.name

    async def find(self, job: str) -> str | None:
        """The newest batch named `job`."""
        with self._errors():
            async for found in await self.client.aio.batches.list(config=types.ListBatchJobsConfig(page_size=100)):
                if found.display_name == job and found.name:
                    return found.name
        return None

    async def status(self, remote_id: str) -> JobStatus:
        with self._errors():
            found = await self.client.aio.batches.get(name=remote_id)
        state = _state(found)
        return JobStatus("ended" if state in ENDED else "running", state)

    async def results(self, remote_id: str) -> BatchResults:
        """Inline answers or the result file's lines; requests an expired (cancelled) batch never ran
        fail `batch_expired` (`batch_cancelled`). A batch that failed as a whole answers nothing: its
        keys are in no result, and the lane holds them."""
        with self._errors():
            found = await self.client.aio.batches.get(name=remote_id)
            state = _state(found)
            if state not in ENDED:
                raise ValueError(f"batch {remote_id} has not ended (state {state})")
            dest = found.dest
            if dest is not None and dest.inlined_responses:
                results = decode_inline_all(dest.inlined_responses)
            elif dest is not None and dest.file_name:
                data = await self.client.aio.files.download(file=dest.file_name)
                results = read_lines(data.decode().splitlines(), f"{remote_id} file {dest.file_name}",
                                     decode_result_line)
            else:
                results = BatchResults()
        for key, failure in list(results.failures.items()):
            code = NOT_RUN.get((state, failure.code))
            if code is not None:
                results.failures[key] = LineFailure(key, code, failure.message)
        return results

    async def cancel(self, remote_id: str) -> None:
        with self._errors():
            await self.client.aio.batches.cancel(name=remote_id)

    async def aclose(self) -> None:
        await self.client.aio.aclose()

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """The SDK's failures as llmjury's: a 429 for the enqueued-token limit as EnqueuedTokenLimit,
        other API errors and dropped connections as ProviderErrors (raised `from None` and scrubbed)."""
        try:
            yield
        except genai_errors.APIError as exc:
            if exc.code == 429 and _is_token_limit(exc.message):
                raise EnqueuedTokenLimit(f"{self.name}: {scrub(exc.message or '', self.secrets)}") from None
            raise api_error(self.name, exc, self.secrets) from None
        except TRANSPORT_ERRORS as exc:
            raise connection_error(self.name, exc, self.secrets) from None


def _is_token_limit(message: str | None) -> bool:
    return "enqueued token" in (message or "").lower()


def _state(found: types.BatchJob) -> str:
    return found.state.name if found.state is not None else "JOB_STATE_UNSPECIFIED"
