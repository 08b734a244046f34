"""Gemini batch requests and responses: inline requests (google-genai's `InlinedRequest`, keyed by a
`key` in their metadata), the lines of a JSONL input file (`{"key", "request"}`), and the answers
read back from inline responses or a result file (`{"key", "response" | "error"}`).

Requests and answers go through the synchronous provider's own code (llmjury.providers.gemini_wire).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from google.genai import types

from llmjury.batch.results import BatchResults, Decoded, LineFailure, read_jsonl
from llmjury.chat import ChatRequest, Sample
from llmjury.errors import BatchFileError
from llmjury.providers.gemini_wire import blocked_reason, contents, generate_config, response_samples


def inline_request(request: ChatRequest, sample_index: int, key: str) -> types.InlinedRequest:
    """The inline request asking for sample `sample_index` of `request`, tagged with `key`. Its parts are
    validated as they are built; the whole is not validated again (that took most of its time)."""
    return types.InlinedRequest.model_construct(contents=contents(request),
                                                config=generate_config(request, 1, sample_index),
                                                metadata={"key": key})


def file_line(request: ChatRequest, sample_index: int, key: str) -> dict[str, Any]:
    """The same request as a line of a JSONL input file: the REST `GenerateContentRequest`, whose
    system instruction sits beside the generation config, not in it."""
    config = generate_config(request, 1, sample_index).model_dump(by_alias=True, exclude_none=True, mode="json")
    body: dict[str, Any] = {"contents": [c.model_dump(by_alias=True, exclude_none=True, mode="json")
                                         for c in contents(request)]}
    system = config.pop("systemInstruction", None)
    if system is not None:
        body["systemInstruction"] = {"parts": [{"text": system}], "role": "user"}
    body["generationConfig"] = config
    return {"key": key, "request": body}


def decode_inline(answer: types.InlinedResponse) -> Decoded:
    """One inline response as (key, its sample or why it has none)."""
    key = (answer.metadata or {}).get("key")
    if key is None:
        raise ValueError("an inline response without a `key` in its metadata")
    if answer.error is not None:
        return key, LineFailure(key, str(answer.error.code), answer.error.message or "no message")
    if answer.response is None:
        raise ValueError(f"key {key!r}: neither a response nor an error")
    return key, _decode_response(key, answer.response)


def decode_inline_all(answers: list[types.InlinedResponse]) -> BatchResults:
    """A finished batch's inline responses, by key; one that cannot be read is kept apart, named by position."""
    results = BatchResults()
    for position, answer in enumerate(answers, start=1):
        try:
            results.add(decode_inline(answer))
        except ValueError as exc:
            results.malformed.append(BatchFileError("inline responses", position, str(exc)))
    return results


def decode_result_line(text: str) -> Decoded:
    """One line of a result file as (key, its sample or why it has none)."""
    line = json.loads(text)
    if not isinstance(line, dict) or not isinstance(line.get("key"), str):
        raise ValueError("not an object with a string `key`")
    key = line["key"]
    error = line.get("error") or line.get("status")
    if isinstance(error, dict):
        return key, LineFailure(key, str(error.get("code", "error")), str(error.get("message", error)))
    if error:
        return key, LineFailure(key, "error", str(error))
    if not isinstance(line.get("response"), dict):
        raise ValueError(f"key {key!r}: neither a response nor an error")
    return key, _decode_response(key, types.GenerateContentResponse.model_validate(line["response"]))


def read_results(path: Path) -> BatchResults:
    """Every line of a result file, by key; unreadable lines kept apart, named."""
    return read_jsonl(path, decode_result_line)


def _decode_response(key: str, response: types.GenerateContentResponse) -> Sample | LineFailure:
    blocked = blocked_reason(response)
    if blocked is not None:
        return LineFailure(key, "blocked", f"prompt blocked: {blocked}")
    samples = response_samples(response, 0.0)
    if not samples:
        return LineFailure(key, "no_candidates", "the answer has no candidates")
    return samples[0]
