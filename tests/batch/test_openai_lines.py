"""OpenAI batch lines: a line's body is the request the openai provider sends synchronously, an
output line is read into the sample the synchronous path would have made, the shapes `vllm run-batch`
writes are read too, and a line that cannot be read is named by file and line while the rest are kept."""

from __future__ import annotations

import asyncio
import json

import pytest

from llmjury.batch.openai_lines import InputLine, decode_output, input_line, read_output, write_input
from llmjury.batch.results import LineFailure
from llmjury.chat import Sample, chat
from llmjury.providers.base import ProviderSpec
from llmjury.providers.openai_chat import OpenAIProvider
from llmjury.testing import FakeChoice, FakeOpenAI

SCHEMA = {"type": "object", "properties": {"grade": {"type": "integer"}}, "required": ["grade"]}
REQUESTS = {
    "plain": chat(("system", "be brief"), ("user", "hi"), temperature=0.0, max_tokens=20),
    "seeded": chat(("user", "hi"), seed=5, top_p=0.9),
    "logprobs": chat(("user", "score?"), logprobs=True, top_logprobs=3),
    "schema": chat(("user", "grade it"), json_schema=SCHEMA, schema_name="grade"),
    "decision": chat(("user", "decide"), json_schema=SCHEMA, native_schema=True),
}


def synchronous(server: FakeOpenAI, request, index: int) -> tuple[dict, Sample]:
    """The body the openai provider sends for sample `index` fetched alone, and the sample it makes."""
    async def go():
        provider = OpenAIProvider(ProviderSpec.parse(f"openai:gpt-4o-mini;base_url={server.base_url}"))
        try:
            return (await provider.generate(request, 1, [index]))[0]
        finally:
            await provider.aclose()

    sample = asyncio.run(go())
    return server.requests[-1], sample


@pytest.mark.parametrize("name", sorted(REQUESTS))
@pytest.mark.parametrize("index", [0, 2])
def test_a_lines_body_is_the_request_the_provider_sends_for_that_sample(name, index):
    with FakeOpenAI() as server:
        sent, _ = synchronous(server, REQUESTS[name], index)
    line = input_line(REQUESTS[name], "gpt-4o-mini", index, "key-1")
    assert line.body == sent
    assert (line.custom_id, line.method, line.url) == ("key-1", "POST", "/v1/chat/completions")


def test_an_output_line_reads_into_the_sample_the_synchronous_call_made():
    reply = FakeChoice("4", logprobs=[("4", -0.2, [("4", -0.2), ("3", -1.9)])])
    request = REQUESTS["logprobs"]
    with FakeOpenAI(lambda body, i: reply) as server:
        sent, expected = synchronous(server, request, 0)
        status, body = server.chat_answer(sent)
    line = {"id": "batch_req_1", "custom_id": "k", "response": {"status_code": status, "request_id": "r",
                                                                 "body": body}, "error": None}
    key, sample = decode_output(json.dumps(line))
    assert key == "k" and isinstance(sample, Sample)
    assert sample.model_dump(exclude={"latency_s"}) == expected.model_dump(exclude={"latency_s"})


def test_an_input_file_is_one_json_object_a_line_and_says_its_size(tmp_path):
    lines = [input_line(REQUESTS["plain"], "gpt-4o-mini", i, f"k{i}") for i in range(3)]
    path = tmp_path / "in.jsonl"
    size = write_input(path, lines)
    assert size == path.stat().st_size
    assert [InputLine.model_validate_json(text) for text in path.read_text().splitlines()] == lines


VLLM_OK = {"id": "vllm-5d2a", "custom_id": "a", "response": {"status_code": 200, "request_id": "vllm-batch-1", "body": {
    "id": "cmpl-1", "object": "chat.completion", "created": 1, "model": "Qwen/Qwen2.5-0.5B-Instruct",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Paris", "tool_calls": [],
                                         "reasoning_content": None},
                 "logprobs": None, "finish_reason": "stop", "stop_reason": None}],
    "usage": {"prompt_tokens": 12, "total_tokens": 13, "completion_tokens": 1, "prompt_tokens_details": None},
    "prompt_logprobs": None}}, "error": None}
VLLM_ERROR = {"id": "vllm-77", "custom_id": "b", "response": {"status_code": 400, "request_id": "vllm-batch-2",
                                                               "body": None}, "error": "model not found"}


def test_the_lines_vllm_run_batch_writes_are_read(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps(VLLM_OK) + "\n" + json.dumps(VLLM_ERROR) + "\n")
    results = read_output(path)
    assert results.samples["a"].text == "Paris" and results.samples["a"].usage.prompt_tokens == 12
    assert results.failures == {"b": LineFailure("b", "error", "model not found")}
    assert results.malformed == []


def test_an_http_error_line_is_a_failure_with_its_code_and_message():
    line = {"custom_id": "c", "response": {"status_code": 429, "body": {"error": {
        "message": "slow down", "code": "rate_limit_exceeded"}}}}
    assert decode_output(json.dumps(line)) == ("c", LineFailure("c", "rate_limit_exceeded", "slow down"))


def test_malformed_lines_are_named_by_file_and_line_and_the_rest_kept(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text("\n".join([
        json.dumps(VLLM_OK),
        "{not json",
        json.dumps({"response": VLLM_OK["response"]}),  # no custom_id
        "",
        json.dumps({"custom_id": "x"}),  # neither a response nor an error
        json.dumps({**VLLM_OK, "custom_id": "z"}),
    ]) + "\n")
    results = read_output(path)
    assert sorted(results.samples) == ["a", "z"]
    assert [error.line for error in results.malformed] == [2, 3, 5]
    assert all(str(error).startswith(f"{path}, line ") for error in results.malformed)
    assert "custom_id: Field required" in str(results.malformed[1])
    assert "custom_id 'x': neither a response nor an error" in str(results.malformed[2])
