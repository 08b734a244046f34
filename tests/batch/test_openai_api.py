"""The OpenAI batch client through the real `openai` SDK against the fake: submit, poll, results,
expiry with partial output, failed lines, the enqueued-token limit, a dropped poll, adopting a batch
by its job tag, and a batch at the 50,000-line cap."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from llmjury.batch.api import BatchApi, EnqueuedTokenLimit, JobStatus, PendingItem, batch_api
from llmjury.batch.openai_api import OpenAIBatchApi
from llmjury.chat import chat
from llmjury.errors import ConfigError, PermanentProviderError, TransientProviderError
from llmjury.providers.base import ProviderSpec
from llmjury.testing import FakeOpenAI, Fault

MODEL = "gpt-4o-mini"


@pytest.fixture
def server():
    with FakeOpenAI(lambda body, i: f"answer to {body['messages'][-1]['content']}") as fake:
        yield fake


def items(count: int, start: int = 0) -> list[PendingItem]:
    return [PendingItem(f"k{i}", chat(("user", f"q{i}")), 0, 10) for i in range(start, start + count)]


def run(server: FakeOpenAI, scenario: Callable[[BatchApi], Awaitable[Any]]) -> Any:
    """Run `scenario` with a client of the fake, closed after it."""
    async def go() -> Any:
        api = batch_api(ProviderSpec.parse(f"openai:{MODEL};api_key=sk-test;base_url={server.base_url}"))
        try:
            return await scenario(api)
        finally:
            await api.aclose()
    return asyncio.run(go())


def test_a_submitted_batch_runs_ends_and_answers_each_key_with_no_synchronous_call(server):
    async def scenario(api: BatchApi):
        remote = await api.submit("job-1", MODEL, items(3))
        running = await api.status(remote)
        server.batches.complete(remote)
        return remote, running, await api.status(remote), await api.results(remote)

    remote, running, ended, results = run(server, scenario)
    assert isinstance(running, JobStatus) and running == JobStatus("running", "validating")
    assert ended == JobStatus("ended", "completed")
    assert {k: s.text for k, s in results.samples.items()} == {"k0": "answer to q0", "k1": "answer to q1",
                                                              "k2": "answer to q2"}
    assert not results.failures and not results.malformed
    batch = server.batches.get(remote)
    assert batch.metadata == {"llmjury_job": "job-1"} and batch.model == MODEL
    assert (server.batches.creations, server.chat_calls) == (1, 0)


def test_an_expired_batch_keeps_its_answered_part_and_fails_the_rest_batch_expired(server):
    async def scenario(api: BatchApi):
        remote = await api.submit("job", MODEL, items(5))
        server.batches.expire(remote, answered=0.6)
        return await api.status(remote), await api.results(remote)

    status, results = run(server, scenario)
    assert status == JobStatus("ended", "expired")
    assert sorted(results.samples) == ["k0", "k1", "k2"]
    assert {k: f.code for k, f in results.failures.items()} == {"k3": "batch_expired", "k4": "batch_expired"}


def test_failed_lines_are_failures_beside_the_answers(server):
    server.batches.script.fail = lambda key: key == "k1"

    async def scenario(api: BatchApi):
        remote = await api.submit("job", MODEL, items(3))
        server.batches.complete(remote)
        return await api.results(remote)

    results = run(server, scenario)
    assert sorted(results.samples) == ["k0", "k2"] and results.failures["k1"].code == "server_error"


def test_a_malformed_output_line_is_kept_apart_named_by_batch_file_and_line(server):
    async def scenario(api: BatchApi):
        remote = await api.submit("job", MODEL, items(2))
        server.batches.complete(remote)
        await api.status(remote)  # the fake writes its output file when the batch is first seen ended
        output = server.files.files[server.batches.get(remote).extra["output_file_id"]]
        output.data = b"not json\n" + output.data
        return remote, output.id, await api.results(remote)

    remote, file_id, results = run(server, scenario)
    assert sorted(results.samples) == ["k0", "k1"]
    assert [str(e) for e in results.malformed] == [f"{remote} file {file_id}, line 1: line: Invalid JSON: "
                                                   "expected ident at line 1 column 2"]


def test_results_of_a_running_batch_are_refused(server):
    async def scenario(api: BatchApi):
        await api.results(await api.submit("job", MODEL, items(1)))

    with pytest.raises(ValueError, match=r"batch_000001 has not ended \(status 'validating'\)"):
        run(server, scenario)


def test_a_cancelled_batch_fails_its_unrun_lines_batch_cancelled(server):
    async def scenario(api: BatchApi):
        remote = await api.submit("job", MODEL, items(2))
        await api.cancel(remote)
        return await api.status(remote), await api.results(remote)

    status, results = run(server, scenario)
    assert status == JobStatus("ended", "cancelled")
    assert {f.code for f in results.failures.values()} == {"batch_cancelled"} and len(results.failures) == 2


def test_a_429_for_the_enqueued_token_limit_raises_enqueued_token_limit(server):
    server.batches.script.token_limit = 4  # each line's prompt is one token

    async def scenario(api: BatchApi):
        await api.submit("first", MODEL, items(3))
        await api.submit("second", MODEL, items(3, start=3))

    with pytest.raises(EnqueuedTokenLimit, match="Enqueued token limit"):
        run(server, scenario)
    assert server.batches.creations == 1


def test_a_batch_failed_validating_for_the_token_limit_raises_it_too_and_is_not_adopted(server):
    server.batches.script.token_limit = 1
    server.batches.script.over_limit = "failed"

    async def scenario(api: BatchApi):
        with pytest.raises(EnqueuedTokenLimit, match="Enqueued token limit"):
            await api.submit("job", MODEL, items(3))
        return await api.find("job")

    assert run(server, scenario) is None and server.batches.creations == 1


def test_a_batch_failed_validating_fails_every_line_of_its_input_with_the_cause(server):
    async def scenario(api: BatchApi):
        remote = await api.submit("job", MODEL, items(2))
        batch = server.batches.get(remote)
        batch.errors.append(("invalid_request", "bad input", None))
        batch.state = "failed"
        return await api.results(remote)

    results = run(server, scenario)
    assert {k: (f.code, f.message) for k, f in results.failures.items()} == {
        "k0": ("invalid_request", "bad input"), "k1": ("invalid_request", "bad input")}


def test_a_dropped_poll_is_sent_again_once_by_the_transport(server):
    async def scenario(api: BatchApi):
        remote = await api.submit("job", MODEL, items(1))
        server.faults.append(Fault(drop=True, request=r"GET /v1/batches/"))
        sent = len(server.paths)
        return await api.status(remote), server.paths[sent:]

    status, polls = run(server, scenario)
    assert status.state == "running" and len(polls) == 2 and not server.faults


def test_a_poll_dropped_twice_is_a_transient_provider_error_and_the_next_poll_succeeds(server):
    async def scenario(api: BatchApi):
        remote = await api.submit("job", MODEL, items(1))
        server.faults.extend([Fault(drop=True, request=r"GET /v1/batches/") for _ in range(2)])
        with pytest.raises(TransientProviderError):
            await api.status(remote)
        return await api.status(remote)

    assert run(server, scenario).state == "running"


def test_other_http_errors_are_provider_errors_with_the_provider_message(server):
    async def scenario(api: BatchApi):
        await api.status("batch_nope")

    with pytest.raises(PermanentProviderError, match="No batch found with id 'batch_nope'"):
        run(server, scenario)


def test_find_adopts_the_batch_tagged_with_the_job_and_returns_none_for_an_unknown_one(server):
    async def scenario(api: BatchApi):
        wanted = await api.submit("job-a", MODEL, items(1))
        for n in range(150):  # more than one page of the listing, newer than the one wanted
            server.batches.create(MODEL, [("x", {})], {"llmjury_job": f"other-{n}"}, 0)
        return wanted, await api.find("job-a"), await api.find("job-z")

    wanted, found, unknown = run(server, scenario)
    assert found == wanted and unknown is None


@pytest.mark.e2e  # a batch at the provider's cap: a 50,000-line file uploaded (2.5 s)
def test_a_50000_line_submit_is_one_file_and_one_batch(server):
    async def scenario(api: BatchApi):
        return await api.submit("big", MODEL, items(50_000))

    remote = run(server, scenario)
    assert server.batches.creations == 1 and len(server.batches.get(remote).items) == 50_000
    assert len(server.files.files) == 1


def test_more_lines_than_the_cap_are_refused_before_any_upload(server):
    api = OpenAIBatchApi(ProviderSpec.parse(f"openai:{MODEL};base_url={server.base_url}"))
    api.max_lines = 2
    with pytest.raises(ValueError, match="batch 'job': 3 requests"):
        asyncio.run(api.submit("job", MODEL, items(3)))
    assert server.requests == []


def test_a_kind_with_no_batch_api_is_a_config_error():
    with pytest.raises(ConfigError, match="no batch API"):
        batch_api(ProviderSpec.parse("http:http://127.0.0.1:1/chat"))
