"""Structured output is given up only on an answer that proves the server refuses it: a 4xx naming
the parameter, or llama.cpp's 500 for `json_schema`; never a transient 5xx or an unrelated 400."""

from __future__ import annotations

import json

import pytest

from llmjury.chat import chat
from llmjury.errors import PermanentProviderError
from llmjury.providers.base import ProviderSpec
from llmjury.providers.structured import refusal_proof
from llmjury.testing import FakeOpenAI, Fault
from llmjury.testing.fake_openai import LLAMA_CPP_REFUSAL

SCHEMA = {"type": "object", "properties": {"grade": {"type": "integer"}}, "required": ["grade"]}


def refusal(status: int, message: str, param: str | None, kind: str = "invalid_request_error") -> Fault:
    """A fault whose body is an OpenAI-shaped error, `param` included."""
    body = {"error": {"message": message, "type": kind, "param": param, "code": None}}
    return Fault(status=status, body=json.dumps(body).encode())


def formats(server: FakeOpenAI) -> list[str | None]:
    return [(r.get("response_format") or {}).get("type") for r in server.requests]


def grade(engine, spec: ProviderSpec, text: str = "grade it") -> str:
    return engine.run(engine.complete(spec, chat(("user", text), json_schema=SCHEMA, schema_name="grade"))).text


@pytest.mark.parametrize("status", [500, 502, 503])
def test_a_server_error_then_a_success_keeps_json_schema(make_engine, status):
    with FakeOpenAI(lambda body, i: '{"grade": 3}') as server:
        spec = ProviderSpec.parse(f"openai:m;base_url={server.base_url}")
        server.faults.extend([Fault(status=status, message="response_format json_schema: upstream blip"),
                              Fault(status=status)])
        engine = make_engine()
        assert json.loads(grade(engine, spec)) == {"grade": 3}
        grade(engine, spec, "again")
        assert formats(server) == ["json_schema"] * 4  # two faults, the retried success, the next call
        assert engine.adaptations() == {}


def test_a_400_that_names_response_format_steps_down_and_says_so(make_engine):
    with FakeOpenAI(lambda body, i: '{"grade": 4}') as server:
        spec = ProviderSpec.parse(f"openai:m;base_url={server.base_url}")
        server.faults.append(refusal(400, "Invalid parameter: 'response_format' of type 'json_schema' is not "
                                          "supported with this model.", "response_format"))
        engine = make_engine()
        assert json.loads(grade(engine, spec)) == {"grade": 4}
        grade(engine, spec, "again")
        assert formats(server) == ["json_schema", "json_object", "json_object"]
        assert engine.adaptations()["openai:m"]["structured_output"] == (
            "json_schema refused (HTTP 400: param response_format: Invalid parameter: 'response_format' of type "
            "'json_schema' is not supported with this model.); using json_object")


@pytest.mark.parametrize(("message", "param"), [
    ("This model's maximum context length is 8192 tokens.", "messages"),
    ("'temperature' must be at most 2", None),
    ("Your schema of work is unknown", "messages"),  # names a word like the parameter, but another field
])
def test_an_unrelated_400_fails_the_call_and_keeps_json_schema(make_engine, message, param):
    with FakeOpenAI(lambda body, i: '{"grade": 1}') as server:
        spec = ProviderSpec.parse(f"openai:m;base_url={server.base_url}")
        server.faults.append(refusal(400, message, param))
        engine = make_engine()
        with pytest.raises(PermanentProviderError, match="HTTP 400"):
            grade(engine, spec)
        grade(engine, spec, "next")
        assert formats(server) == ["json_schema", "json_schema"]
        assert engine.adaptations() == {}


def test_a_500_that_is_not_llama_cpps_validation_error_proves_nothing(make_engine):
    with FakeOpenAI(lambda body, i: '{"grade": 2}') as server:
        spec = ProviderSpec.parse(f"openai:m;base_url={server.base_url}")
        server.faults.append(refusal(500, "CUDA out of memory while handling response_format", None,
                                     "internal_server_error"))
        engine = make_engine()
        grade(engine, spec)
        assert formats(server) == ["json_schema", "json_schema"]


def test_structured_calls_refused_together_step_down_once(make_engine):
    """Several calls in flight with json_schema are all refused: json_object is learned once, not
    stepped past to the schema in the prompt by the later refusals."""
    with FakeOpenAI.llama_cpp(lambda body, i: '{"grade": 5}') as server:
        spec = ProviderSpec.parse(f"openai:small;base_url={server.base_url}")
        engine = make_engine()

        async def many():
            import asyncio
            return await asyncio.gather(*(engine.complete(spec, chat(("user", f"q{i}"), json_schema=SCHEMA))
                                          for i in range(6)))

        assert all(json.loads(c.text) == {"grade": 5} for c in engine.run(many()))
        assert set(formats(server)) == {"json_schema", "json_object"}
        assert "using json_object" in engine.adaptations()["openai:small"]["structured_output"]


@pytest.mark.parametrize(("status", "body", "proves"), [
    (500, {"message": LLAMA_CPP_REFUSAL, "type": "internal_server_error", "param": None}, True),
    (500, {"message": "response_format type json_schema is not supported", "type": "server_error"}, False),
    (503, {"message": LLAMA_CPP_REFUSAL, "type": "internal_server_error"}, False),
    (400, {"message": "response_format is not supported", "param": "response_format"}, True),
    (422, {"message": "json_schema: unknown field"}, True),
    (400, {"message": "bad request", "param": "response_format.json_schema.schema"}, True),
    (400, {"message": "response_format is fine, messages are too long", "param": "messages"}, False),
    (400, {"message": "context_length_exceeded"}, False),
    (429, {"message": "rate limit on response_format requests"}, False),
    (401, {"message": "json_schema needs a paid key"}, False),
])
def test_what_proves_a_refusal(status, body, proves):
    assert (refusal_proof(status, body, "") is not None) is proves
