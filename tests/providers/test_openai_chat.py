"""The openai: provider against a local server speaking the Chat Completions protocol.

Where servers differ (n, structured output, logprobs, refusals) a test runs against an OpenAI-like
server and a llama.cpp-like one (`any_server`), and states what each gets.
"""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from llmjury.chat import chat
from llmjury.errors import PermanentProviderError, ProviderError, TransientProviderError, UnreachableProviderError
from llmjury.jurors import JurySpec
from llmjury.providers.base import ProviderSpec
from llmjury.running.reach import UNREACHABLE_AFTER, Reach
from llmjury.testing import FakeChoice, FakeOpenAI, Fault


def spec(server) -> ProviderSpec:
    return ProviderSpec.parse(f"openai:gpt-4o-mini;base_url={server.base_url}")


def llama_like(server: FakeOpenAI) -> bool:
    return not server.behaviour.honours_n


def test_texts_usage_and_parameters_reach_the_server(any_server, make_engine):
    engine = make_engine()
    request = chat(("system", "be brief"), ("user", "hi there"), n=3, temperature=0.7, top_p=0.9, max_tokens=50,
                   seed=5)
    completion = engine.run(engine.complete(spec(any_server), request))
    if llama_like(any_server):  # one choice back: the rest asked one seeded call each
        assert completion.texts == ["reply 0 seeded 5", "reply 0 seeded 6", "reply 0 seeded 7"]
        assert [r.get("n", 1) for r in any_server.requests] == [3, 1, 1]
        assert completion.usage.prompt_tokens == 3 * 4  # every call sent the prompt
    else:
        assert completion.texts == ["reply 0 seeded 5", "reply 1 seeded 5", "reply 2 seeded 5"]
        assert [r.get("n", 1) for r in any_server.requests] == [3]
        assert completion.usage.prompt_tokens == 4  # "be brief" + "hi there", counted once
    assert completion.usage.completion_tokens == 3 * 4
    for body in any_server.requests:
        assert body["temperature"] == 0.7 and body["top_p"] == 0.9 and body["max_tokens"] == 50
        assert body["messages"][0] == {"role": "system", "content": "be brief"}


def test_top_logprobs_are_parsed_per_token(any_server, make_engine):
    any_server.reply = lambda body, i: FakeChoice("4", logprobs=[("4", -0.2, [("4", -0.2), ("3", -1.9)])])
    engine = make_engine()
    request = chat(("user", "score?"), logprobs=True, top_logprobs=2)
    completion = engine.run(engine.complete(spec(any_server), request))
    (token,) = completion.samples[0].logprobs
    assert token.token == "4" and [t.token for t in token.top] == ["4", "3"]
    assert any_server.requests[0]["top_logprobs"] == 2


def test_logprobs_of_a_number_come_per_token_as_the_server_splits_them(any_server, make_engine):
    any_server.reply = lambda body, i: "Score: 21"
    engine = make_engine()
    completion = engine.run(engine.complete(spec(any_server), chat(("user", "score?"), logprobs=True, top_logprobs=1)))
    tokens = [t.token for t in completion.samples[0].logprobs]
    assert tokens == (["Score", ":", " ", "2", "1"] if llama_like(any_server) else ["Score:", "21"])


def test_json_schema_is_sent_as_the_server_takes_it(any_server, make_engine):
    any_server.reply = lambda body, i: '{"grade": "good"}'
    engine = make_engine()
    schema = {"type": "object", "properties": {"grade": {"type": "string"}}}
    request = chat(("user", "grade"), json_schema=schema, schema_name="Grade")
    assert engine.run(engine.complete(spec(any_server), request)).text == '{"grade": "good"}'
    sent = [body["response_format"] for body in any_server.requests]
    strict = {"type": "json_schema", "json_schema": {"name": "Grade", "schema": schema}}
    if llama_like(any_server):  # json_schema gets HTTP 500: json_object with the schema instead
        assert sent == [strict, {"type": "json_object", "schema": schema}]
    else:
        assert sent == [strict]


def test_rate_limit_is_retried_after_the_time_the_server_asks(openai_server, make_engine):
    openai_server.faults.append(Fault(status=429, headers={"retry-after-ms": "150"}))
    engine = make_engine()
    started = time.perf_counter()
    completion = engine.run(engine.complete(spec(openai_server), chat(("user", "hi"))))
    assert completion.text == "reply 0"
    assert time.perf_counter() - started >= 0.15
    assert len(openai_server.requests) == 2


def test_server_errors_and_dropped_connections_are_retried(openai_server, make_engine):
    openai_server.faults.extend([Fault(status=503), Fault(drop=True)])
    engine = make_engine()
    assert engine.run(engine.complete(spec(openai_server), chat(("user", "hi")))).text == "reply 0"
    assert len(openai_server.requests) == 3
    assert engine.ledger["openai:gpt-4o-mini"].calls == 3


def test_retries_give_up_with_a_transient_error_naming_the_provider(openai_server, make_engine):
    openai_server.faults.extend([Fault(status=500)] * 5)
    engine = make_engine(retry_attempts=3)
    with pytest.raises(TransientProviderError, match=r"openai:gpt-4o-mini: HTTP 500"):
        engine.run(engine.complete(spec(openai_server), chat(("user", "hi"))))
    assert len(openai_server.requests) == 3


def test_bad_request_is_permanent_and_not_retried(openai_server, make_engine):
    openai_server.faults.append(Fault(status=400, message="bad schema"))
    engine = make_engine()
    with pytest.raises(PermanentProviderError, match="HTTP 400: bad schema"):
        engine.run(engine.complete(spec(openai_server), chat(("user", "hi"))))
    assert len(openai_server.requests) == 1


def test_refusals_come_back_marked_and_are_not_cached(any_server, make_engine):
    any_server.reply = lambda body, i: FakeChoice("", refusal="I can't help with that")
    engine = make_engine()
    first = engine.run(engine.complete(spec(any_server), chat(("user", "x"))))
    if llama_like(any_server):  # no refusal field: a null content is an empty answer
        assert first.samples[0].refusal is None and first.problem == "empty answer (finish reason stop)"
    else:
        assert first.samples[0].refusal == "I can't help with that"
        assert first.problem == "refused: I can't help with that"
    with pytest.raises(PermanentProviderError, match="no answer"):
        first.answer()
    any_server.reply = lambda body, i: "fine"
    again = make_engine(store=engine.store.location, run_id="run-2")
    assert again.run(again.complete(spec(any_server), chat(("user", "x")))).text == "fine"


def test_a_malformed_body_is_transient_then_unscored_with_its_cause(openai_server, make_engine):
    from llmjury.chat import chat
    from llmjury.judgement.judging import ask_judge
    from llmjury.judgement.jury import Jury
    from llmjury.pricing import PriceTable
    from llmjury.prompts import PromptLibrary
    from llmjury.testing import Fault

    openai_server.reply = lambda body, index: "A"
    openai_server.faults.append(Fault(status=200, body=b'{"choices": ['))
    engine = make_engine()
    spec = ProviderSpec.parse(f"openai:judge;base_url={openai_server.base_url}")
    assert engine.run(engine.complete(spec, chat(("user", "q")))).text == "A"  # retried, then answered
    for _ in range(engine.settings.retry_attempts):
        openai_server.faults.append(Fault(status=200, body=b"<html>bad gateway</html>"))
    engine.settings.roles["judge"] = JurySpec.parse(f"openai:judge;base_url={openai_server.base_url}")
    jury = Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())
    runs = engine.run(ask_judge(jury, "toy", [chat(("user", "other"))], lambda text: text))
    assert runs.answers[0].error.startswith("call failed: openai:judge: malformed response body (JSONDecodeError")


def test_without_aiohttp_calls_go_through_the_sdks_httpx_client(openai_server, make_engine, monkeypatch):
    """openai installed without its aiohttp extra: the SDK's default client, the same answers."""
    import openai

    def missing(**_kwargs):
        raise RuntimeError("To use the aiohttp client you must have installed the package with the `aiohttp` extra")

    aiohttp_client = openai.DefaultAioHttpClient
    monkeypatch.setattr(openai, "DefaultAioHttpClient", missing)
    openai_server.reply = lambda body, i: "fine"
    engine = make_engine()
    completion = engine.run(engine.complete(spec(openai_server), chat(("user", "q"), n=2)))
    assert completion.texts == ["fine", "fine"]
    assert not isinstance(engine.provider(spec(openai_server)).client._client, aiohttp_client)


def test_calls_use_the_sdks_aiohttp_client_when_installed(openai_server, make_engine):
    import openai

    engine = make_engine()
    assert engine.run(engine.complete(spec(openai_server), chat(("user", "q")))).samples
    assert isinstance(engine.provider(spec(openai_server)).client._client, openai.DefaultAioHttpClient)


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on: connections to it are refused at once."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        return free.getsockname()[1]


def test_a_provider_no_server_answers_is_given_up_on_after_a_few_calls(make_engine):
    """No network or a wrong base URL: every call failed only after its retries, and a run of
    thousands of cases took minutes to say so. After a few, the rest fail at once, saying why."""
    engine = make_engine(concurrency=1)
    unreachable = ProviderSpec.parse(f"openai:gpt-4o-mini;base_url=http://127.0.0.1:{closed_port()}/v1")

    async def twelve_calls() -> list[object]:
        calls = (engine.complete(unreachable, chat(("user", f"q{i}"))) for i in range(12))
        return await asyncio.gather(*calls, return_exceptions=True)

    errors = engine.run(twelve_calls())
    assert all(isinstance(e, ProviderError) for e in errors)
    (ledger,) = engine.ledger.values()
    assert ledger.calls == UNREACHABLE_AFTER  # one slot: the attempts after the eighth were never made
    # A call ends on its own connection error only if all its attempts came first: at most two do.
    given_up = [str(e) for e in errors if isinstance(e, PermanentProviderError)]
    assert len(given_up) >= 12 - UNREACHABLE_AFTER // engine.settings.retry_attempts
    # the OS's words, not the aiohttp transport's "Request timed out." for a refused connection
    assert f"unreachable: {UNREACHABLE_AFTER} connection attempts in a row found no server and none was answered " \
           "in this run (last: cannot connect (" in given_up[0] and "Connect call failed" in given_up[0]


def test_a_provider_that_answered_once_is_never_given_up_on():
    reach = Reach()
    reach.succeeded()
    for _ in range(2 * UNREACHABLE_AFTER):
        reach.failed(UnreachableProviderError("openai:m", "APIConnectionError: refused"))
    reach.check("openai:m")  # no error: the server was there, it may come back
    fresh = Reach()
    for _ in range(UNREACHABLE_AFTER):
        fresh.failed(UnreachableProviderError("openai:m", "APIConnectionError: refused"))
    with pytest.raises(PermanentProviderError, match="unreachable"):
        fresh.check("openai:m")
