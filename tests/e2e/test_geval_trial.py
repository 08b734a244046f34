"""Seed 004's flow on your own rated items and an OpenAI-compatible server that returns no
logprobs, with no glue: forcing logprobs stops the run at the first answer, naming the server and
the `auto` setting as the cause;
with `auto` the judge samples, and the human ceiling beside it rests on the items it scored."""

from __future__ import annotations

import json

import pytest
from kit import report_file, summary, user_project

from llmjury.testing import FakeOpenAI
from llmjury.testing.fake_openai import ServerBehaviour

pytestmark = pytest.mark.e2e


def rated_items(count: int) -> str:
    rows = [{"id": f"c{i}", "context": f"A: what should I cook tonight?\nB: something with {i} eggs?",
             "response": "an omelette" if i % 2 else "no idea", "system": f"bot{i % 3}",
             "annotator": who, "overall": 1 + (i + k) % 5} for i in range(count) for k, who in enumerate("xyz")]
    return "".join(json.dumps(row) + "\n" for row in rows)


def serve(body: dict, index: int) -> str:
    return "Read it. Check it." if body["messages"][-1]["content"].startswith("Evaluate") else "4"


def run(project: pytest.Pytester, server: FakeOpenAI, *args: str) -> pytest.RunResult:
    return project.runpytest_inprocess("--llm-option", "geval.items=support_rated.jsonl", "--llm-option",
                                       "geval.deepeval_items=0", "--llm-option", "geval.n=3",
                                       "--llm-judge", f"openai:local-7b;base_url={server.base_url}", *args)


def test_a_server_without_logprobs_is_named_and_the_ceiling_sits_on_the_judged_items(pytester, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    project = user_project(pytester, "test_geval.py")
    (project.path / "support_rated.jsonl").write_text(rated_items(12), encoding="utf-8")
    with FakeOpenAI(serve, behaviour=ServerBehaviour(logprobs=False)) as server:
        forced = run(project, server, "--llm-option", "geval.scoring=logprobs", "-k", "c0- or c1-")
        forced.stdout.fnmatch_lines(["*no logprobs: openai:local-7b at http://127.0.0.1:*/v1 answered without "
                                     "logprobs, and geval.scoring=logprobs forces them*geval.scoring=auto*"])
        assert forced.ret == pytest.ExitCode.INTERRUPTED and "unparseable" not in forced.stdout.str()
        forced.stdout.fnmatch_lines(["*Interrupted: llmjury.errors.NoLogprobsError: no logprobs: *"])
        sampled = run(project, server, "-k", "not (c1- or c2- or c3-)")
    assert sampled.ret == 0, sampled.stdout.str()
    section = summary(project)["geval"]
    ceiling = section["human_ceiling"]["support_rated/response/overall"]
    assert (ceiling["items"], ceiling["judged_items"]) == (9, 9)  # 12 rated, 9 selected and scored
    assert section["judge_validity"]["openai:local-7b/support_rated/response/overall"]["human_ceiling_items"] == 9
    assert "| 9 (the judge's) |" in report_file(project, "summary.md")
