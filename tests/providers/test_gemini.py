"""The gemini: provider against a local server speaking the generateContent protocol."""

from __future__ import annotations

import asyncio

import pytest

from llmjury.chat import chat
from llmjury.errors import PermanentProviderError, TransientProviderError
from llmjury.providers.base import ProviderSpec
from llmjury.providers.gemini import GeminiProvider
from llmjury.testing import FakeChoice, Fault


def spec(server) -> ProviderSpec:
    return ProviderSpec.parse(f"gemini:gemini-2.0-flash;base_url={server.origin}")


def test_system_prompt_roles_and_config_map_to_gemini_fields(gemini_server, make_engine):
    engine = make_engine()
    request = chat(("system", "be kind"), ("user", "q1"), ("assistant", "a1"), ("user", "q2"),
                   temperature=1.0, top_p=1.0, max_tokens=20)
    assert engine.run(engine.complete(spec(gemini_server), request)).text == "reply 0"
    body = gemini_server.requests[0]
    assert body["systemInstruction"]["parts"][0]["text"] == "be kind"
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    assert body["generationConfig"]["temperature"] == 1.0
    assert body["generationConfig"]["maxOutputTokens"] == 20
    assert "x-goog-api-key" in gemini_server.headers[0]


def test_more_samples_than_one_call_allows_are_batched(gemini_server, make_engine):
    engine = make_engine()
    completion = engine.run(engine.complete(spec(gemini_server), chat(("user", "rate"), n=20, temperature=1.0)))
    assert len(completion.samples) == 20
    sizes = sorted(r["generationConfig"]["candidateCount"] for r in gemini_server.requests)
    assert sizes == [4, 8, 8]


def test_logprobs_and_json_schema(gemini_server, make_engine):
    gemini_server.reply = lambda body, i: FakeChoice("5", logprobs=[("5", -0.1, [("5", -0.1), ("4", -2.4)])])
    engine = make_engine()
    schema = {"type": "object", "properties": {"score": {"type": "integer"}}}
    completion = engine.run(engine.complete(
        spec(gemini_server), chat(("user", "s"), logprobs=True, top_logprobs=2, json_schema=schema)))
    config = gemini_server.requests[0]["generationConfig"]
    assert config["responseLogprobs"] is True and config["logprobs"] == 2
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == schema
    assert [t.token for t in completion.samples[0].logprobs[0].top] == ["5", "4"]


def test_rate_limit_then_success_and_permanent_errors(gemini_server, make_engine):
    gemini_server.faults.append(Fault(status=429, headers={"retry-after": "0.05"}))
    engine = make_engine()
    assert engine.run(engine.complete(spec(gemini_server), chat(("user", "hi")))).text == "reply 0"
    gemini_server.faults.append(Fault(status=403, message="no key"))
    with pytest.raises(PermanentProviderError, match="403"):
        engine.run(engine.complete(spec(gemini_server), chat(("user", "other"))))


def test_safety_block_is_a_refusal(gemini_server, make_engine):
    gemini_server.reply = lambda body, i: FakeChoice("", refusal="SAFETY")
    engine = make_engine()
    assert engine.run(engine.complete(spec(gemini_server), chat(("user", "x")))).samples[0].refusal == "SAFETY"


def test_a_server_error_then_a_success_keeps_the_json_schema(gemini_server, make_engine):
    """Gemini never gives up schema enforcement: after a 500 the retried call sends the schema again."""
    schema = {"type": "object", "properties": {"score": {"type": "integer"}}}
    gemini_server.reply = lambda body, i: '{"score": 3}'
    gemini_server.faults.append(Fault(status=500, message="responseJsonSchema: backend blip"))
    engine = make_engine()
    assert engine.run(engine.complete(spec(gemini_server), chat(("user", "s"), json_schema=schema))).text == \
        '{"score": 3}'
    assert [r["generationConfig"].get("responseJsonSchema") for r in gemini_server.requests] == [schema, schema]
    assert engine.adaptations() == {}


def test_a_dropped_connection_is_a_transient_error_reaching_the_engine_at_once(gemini_server):
    # google-genai's async client speaks aiohttp when it is installed; its ServerDisconnectedError
    # escaped the provider untyped. And the SDK retried a dropped connection itself once, after
    # sleeping 1 to 10 s at random: a wait neither llmjury's retries, its budget nor its stop saw.
    gemini_server.faults.append(Fault(drop=True))

    async def call() -> None:
        provider = GeminiProvider(spec(gemini_server))
        try:
            await provider.generate(chat(("user", "hi")), 1)
        finally:
            await provider.aclose()

    with pytest.raises(TransientProviderError):
        asyncio.run(call())
    assert len(gemini_server.requests) == 1  # the one request, dropped, was not sent again
