"""Gemini batch requests: a file line is the request the gemini provider sends synchronously, an answer
reads into the sample the synchronous path makes, and unreadable lines are named while the rest are kept."""

from __future__ import annotations

import asyncio
import json

import pytest
from google.genai import types

from llmjury.batch.gemini_lines import (
    decode_inline,
    decode_inline_all,
    decode_result_line,
    file_line,
    inline_request,
    read_results,
)
from llmjury.batch.results import LineFailure
from llmjury.chat import Sample, chat
from llmjury.providers.base import ProviderSpec
from llmjury.providers.gemini import GeminiProvider
from llmjury.testing import FakeChoice, FakeGemini

REQUESTS = {
    "plain": chat(("system", "be brief"), ("user", "q1"), ("assistant", "a1"), ("user", "q2"), temperature=1.0,
                  max_tokens=20),
    "logprobs": chat(("user", "score?"), logprobs=True, top_logprobs=2, seed=4),
    "schema": chat(("user", "grade"), json_schema={"type": "object"}, top_p=0.5),
}


def synchronous(server: FakeGemini, request) -> tuple[dict, Sample]:
    async def go():
        provider = GeminiProvider(ProviderSpec.parse(f"gemini:gemini-2.0-flash;base_url={server.origin}"))
        try:
            return (await provider.generate(request, 1))[0]
        finally:
            await provider.aclose()

    sample = asyncio.run(go())
    return server.requests[-1], sample


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_a_file_lines_request_is_the_one_the_provider_sends(name):
    with FakeGemini() as server:
        sent, _ = synchronous(server, REQUESTS[name])
    assert file_line(REQUESTS[name], 0, "k") == {"key": "k", "request": sent}


def test_a_later_sample_asked_alone_gets_its_own_seed():
    config = inline_request(REQUESTS["logprobs"], 3, "k").config
    assert config is not None and config.seed == 7 and config.candidate_count == 1
    assert file_line(REQUESTS["logprobs"], 3, "k")["request"]["generationConfig"]["seed"] == 7


def test_an_answer_reads_into_the_sample_the_synchronous_call_made():
    reply = FakeChoice("4", logprobs=[("4", -0.2, [("4", -0.2), ("3", -1.9)])])
    with FakeGemini(lambda body, i: reply) as server:
        sent, expected = synchronous(server, REQUESTS["logprobs"])
        _, body = server.generate_answer(sent)
    answer = types.InlinedResponse(response=types.GenerateContentResponse.model_validate(body), metadata={"key": "k"})
    key, sample = decode_inline(answer)
    assert key == "k" and isinstance(sample, Sample)
    assert sample.model_dump(exclude={"latency_s"}) == expected.model_dump(exclude={"latency_s"})
    line_key, from_file = decode_result_line(json.dumps({"key": "k", "response": body}))
    assert (line_key, from_file) == (key, sample)


def test_an_inline_error_or_a_blocked_prompt_is_a_failure():
    error = types.InlinedResponse(error=types.JobError(code=4, message="expired"), metadata={"key": "a"})
    blocked = types.InlinedResponse(
        response=types.GenerateContentResponse(prompt_feedback=types.GenerateContentResponsePromptFeedback(
            block_reason=types.BlockedReason.SAFETY)), metadata={"key": "b"})
    results = decode_inline_all([error, blocked, types.InlinedResponse(metadata={"other": "x"})])
    assert results.failures == {"a": LineFailure("a", "4", "expired"),
                                "b": LineFailure("b", "blocked", "prompt blocked: BlockedReason.SAFETY")}
    assert [str(e) for e in results.malformed] == [
        "inline responses, line 3: an inline response without a `key` in its metadata"]


def test_malformed_result_lines_are_named_by_file_and_line_and_the_rest_kept(tmp_path):
    good = {"key": "a", "response": {"candidates": [{"content": {"parts": [{"text": "yes"}], "role": "model"},
                                                     "finishReason": "STOP", "index": 0}]}}
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join([json.dumps(good), "[1, 2]", json.dumps({"key": "b"}),
                               json.dumps({"key": "c", "error": {"code": 13, "message": "internal"}})]) + "\n")
    results = read_results(path)
    assert results.samples["a"].text == "yes"
    assert results.failures == {"c": LineFailure("c", "13", "internal")}
    assert [(e.line, e.cause) for e in results.malformed] == [
        (2, "not an object with a string `key`"), (3, "key 'b': neither a response nor an error")]
    assert str(results.malformed[0]).startswith(f"{path}, line 2: ")
