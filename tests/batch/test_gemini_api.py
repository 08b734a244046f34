"""The Gemini batch client through the real `google-genai` SDK against the fake: inline and file
submits, polls, results, expiry with partial output, failed requests, the enqueued-token limit, a
dropped poll, adopting a batch by its display name, and a batch of 50,000 requests."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from llmjury.batch.api import EnqueuedTokenLimit, JobStatus, PendingItem, batch_api
from llmjury.batch.gemini_api import GeminiBatchApi
from llmjury.chat import chat
from llmjury.errors import PermanentProviderError, TransientProviderError
from llmjury.providers.base import ProviderSpec
from llmjury.testing import FakeGemini, Fault

MODEL = "gemini-2.0-flash"


@pytest.fixture
def server():
    with FakeGemini(lambda body, i: "answer to " + body["contents"][-1]["parts"][0]["text"]) as fake:
        yield fake


def items(count: int, start: int = 0) -> list[PendingItem]:
    return [PendingItem(f"k{i}", chat(("system", "be brief"), ("user", f"q{i}")), 0, 10)
            for i in range(start, start + count)]


def local(remote: str) -> str:
    return remote.removeprefix("batches/")


def run(server: FakeGemini, scenario: Callable[[GeminiBatchApi], Awaitable[Any]], inline_bytes: int | None = None,
        ) -> Any:
    """Run `scenario` with a client of the fake (inline up to `inline_bytes`), closed after it."""
    async def go() -> Any:
        api = batch_api(ProviderSpec.parse(f"gemini:{MODEL};api_key=test-key;base_url={server.origin}"))
        assert isinstance(api, GeminiBatchApi)
        if inline_bytes is not None:
            api.inline_bytes = inline_bytes
        try:
            return await scenario(api)
        finally:
            await api.aclose()
    return asyncio.run(go())


@pytest.mark.parametrize("inline_bytes", [None, 0], ids=["inline", "uploaded file"])
def test_a_submitted_batch_runs_ends_and_answers_each_key_with_no_synchronous_call(server, inline_bytes):
    async def scenario(api: GeminiBatchApi):
        remote = await api.submit("job-1", MODEL, items(3))
        running = await api.status(remote)
        server.batches.complete(local(remote))
        return remote, running, await api.status(remote), await api.results(remote)

    remote, running, ended, results = run(server, scenario, inline_bytes)
    assert running == JobStatus("running", "JOB_STATE_PENDING")
    assert ended == JobStatus("ended", "JOB_STATE_SUCCEEDED")
    assert {k: s.text for k, s in results.samples.items()} == {"k0": "answer to q0", "k1": "answer to q1",
                                                              "k2": "answer to q2"}
    assert not results.failures and not results.malformed
    batch = server.batches.get(local(remote))
    assert batch.metadata == {"displayName": "job-1"} and batch.model == MODEL
    assert batch.extra["file_source"] is (inline_bytes == 0)
    assert (server.batches.creations, server.chat_calls) == (1, 0)


@pytest.mark.parametrize("inline_bytes", [None, 0], ids=["inline", "uploaded file"])
def test_an_expired_batch_keeps_its_answered_part_and_fails_the_rest_batch_expired(server, inline_bytes):
    async def scenario(api: GeminiBatchApi):
        remote = await api.submit("job", MODEL, items(5))
        server.batches.expire(local(remote), answered=0.6)
        return await api.status(remote), await api.results(remote)

    status, results = run(server, scenario, inline_bytes)
    assert status == JobStatus("ended", "JOB_STATE_EXPIRED")
    assert sorted(results.samples) == ["k0", "k1", "k2"]
    assert {k: f.code for k, f in results.failures.items()} == {"k3": "batch_expired", "k4": "batch_expired"}


def test_failed_requests_are_failures_beside_the_answers(server):
    server.batches.script.fail = lambda key: key == "k1"

    async def scenario(api: GeminiBatchApi):
        remote = await api.submit("job", MODEL, items(3))
        server.batches.complete(local(remote))
        return await api.results(remote)

    results = run(server, scenario)
    assert sorted(results.samples) == ["k0", "k2"] and results.failures["k1"].code == "13"


def test_a_cancelled_batch_fails_its_unrun_requests_batch_cancelled(server):
    async def scenario(api: GeminiBatchApi):
        remote = await api.submit("job", MODEL, items(2))
        await api.cancel(remote)
        return await api.status(remote), await api.results(remote)

    status, results = run(server, scenario)
    assert status == JobStatus("ended", "JOB_STATE_CANCELLED")
    assert {f.code for f in results.failures.values()} == {"batch_cancelled"} and len(results.failures) == 2


def test_a_429_for_the_enqueued_token_limit_raises_enqueued_token_limit(server):
    server.batches.script.token_limit = 4  # each request's prompt is one token (the system instruction is not counted)

    async def scenario(api: GeminiBatchApi):
        await api.submit("first", MODEL, items(3))
        await api.submit("second", MODEL, items(3, start=3))

    with pytest.raises(EnqueuedTokenLimit, match="Enqueued token limit"):
        run(server, scenario)
    assert server.batches.creations == 1


def test_a_batch_failed_as_a_whole_ends_and_answers_no_key(server):
    # The SDK drops a batch's error: such a batch cannot be told from one refused for the token limit.
    server.batches.script.token_limit = 1
    server.batches.script.over_limit = "failed"

    async def scenario(api: GeminiBatchApi):
        remote = await api.submit("job", MODEL, items(3))
        return await api.status(remote), await api.results(remote)

    status, results = run(server, scenario)
    assert status == JobStatus("ended", "JOB_STATE_FAILED")
    assert (results.samples, results.failures, results.malformed) == ({}, {}, [])


def test_other_429s_are_transient_provider_errors(server):
    async def scenario(api: GeminiBatchApi):
        server.faults.append(Fault(status=429, message="Quota exceeded for requests per minute"))
        await api.submit("job", MODEL, items(1))

    with pytest.raises(TransientProviderError, match="429 RESOURCE_EXHAUSTED: Quota exceeded"):
        run(server, scenario)


def test_a_dropped_poll_is_sent_again_by_the_transport(server):
    async def scenario(api: GeminiBatchApi):
        remote = await api.submit("job", MODEL, items(1))
        server.faults.append(Fault(drop=True, request=r"GET /v1\w*/batches/"))
        sent = len(server.paths)
        return await api.status(remote), server.paths[sent:]

    status, polls = run(server, scenario)
    assert status.state == "running" and len(polls) == 2 and not server.faults


def test_a_poll_dropped_again_and_again_is_a_transient_provider_error_and_the_next_poll_succeeds(server):
    async def scenario(api: GeminiBatchApi):
        remote = await api.submit("job", MODEL, items(1))
        server.faults.extend([Fault(drop=True, request=r"GET /v1\w*/batches/") for _ in range(10)])
        with pytest.raises(TransientProviderError, match=r"ServerDisconnected|TransportError"):
            await api.status(remote)
        server.faults.clear()
        return await api.status(remote)

    assert run(server, scenario).state == "running"


def test_an_unknown_batch_is_a_permanent_provider_error_with_the_provider_message(server):
    async def scenario(api: GeminiBatchApi):
        await api.status("batches/nope")

    with pytest.raises(PermanentProviderError, match="Batch batches/nope not found"):
        run(server, scenario)


def test_find_adopts_the_batch_named_for_the_job_and_returns_none_for_an_unknown_one(server):
    async def scenario(api: GeminiBatchApi):
        wanted = await api.submit("job-a", MODEL, items(1))
        for n in range(150):  # more than one page of the listing, newer than the one wanted
            server.batches.create(MODEL, [("x", {})], {"displayName": f"other-{n}"}, 0)
        return wanted, await api.find("job-a"), await api.find("job-z")

    wanted, found, unknown = run(server, scenario)
    assert found == wanted and unknown is None


@pytest.mark.e2e  # a batch at the provider's cap: 50,000 requests built through the SDK's types (5 s)
def test_a_50000_request_submit_is_one_batch_from_an_uploaded_file(server):
    async def scenario(api: GeminiBatchApi):
        return await api.submit("big", MODEL, items(50_000))

    remote = run(server, scenario, inline_bytes=1024 * 1024)
    batch = server.batches.get(local(remote))
    assert server.batches.creations == 1 and len(batch.items) == 50_000 and batch.extra["file_source"]
