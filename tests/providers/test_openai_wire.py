"""Reading an answer's JSON into samples (llmjury.providers.openai_wire.completion_samples): by choice
index, as leniently as the SDK reads a server's answer, and a shape no answer has refused with a
ValueError that names it, which the provider turns into a retried `malformed response body`."""

from __future__ import annotations

import asyncio
import json

import pytest

from llmjury.chat import chat
from llmjury.errors import TransientProviderError
from llmjury.providers.base import ProviderSpec
from llmjury.providers.openai_chat import OpenAIProvider
from llmjury.providers.openai_wire import completion_samples
from llmjury.testing import FakeOpenAI, Fault


def choice(text: str | None, index: int | None = None, **fields: object) -> dict[str, object]:
    answer: dict[str, object] = {"message": {"role": "assistant", "content": text}, "finish_reason": "stop", **fields}
    if index is not None:
        answer["index"] = index
    return answer


def test_choices_are_read_by_their_index_and_the_usage_shared_out():
    body = {"id": "c", "object": "chat.completion", "choices": [choice("second", 1), choice("first", 0)],
            "usage": {"prompt_tokens": 10, "completion_tokens": 6, "total_tokens": 16}}
    samples = completion_samples(body, 2, 0.5)
    assert [s.text for s in samples] == ["first", "second"]
    assert [s.usage.prompt_tokens for s in samples] == [10, 0]
    assert sum(s.usage.completion_tokens for s in samples) == 6
    assert {s.latency_s for s in samples} == {0.5}
    assert [s.text for s in completion_samples(body, 1, 0.0)] == ["first"]


def test_what_a_server_leaves_out_is_absent_not_an_error():
    """No usage, no index (more than one choice), no finish reason, a null content, extra fields."""
    body = {"choices": [{"message": {"content": "a"}}, {"message": {"content": None}, "stop_reason": None}],
            "system_fingerprint": None}
    samples = completion_samples(body, 3, 0.0)
    assert [(s.text, s.finish_reason, s.usage.prompt_tokens) for s in samples] == [("a", None, 0), ("", None, 0)]
    assert completion_samples({}, 1, 0.0) == []
    assert completion_samples({"choices": None, "usage": None}, 1, 0.0) == []


def test_content_in_parts_is_the_text_of_its_text_parts():
    """Some servers answer a list of parts, a reasoning model's thinking among them."""
    parts = [{"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]},
             {"type": "text", "text": "Paris"}, {"text": " it is"}, {"type": "image_url", "text": "x"}]
    assert [s.text for s in completion_samples({"choices": [choice(parts, 0)]}, 1, 0.0)] == ["Paris it is"]


def test_token_counts_written_as_decimals_or_text_are_counted():
    """The SDK's model took `12.0` and `"5"` as 12 and 5: counting them 0 would undercount the cost."""
    body = {"choices": [choice("a", 0)], "usage": {"prompt_tokens": 12.0, "completion_tokens": "5"}}
    (sample,) = completion_samples(body, 1, 0.0)
    assert (sample.usage.prompt_tokens, sample.usage.completion_tokens) == (12, 5)
    odd = {"choices": [choice("a", 0)], "usage": {"prompt_tokens": 1.5, "completion_tokens": True}}
    assert completion_samples(odd, 1, 0.0)[0].usage.model_dump() == {"prompt_tokens": 0, "completion_tokens": 0}


def test_a_refusal_and_a_content_filter_are_read_as_refusals():
    refused = choice(None, 0)
    refused["message"] = {"role": "assistant", "content": None, "refusal": "I can't"}
    filtered = choice("", 1, finish_reason="content_filter")
    samples = completion_samples({"choices": [refused, filtered]}, 2, 0.0)
    assert [s.refusal for s in samples] == ["I can't", "content_filter"]


def test_token_logprobs_and_their_alternatives_are_read():
    logprobs = {"content": [{"token": "4", "logprob": -0.1, "bytes": [52],
                             "top_logprobs": [{"token": "4", "logprob": -0.1, "bytes": [52]},
                                              {"token": "5", "logprob": -2.5, "bytes": None}]}]}
    (sample,) = completion_samples({"choices": [choice("4", 0, logprobs=logprobs)]}, 1, 0.0)
    assert sample.logprobs is not None
    assert [(t.token, t.logprob, [(a.token, a.logprob) for a in t.top]) for t in sample.logprobs] == [
        ("4", -0.1, [("4", -0.1), ("5", -2.5)])]
    assert completion_samples({"choices": [choice("4", 0, logprobs=None)]}, 1, 0.0)[0].logprobs is None


@pytest.mark.parametrize(("body", "cause"), [
    ([{"choices": []}], "the answer is a JSON list, not an object"),
    ({"choices": {"0": choice("a")}}, "choices is a JSON dict, not a list"),
    ({"choices": ["a"]}, "choice 0 is a JSON str, not an object"),
    ({"choices": [choice("a")], "usage": 12}, "usage is a JSON int, not an object"),
    ({"choices": [{"message": "a"}]}, "message is a JSON str, not an object"),
    ({"choices": [choice(5)]}, "message.content is a JSON int, not text"),
    ({"choices": [choice("a", logprobs={"content": [{"token": "a", "logprob": None}]})]},
     "logprob: Input should be a valid number"),
    ({"choices": [choice("a", logprobs={"content": "a"})]}, "logprobs.content is a JSON str, not a list"),
])
def test_a_shape_no_answer_has_is_a_value_error_naming_it(body, cause):
    with pytest.raises(ValueError) as raised:
        completion_samples(body, 1, 0.0)
    assert cause in str(raised.value)


def answered(body: object) -> list[str]:
    """What the provider makes of a 200 with `body`, asked for two choices: their texts."""
    with FakeOpenAI() as server:
        server.faults.append(Fault(status=200, body=json.dumps(body).encode()))
        provider = OpenAIProvider(ProviderSpec.parse(f"openai:m;base_url={server.base_url}"))

        async def go() -> list[str]:
            try:
                return [s.text for s in await provider.generate(chat(("user", "q"), n=2), 2)]
            finally:
                await provider.aclose()

        return asyncio.run(go())


def test_two_choices_without_an_index_are_read_in_their_order():
    """Before, the SDK's typed answer was sorted by its index: None against None raised TypeError."""
    assert answered({"choices": [choice("a"), choice("b")]}) == ["a", "b"]


@pytest.mark.parametrize(("body", "cause"), [
    ({"choices": [choice("a", 0, logprobs={"content": [{"token": "a", "logprob": None}]})]}, "logprob"),
    ({"choices": [choice({"text": "a"}, 0)]}, "message.content is a JSON dict"),
])
def test_a_field_of_the_wrong_type_is_a_malformed_body_not_another_error(body, cause):
    """Before, pydantic's ValidationError came out of the provider, which no caller expects."""
    with pytest.raises(TransientProviderError, match=rf"malformed response body \(ValueError: .*{cause}"):
        answered(body)
