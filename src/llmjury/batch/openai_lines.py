"""OpenAI Batch API lines: the input line (`custom_id`, `method`, `url`, `body`) and the output line
(`id`, `custom_id`, `response`, `error`). `vllm run-batch` reads and writes the same shapes.

A line's body is built by the synchronous provider's own code (llmjury.providers.openai_wire) and
an answer is parsed by it, so a batched call and a synchronous one cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from llmjury.batch.results import BatchResults, Decoded, LineFailure, read_jsonl
from llmjury.chat import ChatRequest
from llmjury.providers.openai_wire import chat_body, completion_samples


class InputLine(BaseModel):
    """One request of a batch input file."""

    custom_id: str
    method: Literal["POST"] = "POST"
    url: Literal["/v1/chat/completions"] = "/v1/chat/completions"
    body: dict[str, Any]


class LineResponse(BaseModel):
    """The HTTP answer a request got inside the batch."""

    status_code: int
    request_id: str | None = None
    body: dict[str, Any] | None = None


class LineError(BaseModel):
    """Why a request got no HTTP answer (`batch_expired`, `batch_cancelled`)."""

    code: str | None = None
    message: str


class OutputLine(BaseModel):
    """One line of a batch output or error file."""

    id: str | None = None
    custom_id: str
    response: LineResponse | None = None
    #: OpenAI sends an object; vLLM's run-batch a plain message.
    error: LineError | str | None = None


def input_line(request: ChatRequest, model: str, sample_index: int, custom_id: str) -> InputLine:
    """The line asking `model` for sample `sample_index` of `request`: the body the synchronous
    provider sends when it fetches that one sample alone (its own seed after sample 0)."""
    return InputLine(custom_id=custom_id, body=chat_body(model, request, 1, (sample_index,)))


def write_input(path: Path, lines: Iterable[InputLine]) -> int:
    """Write an input file, one JSON object a line; returns its size in bytes (the 200 MB cap)."""
    size = 0
    with path.open("wb") as out:
        for line in lines:
            data = line.model_dump_json().encode() + b"\n"
            out.write(data)
            size += len(data)
    return size


def decode_output(text: str) -> Decoded:
    """One output or error line as (custom_id, its sample or why it has none)."""
    line = OutputLine.model_validate_json(text)
    key = line.custom_id
    if isinstance(line.error, str):
        return key, LineFailure(key, "error", line.error)
    if line.error is not None:
        return key, LineFailure(key, line.error.code or "error", line.error.message)
    if line.response is None:
        raise ValueError(f"custom_id {key!r}: neither a response nor an error")
    body = line.response.body or {}
    if line.response.status_code != 200:
        error = body.get("error")
        detail: dict[str, Any] = error if isinstance(error, dict) else {}
        message = str(detail.get("message") or body or "no body")
        return key, LineFailure(key, str(detail.get("code") or f"http_{line.response.status_code}"), message)
    samples = completion_samples(body, 1, 0.0)
    if not samples:
        return key, LineFailure(key, "no_choices", "the answer has no choices")
    return key, samples[0]


def read_output(path: Path) -> BatchResults:
    """Every line of an output (or error) file, by custom_id; unreadable lines kept apart, named."""
    return read_jsonl(path, decode_output)
