"""The two kinds of OpenAI-compatible server the provider tests run against where servers differ."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from llmjury.testing import FakeOpenAI


def by_seed(body, index):
    return f"reply {index} seeded {body.get('seed')}"


@pytest.fixture(params=["openai", "llama.cpp"])
def any_server(request) -> Iterator[FakeOpenAI]:
    """An OpenAI-like server, then a llama.cpp-like one (one choice, json_object only, digit tokens,
    no refusal field, logprobs only with top_logprobs, one request at a time)."""
    server = FakeOpenAI(by_seed) if request.param == "openai" else FakeOpenAI.llama_cpp(by_seed)
    with server:
        yield server

