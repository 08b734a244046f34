"""An answer that is not the judge's whole word is never a verdict: one cut off by its token limit
(OpenAI-compatible `length`, Gemini's `MAX_TOKENS`) is asked once more with twice the room, and is
unscored as `truncated` if that is cut off too; one a content filter stopped is unscored as
`filtered`. Every unscored verdict carries its cause, and summary.json, summary.md and report.html
count the causes per family and per judge. Against the fake servers, through the real SDKs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmjury.chat import chat
from llmjury.errors import JudgeParseError
from llmjury.judgement.bound_jury import BoundJury
from llmjury.judgement.judging import ask_judge
from llmjury.judgement.jury import Jury
from llmjury.jurors import JurySpec
from llmjury.pricing import PriceTable
from llmjury.prompts import PromptLibrary
from llmjury.testing import FakeChoice, FakeGemini, FakeOpenAI

ROOM = 500  # core/compare.j2's max_tokens (prompts/generation.toml)


def prompt_of(body: dict) -> str:
    """The user turn, whether the server speaks OpenAI's protocol or Gemini's."""
    if "messages" in body:
        return body["messages"][-1]["content"]
    return body["contents"][-1]["parts"][0]["text"]


def room_of(body: dict) -> int:
    return body.get("max_tokens") or body["generationConfig"]["maxOutputTokens"]


def better(body: dict) -> str:
    """The slot Paris was shown in (jury.compare asks both orders)."""
    prompt = prompt_of(body)
    return "A" if prompt.index("Paris.") < prompt.index("Lyon.") else "B"


def worse(body: dict) -> str:
    return "B" if better(body) == "A" else "A"


def compare(make_engine, server, kind: str = "openai"):
    engine = make_engine(judge_output="text")
    base_url = server.origin if kind == "gemini" else server.base_url
    engine.settings.roles["judge"] = JurySpec.parse(f"{kind}:judge;base_url={base_url}")
    recorded = []
    jury = BoundJury(Jury(engine, engine.settings, PromptLibrary(), PriceTable.load()), recorded.append,
                     case_id="c1", name="compare", test="t")
    engine.run(jury.compare("Lyon.", "Paris.", criteria="correct", question="Capital of France?", runs=1))
    (verdict,) = recorded
    return verdict


def cut_then_whole(body: dict, index: int) -> FakeChoice:
    """An interim pick of the wrong answer, cut off at the first room; the whole answer with twice it."""
    if room_of(body) == ROOM:
        return FakeChoice(f"At first sight:\n### {worse(body)}\nBut on reflection", finish_reason="length")
    return FakeChoice(f"Paris is the capital.\n### {better(body)}")


def always_cut(body: dict, index: int) -> FakeChoice:
    return FakeChoice(f"### {worse(body)}\nOn reflection", finish_reason="length")


@pytest.mark.parametrize("kind", ["openai", "gemini"])
def test_a_cut_off_answer_is_asked_once_more_with_twice_the_room_and_that_answer_is_read(make_engine, kind):
    server_type = FakeGemini if kind == "gemini" else FakeOpenAI
    with server_type(cut_then_whole) as server:
        verdict = compare(make_engine, server, kind)
    assert sorted(room_of(body) for body in server.requests) == [ROOM, ROOM, 2 * ROOM, 2 * ROOM]
    assert verdict.valid and verdict.result.winner == "b"  # never the interim pick the cut answers held
    assert [run.attempts for run in verdict.result.runs] == [2, 2]
    assert sum("But on reflection" in text for text in verdict.raw) == 2  # the cut answers are kept


@pytest.mark.parametrize("kind", ["openai", "gemini"])
def test_an_answer_cut_off_again_is_unscored_truncated_and_asked_no_more(make_engine, kind):
    server_type = FakeGemini if kind == "gemini" else FakeOpenAI
    with server_type(always_cut) as server:
        verdict = compare(make_engine, server, kind)
    assert len(server.requests) == 4  # each order: once, once with twice the room; no repair call
    assert not verdict.valid and verdict.result is None
    # The message names the limit each answer was cut at (before: the roomier limit, twice).
    assert f"max_tokens {ROOM}, finish reason" in verdict.error
    assert f"asked again with max_tokens {2 * ROOM}, it was cut off again" in verdict.error
    assert verdict.cause == "truncated" and verdict.error.startswith("truncated")
    assert f"max_tokens {2 * ROOM}" in verdict.error


def test_gemini_sends_max_tokens_as_its_finish_reason(make_engine):
    with FakeGemini(lambda body, i: FakeChoice(f"### {better(body)}", finish_reason="MAX_TOKENS")) as server:
        verdict = compare(make_engine, server, "gemini")
    assert verdict.cause == "truncated" and "finish reason MAX_TOKENS" in verdict.error


@pytest.mark.parametrize(("kind", "reason"), [("openai", "content_filter"), ("gemini", "SAFETY"),
                                              ("gemini", "PROHIBITED_CONTENT")])
def test_an_answer_a_content_filter_stopped_is_unscored_filtered_and_not_asked_again(make_engine, kind, reason):
    server_type = FakeGemini if kind == "gemini" else FakeOpenAI
    with server_type(lambda body, i: FakeChoice(f"### {better(body)}", finish_reason=reason)) as server:
        verdict = compare(make_engine, server, kind)
    assert len(server.requests) == 2
    assert not verdict.valid and verdict.cause == "filtered" and verdict.error.startswith("filtered")


def test_an_unreadable_answer_carries_the_readers_cause(make_engine):
    with FakeOpenAI(lambda body, i: "I cannot decide.") as server:
        verdict = compare(make_engine, server)
    assert not verdict.valid and verdict.cause in ("no_decision", "ambiguous")
    assert verdict.repair_failed == 2  # both orders were asked for the decision alone, in vain


def parse_letter(text: str) -> str:
    if text.strip() not in {"A", "B"}:
        raise JudgeParseError("letter", text, "no A or B", kind="no_decision")
    return text.strip()


def test_only_the_cut_runs_are_asked_again_each_a_sample_of_the_roomier_request(openai_server, make_engine):
    def reply(body: dict, index: int) -> FakeChoice:
        if body.get("max_tokens") == 8:
            return FakeChoice("B")
        return FakeChoice("A", finish_reason="length") if index == 1 else FakeChoice("A")

    openai_server.reply = reply
    engine = make_engine()
    engine.settings.roles["judge"] = JurySpec.parse(f"openai:judge;base_url={openai_server.base_url}")
    jury = Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())
    runs = engine.run(ask_judge(jury, "toy", [chat(("user", "q"), max_tokens=4, temperature=1.0)] * 3, parse_letter))
    assert [a.parsed for a in runs.answers] == ["A", "B", "A"]
    assert [(r["max_tokens"], r.get("n", 1)) for r in openai_server.requests] == [(4, 3), (8, 1)]
    assert runs.answers[1].earlier == ("A",) and runs.answers[1].attempts == 2


def test_a_logprob_scored_answer_cut_off_is_asked_once_more_with_twice_the_room(make_engine):
    def reply(body: dict, index: int) -> FakeChoice:
        if body["max_tokens"] == 30:  # core/geval.j2's room
            return FakeChoice("2", logprobs=[("2", -0.1, [("2", -0.1), ("5", -3.0)])], finish_reason="length")
        return FakeChoice("4", logprobs=[("4", 0.0, [("4", 0.0)])])

    engine = make_engine()
    with FakeOpenAI(reply) as server:
        engine.settings.roles["judge"] = JurySpec.parse(f"openai:judge;base_url={server.base_url}")
        recorded = []
        jury = BoundJury(Jury(engine, engine.settings, PromptLibrary(), PriceTable.load()), recorded.append,
                         case_id="c1", name="geval", test="t")
        engine.run(jury.geval("Paris.", criterion="Correctness", steps=["Check the capital."]))
        server.reply = lambda body, index: FakeChoice("2", logprobs=[("2", 0.0, [("2", 0.0)])], finish_reason="length")
        engine.run(jury.geval("Lyon.", criterion="Correctness", steps=["Check the capital."]))
    whole, cut = recorded
    assert whole.valid and whole.result.score == 4.0 and whole.raw == ["2", "4"]
    assert not cut.valid and cut.cause == "truncated"
    assert [body["max_tokens"] for body in server.requests] == [30, 60, 30, 60]


PROJECT = """
import pytest


@pytest.mark.parametrize("question", ["whole", "cut", "filtered"])
def test_judged(jury, question):
    jury.engine.run(jury.compare("yes", "no", criteria="correct", question=question, runs=1, name=question))
"""


def outcome_by_question(body: dict, index: int) -> FakeChoice:
    prompt = body["messages"][-1]["content"]
    if "filtered" in prompt:
        return FakeChoice("", finish_reason="content_filter")
    if "cut" in prompt:
        return FakeChoice("### A\nand", finish_reason="length")
    return FakeChoice("Plainly.\n### A")


@pytest.mark.e2e  # two xdist workers
def test_summary_counts_unscored_verdicts_by_cause_per_family_and_per_judge(pytester: pytest.Pytester):
    pytester.makeini("[pytest]\naddopts = -p no:deepeval -p no:asyncio -p no:benchmark\n")
    pytester.makepyfile(test_judged=PROJECT)
    with FakeOpenAI(outcome_by_question) as server:
        result = pytester.runpytest_inprocess("-n", "2", "--llm-judge", f"openai:judge;base_url={server.base_url}")
    result.assert_outcomes(passed=3)
    run = Path(pytester.path) / "reports" / "latest"
    section = json.loads((run / "summary.json").read_text())["custom"]
    assert section["unscored_causes"] == {"truncated": 1, "filtered": 1}
    (judge, counts), = section["repairs"].items()
    assert counts["unscored"] == {"truncated": 1, "filtered": 1} and counts["direct"] == 1
    assert counts["read"] == {"text": 2}
    assert f"| `{judge}` | 3 | 1 | 0 | 0 | 2 (truncated: 1, filtered: 1) | 0/2 |" in (run / "summary.md").read_text()
    assert "<td>2 (truncated: 1, filtered: 1)</td>" in (run / "report.html").read_text()
    result.stdout.fnmatch_lines(["custom: 3 cases, 3 verdicts, 2 unscored (truncated: 1, filtered: 1)"])


@pytest.mark.parametrize(("cause", "error", "counted"), [
    ("ambiguous", "unparseable: two decisions", "ambiguous"),  # the reader's own cause wins
    ("failed", "call failed: openai:j: budget: the run's budget ($1) is spent; openai:j not called", "budget"),
    (None, "unparseable: the final line 'x'", "no_decision"),  # recorded before verdicts carried a cause
    (None, "call failed: HTTP 500", "failed"),
    (None, "refused: content_filter", "filtered"),
    (None, "refused: I won't", "refused"),
    (None, "empty answer (finish reason stop)", "empty"),
    (None, "a family's own words", "a family's own words"),  # never hidden under another cause
])
def test_each_unscored_verdict_is_counted_under_one_cause(cause, error, counted):
    from llmjury.results.causes import counted_cause

    assert counted_cause(cause, error) == counted


def test_a_prompt_a_gemini_filter_blocked_is_unscored_filtered_not_failed(make_engine):
    from llmjury.testing import Fault

    blocked = json.dumps({"promptFeedback": {"blockReason": "SAFETY"}}).encode()
    with FakeGemini(lambda body, i: f"### {better(body)}") as server:
        server.faults += [Fault(status=200, body=blocked), Fault(status=200, body=blocked)]  # both orders
        verdict = compare(make_engine, server, "gemini")
    assert not verdict.valid and verdict.cause == "filtered" and "prompt blocked" in verdict.error
