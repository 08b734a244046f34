"""The fake Gemini server's batch mode, driven through the real `google-genai` SDK: inline requests
answered inline, a file's requests answered in a result file, the state machine a test steps, expiry,
failed requests, cancel, list, the enqueued-token limit, a dropped poll and the counts."""

from __future__ import annotations

import json

import httpx2
import pytest
from google import genai
from google.genai import errors, types

from llmjury.batch.gemini_lines import decode_inline_all, file_line, inline_request, read_results
from llmjury.chat import chat
from llmjury.testing import FakeGemini, Fault


@pytest.fixture
def server():
    def reply(body, index):
        return "answer to " + body["contents"][-1]["parts"][0]["text"]

    with FakeGemini(reply) as fake:
        yield fake


@pytest.fixture
def client(server):
    return genai.Client(api_key="test", http_options=types.HttpOptions(base_url=server.origin))


def requests(count: int) -> list[types.InlinedRequest]:
    return [inline_request(chat(("system", "be brief"), ("user", f"q{i}"), temperature=0.0), 0, f"k{i}")
            for i in range(count)]


def submit(client, count: int, name: str = "llmjury-lane") -> str:
    job = client.batches.create(model="gemini-2.0-flash", src=requests(count), config={"display_name": name})
    assert job.name is not None
    return job.name


def test_inline_requests_move_through_the_states_and_are_answered_inline(server, client):
    name = submit(client, 3)
    seen = [client.batches.get(name=name).state]
    for _ in range(3):
        server.batches.step(name.removeprefix("batches/"))
        seen.append(client.batches.get(name=name).state)
    assert seen == [types.JobState.JOB_STATE_PENDING, types.JobState.JOB_STATE_RUNNING,
                    types.JobState.JOB_STATE_RUNNING, types.JobState.JOB_STATE_SUCCEEDED]
    job = client.batches.get(name=name)
    results = decode_inline_all(job.dest.inlined_responses)
    assert {key: s.text for key, s in results.samples.items()} == {
        "k0": "answer to q0", "k1": "answer to q1", "k2": "answer to q2"}
    assert (server.chat_calls, server.batches.creations) == (0, 1)


def test_an_inline_request_reaches_the_server_as_its_file_line_would(server, client):
    request = chat(("system", "be brief"), ("user", "q"), temperature=0.0, max_tokens=9, seed=3,
                   json_schema={"type": "object"}, logprobs=True, top_logprobs=2)
    client.batches.create(model="gemini-2.0-flash", src=[inline_request(request, 2, "k")])
    sent = server.requests[-1]["batch"]["inputConfig"]["requests"]["requests"][0]
    assert sent == {"request": file_line(request, 2, "k")["request"], "metadata": {"key": "k"}}


def test_a_batch_read_from_a_file_answers_in_a_result_file(server, client, tmp_path):
    lines = [file_line(chat(("user", f"q{i}")), 0, f"k{i}") for i in range(2)]
    source = server.files.put_file("in", "".join(json.dumps(line) + "\n" for line in lines).encode())
    job = client.batches.create(model="gemini-2.0-flash", src=source)
    server.batches.complete(job.name.removeprefix("batches/"))
    done = client.batches.get(name=job.name)
    assert done.state == types.JobState.JOB_STATE_SUCCEEDED and done.dest.file_name
    path = tmp_path / "results.jsonl"
    path.write_bytes(client.files.download(file=done.dest.file_name))
    assert {key: s.text for key, s in read_results(path).samples.items()} == {"k0": "answer to q0",
                                                                               "k1": "answer to q1"}


def test_an_input_file_uploaded_through_the_sdk_feeds_a_batch(server, client, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(file_line(chat(("user", f"q{i}")), 0, f"k{i}")) + "\n" for i in range(3)))
    uploaded = client.files.upload(file=path, config={"mime_type": "jsonl", "display_name": "lane-input"})
    assert uploaded.name and uploaded.size_bytes == path.stat().st_size
    job = client.batches.create(model="gemini-2.0-flash", src=uploaded.name)
    done = server.batches.complete(job.name.removeprefix("batches/"))
    assert [outcome.key for outcome in done.outcomes] == ["k0", "k1", "k2"]


def test_an_expired_batch_answers_its_first_part_and_fails_the_rest(server, client):
    name = submit(client, 5)
    server.batches.expire(name.removeprefix("batches/"), answered=0.6)
    job = client.batches.get(name=name)
    assert job.state == types.JobState.JOB_STATE_EXPIRED
    results = decode_inline_all(job.dest.inlined_responses)
    assert sorted(results.samples) == ["k0", "k1", "k2"] and sorted(results.failures) == ["k3", "k4"]


def test_failing_requests_come_back_as_inline_errors(server, client):
    server.batches.script.fail = lambda key: key == "k0"
    name = submit(client, 2)
    server.batches.complete(name.removeprefix("batches/"))
    results = decode_inline_all(client.batches.get(name=name).dest.inlined_responses)
    assert sorted(results.samples) == ["k1"] and results.failures["k0"].code == "13"


def test_a_batch_steps_on_by_itself_after_n_polls_and_a_held_one_does_not(server, client):
    server.batches.script.polls_per_step = 1
    moving, held = submit(client, 1), submit(client, 1)
    server.batches.hold(held.removeprefix("batches/"))
    assert [client.batches.get(name=moving).state.name for _ in range(3)] == [
        "JOB_STATE_RUNNING", "JOB_STATE_RUNNING", "JOB_STATE_SUCCEEDED"]
    assert client.batches.get(name=held).state == types.JobState.JOB_STATE_PENDING


def test_a_cancelled_batch_ends_cancelled(client):
    name = submit(client, 2)
    client.batches.cancel(name=name)
    assert client.batches.get(name=name).state == types.JobState.JOB_STATE_CANCELLED


def test_batches_are_listed_newest_first_page_by_page_with_their_display_names(client):
    names = [submit(client, 1, f"lane-{i}") for i in range(5)]
    listed = list(client.batches.list(config={"page_size": 2}))
    assert [job.name for job in listed] == names[::-1]
    assert [job.display_name for job in listed] == [f"lane-{i}" for i in range(4, -1, -1)]


def test_over_the_enqueued_token_limit_create_answers_429_resource_exhausted(server, client):
    server.batches.script.token_limit = 3
    submit(client, 2)
    with pytest.raises(errors.ClientError) as caught:
        submit(client, 2)
    assert caught.value.code == 429 and caught.value.status == "RESOURCE_EXHAUSTED"
    assert server.batches.creations == 1


def test_inline_requests_over_the_payload_cap_are_refused(server, client):
    server.files.max_inline_bytes = 100
    with pytest.raises(errors.ClientError, match="payload size exceeds"):
        submit(client, 3)


def test_a_dropped_poll_fails_once_and_the_next_poll_succeeds(server, client):
    name = submit(client, 1)
    server.faults.append(Fault(status=500, request=r"GET /v1\w*/batches/"))
    server.faults.append(Fault(drop=True, request=r"GET /v1\w*/batches/"))
    with pytest.raises(errors.ServerError):
        client.batches.get(name=name)
    with pytest.raises(httpx2.TransportError):
        client.batches.get(name=name)
    assert client.batches.get(name=name).state == types.JobState.JOB_STATE_PENDING


def test_synchronous_calls_are_counted_apart_from_batched_requests(server, client):
    client.models.generate_content(model="gemini-2.0-flash", contents="hi")
    server.batches.complete(submit(client, 2).removeprefix("batches/"))
    assert (server.chat_calls, server.batches.creations) == (1, 1)
