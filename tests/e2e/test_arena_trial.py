"""Seed 002's flow on your own questions and models, with no glue: a questions file alone, three
models and a judge behind a local OpenAI-compatible server that logs every request. More rounds
add new battles and the server is asked only for them; a second judge's experiment asks the
models nothing; the models keep the names the user gave them in every file."""

from __future__ import annotations

import csv
import io

import pytest
from kit import report_file, summary, user_project

from llmjury.testing import FakeOpenAI

pytestmark = pytest.mark.e2e

QUESTIONS = ["How do I reverse a list in Python?", "What is a race condition?", "Why is the sky blue?",
             "What does HTTP 429 mean?"]
#: The planted order: a bigger model writes a longer answer, and the judge prefers the longer one.
WORDS = {"tiny-1b": 3, "small-3b": 8, "large-7b": 20}


def serve(body: dict, index: int) -> str:
    model, prompt = body["model"], body["messages"][-1]["content"]
    if model.startswith("judge"):
        first, second = (part.split("\n\n", 1)[0] for part in prompt.split("'s Answer]\n")[1:3])
        better = len(first) >= len(second)
        return f"- Score of Model 1: {int(better)}\n- Score of Model 2: {int(not better)}\n- Brief Explanation: length"
    return " ".join([model] * WORDS[model])


def run(project: pytest.Pytester, server: FakeOpenAI, *options: str, judge: str = "judge",
        under_test: bool = False) -> tuple[int, int]:
    """One run of the user's arena; the judge's and the models' requests the server received during it."""
    before = len(server.requests)
    args = ["arena.data=data", "arena.dataset=mybench", "arena.models=tiny=openai:tiny-1b,openai:small-3b,"
            "openai:large-7b", "arena.battles_per_round=4", *options]
    switch = ["--llm-under-test", "contestant"] if under_test else []
    result = project.runpytest_inprocess(*[x for a in args for x in ("--llm-option", a)], "-m", "arena_mybench",
                                         "--llm-judge", f"openai:{judge}", *switch)
    assert result.ret == 0, result.stdout.str()
    asked = server.requests[before:]
    judged = sum(r["model"].startswith("judge") for r in asked)
    return judged, len(asked) - judged


def battles(project: pytest.Pytester, experiment: str = "default") -> list[dict[str, str]]:
    text = report_file(project, f"arena/results/{experiment}/battle_records.csv")
    return list(csv.DictReader(io.StringIO(text)))


def test_more_rounds_pay_only_for_new_battles_and_models_keep_their_names(pytester, monkeypatch):
    project = user_project(pytester, "test_arena.py")
    (project.path / "data" / "mybench").mkdir(parents=True)
    (project.path / "data" / "mybench" / "questions.csv").write_text(
        "question\n" + "\n".join(QUESTIONS) + "\n", encoding="utf-8")
    with FakeOpenAI(serve) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
        judged, answered = run(project, server, "arena.rounds=1")
        first = battles(project)
        asked_first = {(b["question"], m) for b in first for m in (b["model_a"], b["model_b"])}
        assert len(first) == 4 and (judged, answered) == (8, len(asked_first))  # both orders of 4 battles

        judged, answered = run(project, server, "arena.rounds=2")
        both = battles(project)
        keys = {(b["question"], b["model_a"], b["model_b"]) for b in both}
        assert len(both) == len(keys) == 8 and {(b["question"], b["model_a"], b["model_b"]) for b in first} <= keys
        asked_both = {(b["question"], m) for b in both for m in (b["model_a"], b["model_b"])}
        assert judged == 8  # the 4 new battles, both orders; the first round's judgements replayed
        assert answered == len(asked_both - asked_first)  # only answers no earlier run had asked for

        judged, answered = run(project, server, "arena.rounds=2", "arena.experiment=second-judge", judge="judge-2")
        assert (judged, answered) == (16, 0)  # a second judge: every battle judged, no model asked again

        fresh = len({(b["question"], m) for b in both for m in (b["model_a"], b["model_b"])})
        judged, answered = run(project, server, "arena.rounds=2", "arena.experiment=fresh", judge="judge-2",
                               under_test=True)
        assert answered == fresh  # the documented switch: every answer of this run asked afresh, once

    records = battles(project, "fresh")
    assert {m for b in records for m in (b["model_a"], b["model_b"])} == {"tiny", "small-3b", "large-7b"}
    assert all(b["judge_response_ab"] and b["judge_response_ba"] for b in records)
    assert all("openai:" not in report_file(project, f"arena/results/fresh/{name}.csv")
               for name in ("models", "battle_arrangement", "battle_records", "battle_outcomes", "elo_rating"))
    ratings = summary(project)["arena"]["rating"]
    assert ratings["large-7b"]["value"] > ratings["small-3b"]["value"] > ratings["tiny"]["value"]
