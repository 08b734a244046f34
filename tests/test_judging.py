"""Asking a judge k times: distinct samples, bounded re-asks, nothing lost."""

from __future__ import annotations

import itertools

from llmjury.chat import chat
from llmjury.errors import JudgeParseError
from llmjury.judgement.judging import ask_judge
from llmjury.judgement.jury import Jury
from llmjury.jurors import JurySpec
from llmjury.pricing import PriceTable
from llmjury.prompts import PromptLibrary
from llmjury.testing import FakeChoice, Fault


def parse_letter(text: str) -> str:
    if text not in {"A", "B"}:
        raise JudgeParseError("letter", text, "no A or B")
    return text


def make_jury(engine, server) -> Jury:
    engine.settings.roles["judge"] = JurySpec.parse(f"openai:judge;base_url={server.base_url}")
    return Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())


def scripted(*answers):
    stream = itertools.chain(answers, itertools.repeat("A"))
    return lambda body, index: next(stream)


def test_runs_of_one_request_are_distinct_samples(openai_server, make_engine):
    openai_server.reply = scripted("A", "B", "A")
    jury = make_jury(make_engine(), openai_server)
    runs = jury.engine.run(ask_judge(jury, "toy", [chat(("user", "q"))] * 3, parse_letter))
    assert [a.parsed for a in runs.answers] == ["A", "B", "A"]
    assert openai_server.requests[0]["n"] == 3


def test_unparseable_answer_is_asked_again_as_a_new_sample(openai_server, make_engine):
    openai_server.reply = scripted("A", "rambling", "B", "A")
    jury = make_jury(make_engine(), openai_server)
    runs = jury.engine.run(ask_judge(jury, "toy", [chat(("user", "q"))] * 3, parse_letter, retries=1))
    assert [a.parsed for a in runs.answers] == ["A", "A", "B"]
    assert runs.answers[1].attempts == 2
    assert [r.get("n", 1) for r in openai_server.requests] == [3, 1]


def test_still_unparseable_is_unscored_with_raw_text_kept(openai_server, make_engine):
    openai_server.reply = scripted("nope", "still nope")
    jury = make_jury(make_engine(), openai_server)
    runs = jury.engine.run(ask_judge(jury, "toy", [chat(("user", "q"))], parse_letter, retries=1))
    (answer,) = runs.answers
    assert not answer.scored and answer.raw == "still nope" and "unparseable" in answer.error


def test_failed_call_is_unscored_not_raised(openai_server, make_engine):
    # The fault is for request "q" alone: the two requests run concurrently, and a fault for
    # whichever arrives first made this test fail about half the time.
    openai_server.faults.append(Fault(status=401, message="bad key",
                                      matches=lambda body: body["messages"][-1]["content"] == "q"))
    openai_server.reply = scripted()
    jury = make_jury(make_engine(), openai_server)
    runs = jury.engine.run(ask_judge(jury, "toy", [chat(("user", "q")), chat(("user", "r"))], parse_letter))
    assert runs.answers[0].error.startswith("call failed") and "401" in runs.answers[0].error
    assert runs.answers[1].parsed == "A"


def test_an_empty_answer_is_asked_again_and_never_counted_as_text(openai_server, make_engine):
    answered: list[str] = []

    def reply(body: dict, index: int) -> str:
        answered.append("" if not answered else "B")  # the first answer is empty, every later one B
        return answered[-1]

    openai_server.reply = reply
    jury = make_jury(make_engine(), openai_server)
    runs = jury.engine.run(ask_judge(jury, "toy", [chat(("user", "q"))], parse_letter, retries=1))
    assert runs.answers[0].parsed == "B" and runs.answers[0].attempts == 2
    assert all(body.get("n", 1) == 1 for body in openai_server.requests)  # the empty sample is not asked twice


def test_an_answer_that_stays_empty_is_unscored_and_not_cached(openai_server, make_engine, tmp_path):
    openai_server.reply = lambda body, index: ""
    cache = tmp_path / "empty.sqlite"
    jury = make_jury(make_engine(cache=cache), openai_server)
    runs = jury.engine.run(ask_judge(jury, "toy", [chat(("user", "q"))], parse_letter, retries=1))
    assert runs.answers[0].error == "empty answer (finish reason stop)"
    calls = len(openai_server.requests)
    again = make_jury(make_engine(cache=cache, run_id="run-2"), openai_server)
    again.engine.run(ask_judge(again, "toy", [chat(("user", "q"))], parse_letter, retries=1))
    assert len(openai_server.requests) == 2 * calls  # nothing was served from the cache


def test_a_refusal_is_unscored_as_refused_and_not_cached(openai_server, make_engine, tmp_path):
    openai_server.reply = lambda body, index: FakeChoice(text="", refusal="I can't judge that")
    cache = tmp_path / "refusal.sqlite"
    jury = make_jury(make_engine(cache=cache), openai_server)
    runs = jury.engine.run(ask_judge(jury, "toy", [chat(("user", "q"))], parse_letter))
    assert runs.answers[0].error == "refused: I can't judge that" and runs.answers[0].raw == ""
    completion = jury.engine.run(jury.complete("judge", "toy", chat(("user", "q"))))
    assert completion.problem == "refused: I can't judge that"
    assert completion.cached == [False]


def test_a_re_asked_answer_keeps_the_first_text_and_is_not_counted_as_cached(openai_server, make_engine):
    openai_server.reply = scripted("rambling", "B")
    jury = make_jury(make_engine(), openai_server)
    runs = jury.engine.run(ask_judge(jury, "toy", [chat(("user", "q"))], parse_letter, retries=1))
    assert runs.answers[0].parsed == "B"
    assert runs.raw == ["rambling", "B"]
    assert runs.answers[0].cached is False
    assert jury.engine.ledger["openai:judge"].cached_samples == 0  # re-reading sample 0 is no cache hit
