"""The file lane as a user runs it: a run queues its judge calls (`;batch=file`), `llmjury batch
export` writes them as OpenAI batch lines, an output file in the shape `vllm run-batch` writes is
imported, and the next run replays with no call; the commands' errors are one line each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from pydantic import TypeAdapter

from llmjury.cli import main
from llmjury.running.cache import SampleStore
from llmjury.store.location import StoreLocation
from llmjury.testing import FakeOpenAI

OWN_EVAL = """
import llmjury
from llmjury import Case


class Question(Case):
    question: str
    reference: str


CASES = [Question(id=f"q{i}", family="answers", question=f"What is {i} + 1?", reference=str(i + 1)) for i in range(4)]


@llmjury.parametrize(CASES)
async def test_answer(case, jury):
    graded = await jury.score(case.reference, rubric="5: correct; 1: wrong", question=case.question)
    assert (graded.score or 0) >= 3, graded.error or f"scored {graded.score}"
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    pytester.makepyfile(test_answers=OWN_EVAL)
    monkeypatch.chdir(pytester.path)
    return pytester


def run(project: pytest.Pytester, server: FakeOpenAI, *args: str) -> pytest.RunResult:
    judge = f"openai:local-model;api_key=x;base_url={server.base_url};batch=file"
    return project.runpytest_inprocess("-p", "no:deepeval", "-p", "no:cacheprovider", "--llm-judge", judge,
                                       "-o", "asyncio_default_fixture_loop_scope=function", *args)


def vllm_output(lines: list[dict], score: int) -> str:
    """The output file `vllm run-batch` writes for these input lines: a chat completion per custom_id."""
    out = []
    for i, line in enumerate(lines):
        body = {"id": f"cmpl-{i}", "object": "chat.completion", "created": 1, "model": line["body"]["model"],
                "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                             "message": {"role": "assistant",
                                         "content": json.dumps({"reasoning": "correct", "score": score})}}],
                "usage": {"prompt_tokens": 30, "completion_tokens": 6, "total_tokens": 36}}
        out.append(json.dumps({"id": f"vllm-{i}", "custom_id": line["custom_id"], "error": None,
                               "response": {"status_code": 200, "request_id": f"r{i}", "body": body}}))
    return "\n".join(out) + "\n"


def test_queued_exported_run_elsewhere_imported_then_replayed_with_no_call(project, capsys):
    with FakeOpenAI() as server:
        queued = run(project, server, "--llm-gate", "custom.score.test_answer.mean>=3")
        queued.assert_outcomes(skipped=4)
        queued.stdout.fnmatch_lines(["*llmjury batch: openai:local-model: 4 pending*",
                                     "*the gates are not applied to the exit status while requests are pending*"])
        assert queued.ret == 0 and server.chat_calls == 0

        assert main(["batch", "export", "--to", "requests.jsonl"]) == 0
        lines = [json.loads(text) for text in Path("requests.jsonl").read_text().splitlines()]
        assert len(lines) == 4
        check = TypeAdapter(CompletionCreateParamsNonStreaming)
        for line in lines:  # OpenAI's batch line: custom_id, method, url, and a chat completion request body
            assert (line["method"], line["url"]) == ("POST", "/v1/chat/completions")
            check.validate_python(line["body"])
            assert line["body"]["model"] == "local-model"

        assert main(["batch", "export", "--provider", "openai:other-model", "--to", "none.jsonl"]) == 4
        assert "queued for the file lane: openai:local-model" in capsys.readouterr().err
        stray = vllm_output([{"custom_id": "not-queued", "body": {"model": "local-model"}}], 4)
        Path("answers.jsonl").write_text(vllm_output(lines, 4) + stray + "{not json\n")
        assert main(["batch", "import", "answers.jsonl"]) == 1  # one line it cannot read: named, the rest kept
        said = capsys.readouterr().out
        assert "stored 4 of its 5 answer(s)" in said and "answers.jsonl, line 6" in said
        assert "custom_id not-queued answers no queued request" in said

        replayed = run(project, server)
        replayed.assert_outcomes(passed=4)
        assert server.chat_calls == 0 and server.batches.creations == 0


def test_the_commands_say_what_is_wrong_in_one_line(project, capsys):
    assert main(["batch", "status"]) == 0
    assert "nothing queued or in batches: no run store at" in capsys.readouterr().out
    assert main(["batch", "export", "--to", "x.jsonl"]) == 4
    assert capsys.readouterr().err.startswith("llmjury batch export: --cache .llmjury/cache.sqlite: no run store")
    SampleStore(StoreLocation("sqlite", Path(".llmjury/cache.sqlite"))).close()  # an empty store
    assert main(["batch", "status"]) == 0
    assert "nothing queued or in batches" in capsys.readouterr().out
    assert main(["batch", "import", "missing.jsonl"]) == 4
    err = capsys.readouterr().err
    assert err.strip() == "llmjury batch import: missing.jsonl: no such file" and "Traceback" not in err
