"""The fake OpenAI server's Files and Batches endpoints, driven through the real `openai` SDK: the state
machine a test steps, expiry with partial output, failed lines, the caps, the enqueued-token limit,
a dropped poll, and the counts a lane's test asserts on."""

from __future__ import annotations

import json

import openai
import pytest

from llmjury.batch.openai_lines import input_line, read_output
from llmjury.batch.results import LineFailure
from llmjury.chat import chat
from llmjury.testing import FakeOpenAI, Fault


@pytest.fixture
def server():
    with FakeOpenAI(lambda body, i: f"answer to {body['messages'][-1]['content']}") as fake:
        yield fake


@pytest.fixture
def client(server):
    with openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0) as sdk:
        yield sdk


def jsonl(count: int, model: str = "gpt-4o-mini") -> bytes:
    lines = [input_line(chat(("user", f"q{i}")), model, 0, f"k{i}") for i in range(count)]
    return "".join(line.model_dump_json() + "\n" for line in lines).encode()


def submit(client, count: int, metadata: dict[str, str] | None = None) -> str:
    uploaded = client.files.create(file=("in.jsonl", jsonl(count)), purpose="batch")
    batch = client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                                  completion_window="24h", metadata=metadata or {"lane": "llmjury"})
    return batch.id


def test_an_uploaded_file_is_retrieved_and_read_back_as_sent(client):
    data = jsonl(3)
    uploaded = client.files.create(file=("in.jsonl", data), purpose="batch")
    assert (uploaded.purpose, uploaded.bytes, uploaded.filename) == ("batch", len(data), "in.jsonl")
    assert client.files.retrieve(uploaded.id).id == uploaded.id
    assert client.files.content(uploaded.id).content == data


def test_a_batch_moves_through_its_states_on_explicit_steps_and_answers_as_the_synchronous_route(
        server, client, tmp_path):
    batch_id = submit(client, 3)
    seen = [client.batches.retrieve(batch_id).status]
    for _ in range(3):
        server.batches.step(batch_id)
        seen.append(client.batches.retrieve(batch_id).status)
    assert seen == ["validating", "in_progress", "finalizing", "completed"]
    done = client.batches.retrieve(batch_id)
    assert (done.request_counts.total, done.request_counts.completed, done.request_counts.failed) == (3, 3, 0)
    assert done.error_file_id is None and done.completed_at is not None
    path = tmp_path / "out.jsonl"
    path.write_bytes(client.files.content(done.output_file_id).content)
    results = read_output(path)
    assert {key: sample.text for key, sample in results.samples.items()} == {
        "k0": "answer to q0", "k1": "answer to q1", "k2": "answer to q2"}
    assert server.chat_calls == 0 and server.batches.creations == 1


def test_a_batch_steps_on_by_itself_after_n_polls(server, client):
    server.batches.script.polls_per_step = 2
    batch_id = submit(client, 1)
    statuses = [client.batches.retrieve(batch_id).status for _ in range(6)]
    assert statuses == ["validating", "in_progress", "in_progress", "finalizing", "finalizing", "completed"]


def test_a_held_batch_stays_where_it_is_whatever_the_polls(server, client):
    server.batches.script.polls_per_step = 1
    batch_id = submit(client, 1)
    server.batches.step(batch_id)
    server.batches.hold(batch_id)
    assert {client.batches.retrieve(batch_id).status for _ in range(5)} == {"in_progress"}


def test_an_expired_batch_returns_its_answered_part_and_the_rest_as_batch_expired(server, client, tmp_path):
    batch_id = submit(client, 10)
    server.batches.expire(batch_id, answered=0.6)
    batch = client.batches.retrieve(batch_id)
    assert batch.status == "expired" and batch.expired_at is not None
    assert (batch.request_counts.completed, batch.request_counts.failed) == (6, 4)
    (tmp_path / "out.jsonl").write_bytes(client.files.content(batch.output_file_id).content)
    (tmp_path / "err.jsonl").write_bytes(client.files.content(batch.error_file_id).content)
    assert sorted(read_output(tmp_path / "out.jsonl").samples) == [f"k{i}" for i in range(6)]
    failures = read_output(tmp_path / "err.jsonl").failures
    assert sorted(failures) == [f"k{i}" for i in range(6, 10)]
    assert {f.code for f in failures.values()} == {"batch_expired"}


def test_failing_lines_land_in_the_error_file_with_their_http_answer(server, client, tmp_path):
    server.batches.script.fail = lambda key: key == "k1"
    batch_id = submit(client, 3)
    batch = server.batches.complete(batch_id)
    assert batch.state == "completed"
    listed = client.batches.retrieve(batch_id)
    (tmp_path / "err.jsonl").write_bytes(client.files.content(listed.error_file_id).content)
    line = json.loads((tmp_path / "err.jsonl").read_text())
    assert line["custom_id"] == "k1" and line["response"]["status_code"] == 500
    assert read_output(tmp_path / "err.jsonl").failures["k1"] == LineFailure(
        "k1", "server_error", "The server had an error processing this request.")


def test_a_cancelled_batch_is_cancelling_then_cancelled(server, client):
    batch_id = submit(client, 2)
    assert client.batches.cancel(batch_id).status == "cancelling"
    batch = client.batches.retrieve(batch_id)
    assert batch.status == "cancelled" and batch.request_counts.failed == 2


def test_batches_are_listed_newest_first_with_their_metadata_page_by_page(client):
    ids = [submit(client, 1, {"lane": "llmjury", "n": str(i)}) for i in range(5)]
    page = client.batches.list(limit=2)
    assert [b.id for b in page.data] == ids[::-1][:2] and page.has_more
    everything = list(client.batches.list(limit=2))  # the SDK follows `after` to the end
    assert [b.id for b in everything] == ids[::-1]
    assert [b.metadata["n"] for b in everything] == ["4", "3", "2", "1", "0"]


def test_over_the_enqueued_token_limit_create_answers_429_token_limit_exceeded(server, client):
    server.batches.script.token_limit = 5  # each line's prompt is one token
    submit(client, 4)
    uploaded = client.files.create(file=("in.jsonl", jsonl(2)), purpose="batch")
    with pytest.raises(openai.RateLimitError) as caught:
        client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h")
    assert caught.value.code == "token_limit_exceeded" and "Limit: 5 enqueued tokens" in caught.value.message
    assert server.batches.creations == 1


def test_the_token_limit_may_be_reported_as_a_failed_batch_instead(server, client):
    server.batches.script.token_limit = 1
    server.batches.script.over_limit = "failed"
    batch = client.batches.retrieve(submit(client, 2))
    assert batch.status == "failed" and batch.errors.data[0].code == "token_limit_exceeded"


def test_more_lines_than_the_cap_fail_validation_with_too_many_tasks(server, client):
    server.batches.max_lines = 3
    batch = client.batches.retrieve(submit(client, 4))
    assert batch.status == "failed" and [e.code for e in batch.errors.data] == ["too_many_tasks"]


def test_a_file_over_the_size_cap_is_refused_at_upload(server, client):
    server.files.max_file_bytes = 100
    with pytest.raises(openai.BadRequestError, match="File is too large"):
        client.files.create(file=("in.jsonl", jsonl(5)), purpose="batch")


def test_a_line_that_is_not_json_fails_validation_naming_its_line(client):
    uploaded = client.files.create(file=("in.jsonl", jsonl(1) + b"{not json\n"), purpose="batch")
    batch = client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                                  completion_window="24h")
    assert [(e.code, e.line) for e in client.batches.retrieve(batch.id).errors.data] == [("invalid_json_line", 2)]


def test_a_dropped_poll_fails_once_and_the_next_poll_succeeds(server, client):
    batch_id = submit(client, 1)
    server.faults.append(Fault(drop=True, request=r"GET /v1/batches/"))
    server.faults.append(Fault(status=500, request=r"GET /v1/batches/"))
    with pytest.raises(openai.APIConnectionError):
        client.batches.retrieve(batch_id)
    with pytest.raises(openai.InternalServerError):
        client.batches.retrieve(batch_id)
    assert client.batches.retrieve(batch_id).status == "validating"


def test_synchronous_calls_are_counted_apart_from_batch_lines(server, client):
    client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    server.batches.complete(submit(client, 2))
    assert (server.chat_calls, server.batches.creations) == (1, 1)


def test_an_unknown_batch_or_file_is_a_404(client):
    with pytest.raises(openai.NotFoundError):
        client.batches.retrieve("batch_missing")
    with pytest.raises(openai.NotFoundError):
        client.files.retrieve("file-missing")
