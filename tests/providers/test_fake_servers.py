"""The fake OpenAI-compatible server behaves like the real servers it stands in for, through the SDK."""

from __future__ import annotations

import asyncio
import json

import openai
import pytest

from llmjury.testing import FakeChoice, FakeOpenAI, Fault


def client(server: FakeOpenAI) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)


def ask(server: FakeOpenAI, **params) -> object:
    async def go():
        async with client(server) as c:
            return await c.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], **params)

    return asyncio.run(go())


def test_llama_cpp_answers_one_choice_whatever_n_asks():
    with FakeOpenAI.llama_cpp() as server:
        assert len(ask(server, n=3).choices) == 1
    with FakeOpenAI() as server:
        assert len(ask(server, n=3).choices) == 3


def test_llama_cpp_refuses_json_schema_and_takes_json_object():
    schema = {"type": "object", "properties": {"grade": {"type": "integer"}}}
    with FakeOpenAI.llama_cpp(lambda body, i: '{"grade": 3}') as server:
        with pytest.raises(openai.InternalServerError):
            ask(server, response_format={"type": "json_schema", "json_schema": {"name": "g", "schema": schema}})
        reply = ask(server, response_format={"type": "json_object", "schema": schema})
        assert json.loads(reply.choices[0].message.content) == {"grade": 3}


def test_llama_cpp_tokenises_digits_one_by_one_and_needs_top_logprobs():
    with FakeOpenAI.llama_cpp(lambda body, i: "Score (1-5): 21") as server:
        assert ask(server, logprobs=True).choices[0].logprobs is None
        tokens = [t.token for t in ask(server, logprobs=True, top_logprobs=2).choices[0].logprobs.content]
    assert tokens == ["Score", " (", "1", "-", "5", ")", ":", " ", "2", "1"]


def test_llama_cpp_sends_no_refusal_field():
    with FakeOpenAI.llama_cpp() as server:
        message = ask(server).choices[0].message
    assert "refusal" not in message.model_dump(exclude_unset=True)


def test_a_serial_server_answers_one_request_at_a_time():
    async def many(server):
        async with client(server) as c:
            await asyncio.gather(*(c.chat.completions.create(model="m", messages=[{"role": "user", "content": str(i)}])
                                   for i in range(6)))

    with FakeOpenAI.llama_cpp(latency=0.01) as serial, FakeOpenAI(latency=0.2) as parallel:
        asyncio.run(many(serial))
        asyncio.run(many(parallel))
    assert serial.max_in_flight == 1 and len(serial.requests) == 6
    assert parallel.max_in_flight > 1


def test_a_held_server_answers_once_enough_requests_are_in_flight_and_a_client_short_of_them_after_the_timeout():
    async def many(server, count):
        # The client gives up long before the held server's own timeout: only the gathering answers it.
        async with openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0, timeout=20) as c:
            asked = [{"role": "user", "content": "q"}]
            done = await asyncio.gather(*(c.chat.completions.create(model="m", messages=asked) for _ in range(count)))
            return [d.choices[0].message.content for d in done]

    with FakeOpenAI(lambda body, i: "held") as server:
        server.hold_until_in_flight(4, timeout=120)  # answered only once all four are in
        assert asyncio.run(many(server, 4)) == ["held"] * 4
        assert server.max_in_flight == 4
        assert asyncio.run(many(server, 1)) == ["held"]  # after the four: answered at once
    with FakeOpenAI(lambda body, i: "late") as short:
        short.hold_until_in_flight(3, timeout=0.2)  # two never make three: each answered after 0.2 s
        assert asyncio.run(many(short, 2)) == ["late"] * 2
        assert short.max_in_flight == 2


def test_a_fault_can_target_one_request_and_send_a_malformed_body():
    with FakeOpenAI(lambda body, i: FakeChoice(text="ok")) as server:
        only_x = Fault(status=200, body=b'{"choices": [', matches=lambda b: b["messages"][0]["content"] == "x")
        server.faults.append(only_x)
        assert ask(server).choices[0].message.content == "ok"  # "hi" does not match: no fault
        assert len(server.faults) == 1


@pytest.mark.parametrize("kind", ["FakeOpenAI", "FakeGemini"])
def test_the_fake_servers_send_each_answer_at_once_not_after_the_clients_delayed_ack(kind):
    """An answer goes out as its headers, then its body: with Nagle's algorithm on the server's socket,
    the body waited for the client's delayed ACK of the headers (40 ms a request on Linux, most of
    the time of a test that makes its requests one after another)."""
    import socket
    from urllib.parse import urlsplit

    from llmjury import testing

    seen: list[int] = []

    class Watched(getattr(testing, kind)):  # type: ignore[misc]
        def _handle(self, handler):
            seen.append(handler.connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            super()._handle(handler)

    with Watched() as server:
        address = urlsplit(server.origin)
        with socket.create_connection((address.hostname, address.port)) as conn:
            conn.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert conn.recv(64).startswith(b"HTTP/1.1 ")
    assert len(seen) == 1 and seen[0]  # the flag's value: 1 on Linux, its bit on BSD and macOS
