"""Judge calls a test awaits (`jury.compare`, `jury.score`, `jury.geval`, `jury.ask`): what they
decide, what they record, how they aggregate, and how the plugin plans the tests that await them."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from llmjury.custom import FAMILY as CUSTOM_FAMILY
from llmjury.custom import mean_figures
from llmjury.judgement.bound_jury import BoundJury
from llmjury.judgement.judges import PairwiseResult, pairwise
from llmjury.judgement.jury import Jury
from llmjury.judgement.verdicts import Verdict
from llmjury.pricing import PriceTable
from llmjury.prompts import PromptLibrary
from llmjury.running.engine import Engine
from llmjury.testing import FakeChoice, FakeOpenAI
from llmjury.testing.fake_openai import ServerBehaviour


@pytest.fixture
def bound(make_engine: Callable[..., Engine], openai_server: FakeOpenAI) -> Callable[..., tuple[BoundJury, list]]:
    """A test's jury whose judge is the fake OpenAI server; returns it with the verdicts it records."""

    def make(judge: str | None = None, **settings: Any) -> tuple[BoundJury, list[Verdict]]:
        engine = make_engine(judge=judge or f"openai:m;base_url={openai_server.base_url}", **settings)
        recorded: list[Verdict] = []
        jury = Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())
        return BoundJury(jury, recorded.append, case_id="c1", name="test_x", test="t.py::test_x"), recorded

    return make


def last_user(body: dict[str, Any]) -> str:
    return body["messages"][-1]["content"]


def shown_first(body: dict[str, Any]) -> str:
    return last_user(body).split("[Response A]\n")[1].split("\n")[0]


def test_compare_asks_k_runs_in_each_order_and_names_the_better_response(bound, openai_server):
    openai_server.reply = lambda body, i: "### A" if shown_first(body) == "good" else "### B"
    jury, recorded = bound(judge_runs=2)
    verdict = jury.engine.run(jury.compare("good", "bad", criteria="better"))
    assert (verdict.winner, verdict.consistent, verdict.scored) == ("a", True, True)
    firsts = sorted(shown_first(body) for body in openai_server.requests for _ in range(body.get("n", 1)))
    assert firsts == ["bad", "bad", "good", "good"]  # two runs with each response shown first
    (record,) = recorded
    assert (record.family, record.kind, record.case_id) == ("custom", "compare", "c1")
    assert isinstance(record.result, PairwiseResult) and record.result.vote_counts == {"a": 4}
    assert record.attributes["name"] == "test_x" and record.attributes["criteria"] == "better"


def test_compare_with_a_judge_that_always_picks_the_first_slot_is_a_tie_and_inconsistent(bound, openai_server):
    openai_server.reply = lambda body, i: "### A"
    jury, _ = bound(judge_runs=1)
    verdict = jury.engine.run(jury.compare("one", "two", criteria="better"))
    assert (verdict.winner, verdict.consistent) == ("tie", False)
    assert verdict.result.confidence == "no_consensus"
    assert repr(verdict) == "Comparison(winner='tie', consistent=False, votes={'a': 1, 'b': 1})"


def test_unparseable_comparison_is_an_unscored_verdict_not_an_exception(bound, openai_server):
    openai_server.reply = lambda body, i: "I cannot decide."
    jury, recorded = bound(judge_runs=1)
    verdict = jury.engine.run(jury.compare("one", "two", criteria="better"))
    assert not verdict.scored and verdict.winner is None
    assert repr(verdict).startswith("Comparison(unscored: unparseable: no judge run counted")
    assert verdict.error.startswith("unparseable: no judge run counted")
    assert recorded[0].valid is False and set(recorded[0].raw) == {"I cannot decide."}  # what the judge said


def test_a_comparison_whose_every_run_of_one_order_failed_is_unscored_naming_that_order(bound, openai_server):
    """A decision read from one order alone is not the position-balanced one asked for: it was kept as
    a valid, unanimous verdict with no error when every run of the other order failed."""
    from llmjury.testing.fake_server import Fault

    openai_server.reply = lambda body, i: "### A" if shown_first(body) == "good" else "### B"
    openai_server.faults.append(Fault(status=400, message="context length exceeded",
                                      matches=lambda body: shown_first(body) == "bad"))
    jury, recorded = bound(judge_runs=1)
    verdict = jury.engine.run(jury.compare("good", "bad", criteria="better"))
    assert not verdict.scored and verdict.winner is None
    assert verdict.error.startswith("call failed: no judge run of order ba counted (call failed: openai:m: HTTP 400")
    assert recorded[0].valid is False


def test_failed_judge_call_is_an_unscored_verdict(bound, openai_server):
    openai_server.reply = lambda body, i: FakeChoice(text="", refusal="no")
    jury, recorded = bound(judge_runs=1)
    verdict = jury.engine.run(jury.score("text", rubric="r"))
    assert not verdict.scored and verdict.error.startswith("refused")
    assert verdict.score is None and recorded[0].kind == "score"


def test_assert_scored_names_each_unscored_judgement_and_its_cause(bound, openai_server):
    from llmjury.assertions import assert_scored

    openai_server.reply = lambda body, i: "no decision"
    jury, _ = bound(judge_runs=1)
    verdict = jury.engine.run(jury.compare("one", "two", criteria="better"))
    with pytest.raises(AssertionError, match=r"1 unscored verdict\(s\): c1 \(compare\): unparseable"):
        assert_scored(verdict)


class Graded(BaseModel):
    verdict: str
    score: int


def test_score_sends_the_output_schema_and_validates_the_answer(bound, openai_server):
    answers = iter(['{"verdict": "ok"}', '{"verdict": "ok", "score": 4}'])
    openai_server.reply = lambda body, i: next(answers)
    jury, recorded = bound()
    graded = jury.engine.run(jury.score("Paris", rubric="5 correct, 1 wrong", question="Capital?", output=Graded))
    assert graded.score == 4.0 and graded.output == Graded(verdict="ok", score=4)
    assert graded.result.attempts == 2  # the answer without a score was asked again
    schema = openai_server.requests[0]["response_format"]["json_schema"]
    assert schema["name"] == "Graded" and set(schema["schema"]["required"]) == {"verdict", "score"}
    assert recorded[0].result.output == {"verdict": "ok", "score": 4}


def test_each_judge_call_records_the_texts_it_judged_for_the_report_s_case_view(bound, openai_server):
    openai_server.reply = lambda body, i: ('{"score": 4}' if "[Response]" in last_user(body)
                                           else "### A" if "[Response A]" in last_user(body) else "4")
    jury, recorded = bound(judge_runs=1)
    jury.engine.run(jury.compare("good", "bad", criteria="better", question="Which?"))
    jury.engine.run(jury.score("Paris", rubric="r", question="Capital?"))
    jury.engine.run(jury.geval("a reply", criterion="Coherence", steps="Read.", context="a chat"))
    assert [{k: v for k, v in r.attributes.items() if k not in ("name", "test")} for r in recorded] == [
        {"criteria": "better", "question": "Which?", "a": "good", "b": "bad"},
        {"rubric": "r", "question": "Capital?", "answer": "Paris"},
        {"criterion": "Coherence", "context": "a chat", "text": "a reply"}]


def test_a_boolean_score_is_not_read_as_a_number(bound, openai_server):
    """pydantic's lax mode reads JSON true as 1: a judge answering `"score": true` was scored 1."""
    openai_server.reply = lambda body, i: '{"reasoning": "ok", "score": true}'
    jury, _ = bound(judge_runs=1, parse_retries=0)
    verdict = jury.engine.run(jury.score("text", rubric="r"))
    assert not verdict.scored and "score: a boolean is not a number" in verdict.error


def test_score_outside_the_scale_is_unscored(bound, openai_server):
    openai_server.reply = lambda body, i: '{"reasoning": "x", "score": 9}'
    jury, _ = bound()
    graded = jury.engine.run(jury.score("Paris", rubric="r", scale=(1, 5)))
    assert not graded.scored and "score 9 is outside 1-5" in graded.error


def test_score_output_without_a_score_field_is_a_programming_error(bound):
    class NoScore(BaseModel):
        text: str

    jury, _ = bound()
    with pytest.raises(TypeError, match="needs a `score` field"):
        jury.engine.run(jury.score("x", rubric="r", output=NoScore))


def test_geval_weights_score_tokens_by_their_probabilities(bound, openai_server):
    import math

    top = [("4", math.log(0.5)), ("2", math.log(0.5))]
    openai_server.reply = lambda body, i: FakeChoice(text="4", logprobs=[("4", math.log(0.5), top)])
    jury, recorded = bound()
    rated = jury.engine.run(jury.geval("text", criterion="Coherence", steps=["Read.", "Rate."]))
    assert rated.score == pytest.approx(3.0) and rated.result.method == "logprobs"
    assert "1. Read.\n2. Rate." in last_user(openai_server.requests[0])
    assert recorded[0].judge.scoring == "logprobs"


def test_geval_samples_when_the_provider_gives_no_logprobs(bound, openai_server):
    openai_server.behaviour = ServerBehaviour(logprobs=False)  # GPT4All ignores `logprobs`
    openai_server.reply = lambda body, i: "3" if i % 2 else "5"
    jury, _ = bound()
    rated = jury.engine.run(jury.geval("text", criterion="Coherence", steps="Read, rate.", n=4))
    assert rated.result.method == "sampling" and rated.score == pytest.approx(4.0)
    assert rated.result.samples == 4


def test_geval_with_logprobs_but_no_score_is_unscored_not_twenty_samples(bound, openai_server):
    openai_server.reply = lambda body, i: "The response is natural and engaging."
    jury, _ = bound()
    rated = jury.engine.run(jury.geval("text", criterion="Naturalness", steps="Read, rate.", n=20))
    assert not rated.scored
    assert rated.error == "unparseable: no score line (the score alone, or after the form's label)"
    assert len(openai_server.requests) == 1  # no fallback to n samples: the provider does give logprobs


def test_ask_returns_a_roles_plain_answer(bound, openai_server):
    openai_server.reply = lambda body, i: f"  answer to {last_user(body)}  "
    jury, recorded = bound(roles={"candidate": f"openai:c;base_url={openai_server.base_url}"})
    assert jury.engine.run(jury.ask("candidate", "2+2?", system="Be brief.")) == "answer to 2+2?"
    assert openai_server.requests[0]["messages"][0] == {"role": "system", "content": "Be brief."}
    assert recorded == []  # a plain answer is not a verdict


def test_pairwise_takes_a_familys_templates_parser_and_labels(bound, openai_server, tmp_path):
    """The arena's both-order judging: its own prompts, labels, names and a tie that is not swapped."""
    (tmp_path / "fam").mkdir()
    (tmp_path / "fam" / "pair.j2").write_text("Q: {{ question }}\n1: {{ answer_a }}\n2: {{ answer_b }}")
    (tmp_path / "fam" / "system.j2").write_text("You judge answers.")
    openai_server.reply = lambda body, i: "[[A]]" if "1: x" in last_user(body) else "[[C]]"
    jury, _ = bound()
    jury.prompts = PromptLibrary([tmp_path])

    def parse(text: str) -> str:
        return {"[[A]]": "model_a", "[[B]]": "model_b", "[[C]]": "tie"}[text]

    judged = jury.engine.run(pairwise(
        jury, "arena", "x", "y", template="fam/pair.j2", system="fam/system.j2", orders=["ab", "ba"],
        slots=("answer_a", "answer_b"), variables={"question": "q?"}, parse=parse,
        labels={"model_a": 0, "model_b": 1, "tie": "tie"}, names=("model_a", "model_b")))
    assert [(r.order, r.winner) for r in judged.runs] == [("ab", "model_a"), ("ba", "tie")]
    assert judged.majority.winner == "tie" and judged.consistent is False
    assert openai_server.requests[0]["messages"][0] == {"role": "system", "content": "You judge answers."}


def test_a_jury_of_two_decides_by_the_jurors_votes(bound, openai_server):
    openai_server.reply = lambda body, i: "### A" if shown_first(body) == "good" else "### B"
    spec = f"openai:m;base_url={openai_server.base_url}"
    jury, _ = bound(judge=f"{spec}*2")
    verdict = jury.engine.run(jury.compare("good", "bad", criteria="better"))
    assert verdict.winner == "a" and [v.winner for v in verdict.result.jurors] == ["a", "a"]
    assert len(verdict.result.runs) == 4  # each juror judges both orders once


def verdict(kind: str, result: dict[str, Any] | None, name: str = "t") -> dict[str, Any]:
    return {"case_id": f"c{id(result)}", "family": "custom", "kind": kind, "judge": {"provider": "p"},
            "result": result, "valid": result is not None, "attributes": {"name": name}}


def test_custom_family_aggregates_win_rate_with_wilson_and_mean_with_t_interval():
    def pair(winner: str, consistent: bool) -> dict[str, Any]:
        return {"winner": winner, "confidence": "unanimous", "counted_runs": 2, "vote_counts": {winner: 2},
                "consistent": consistent, "runs": []}

    records = [verdict("compare", pair(w, c)) for w, c in
               [("a", True), ("a", True), ("a", False), ("b", True), ("tie", True)]] + [verdict("compare", None)]
    records += [verdict("score", {"score": s, "low": 1, "high": 5, "output": {}}, "graded") for s in (2, 3, 4)]
    section = CUSTOM_FAMILY.aggregate([CUSTOM_FAMILY.typed(r) for r in records])
    win = section.compare["t"].win_rate
    assert (win.value, win.n) == (0.6, 5) and win.low == pytest.approx(0.2307, abs=1e-3)
    assert section.compare["t"].tie_rate.value == 0.2
    assert section.compare["t"].swap_consistency.value == 0.8
    mean = section.score["graded"].mean  # three scores: too few to state an interval from
    assert (mean.value, mean.n, mean.low, mean.high) == (3.0, 3, None, None) and "too few" in mean.method
    records += [verdict("score", {"score": s, "low": 1, "high": 5, "output": {}}, "graded") for s in (2, 4, 3)]
    mean = CUSTOM_FAMILY.aggregate([CUSTOM_FAMILY.typed(r) for r in records]).score["graded"].mean
    assert (mean.value, mean.n, mean.method) == (3.0, 6, "mean, t interval")
    assert mean.low == pytest.approx(3 - 2.5706 * (0.8 / 6) ** 0.5, abs=1e-3)


def test_mean_of_one_score_has_no_interval():
    assert mean_figures([4.0]).mean.model_dump() == {"value": 4.0, "low": None, "high": None, "n": 1,
                                                     "method": "mean; too few items (n=1) to tell"}


def test_a_mean_interval_stays_inside_the_rubric_scale():
    mean = mean_figures([1, 1, 1, 1, 5], scale=(1, 5)).mean
    assert mean.low == 1 and mean.high < 5 and mean.method == "mean, t interval clipped to the scale [1, 5]"
    assert mean_figures([3, 3, 3, 3, 3], scale=(1, 5)).mean.low is None  # no spread: no zero-width interval


# -- the plugin: planning jury tests ---------------------------------------------------------------
INI = """
[pytest]
addopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider --strict-markers
"""

JURY_TESTS = """
import pytest
import llmjury
from llmjury import Case


class Pair(Case):
    ours: str
    theirs: str


CASES = [Pair(id=f"pair-{i:02d}", family="pairs", ours=f"good {i}", theirs=f"bad {i}") for i in range(12)]


@llmjury.parametrize(CASES)
async def test_ours_wins(case, jury):
    verdict = await jury.compare(case.ours, case.theirs, criteria="better", runs=1)
    assert verdict.winner == "a", verdict.error
"""


def summary(pytester: pytest.Pytester) -> dict[str, Any]:
    return json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())


def prefers_good(body: dict[str, Any], index: int) -> str:
    return "### A" if shown_first(body).startswith("good") else "### B"


def test_jury_tests_are_planned_concurrently(pytester, openai_server):
    openai_server.hold_until_in_flight(6, timeout=5)  # answered once 6 calls overlap; a test-by-test run never
    openai_server.reply = prefers_good
    pytester.makeini(INI)
    pytester.makepyfile(test_jury_pairs=JURY_TESTS)
    result = pytester.runpytest_inprocess("--llm-judge", f"openai:m;base_url={openai_server.base_url}")
    result.assert_outcomes(passed=12)
    assert openai_server.max_in_flight >= 6  # a test-by-test run would keep at most 2 in flight
    assert len(openai_server.requests) == 24  # both orders once per case; tests reused the planned runs
    section = summary(pytester)["custom"]
    assert (section["cases"], section["verdicts"]) == (12, 24)  # a judge verdict and a check per case
    assert section["compare"]["test_ours_wins"]["win_rate"]["value"] == 1.0


def test_a_failed_assertion_in_a_planned_body_is_the_tests_failure_with_pytests_message(pytester, openai_server):
    openai_server.reply = lambda body, index: "### A"  # first slot always: a tie over both orders
    pytester.makeini(INI)
    pytester.makepyfile(test_jury_pairs=JURY_TESTS)
    result = pytester.runpytest_inprocess("--llm-judge", f"openai:m;base_url={openai_server.base_url}",
                                           "-k", "pair-00 or pair-01")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*assert verdict.winner == \"a\"*", "*AssertionError: None*",
                                 "*assert 'tie' == 'a'*"])
    custom = summary(pytester)["custom"]
    # Failing tests still report their verdicts: each judge call's, and the check of its assertions.
    assert custom["verdicts"] == 4 and custom["check"]["test_ours_wins"]["pass_rate"]["value"] == 0


@pytest.mark.parametrize("flags", [[], ["--llm-no-plan"], pytest.param(["-n", "2"], marks=pytest.mark.e2e)])
def test_jury_tests_that_cannot_be_planned_run_at_call_time(pytester, flags):
    pytester.makeini(INI)
    pytester.makepyfile(test_mixed="""
        import pytest
        import llmjury
        from llmjury import Case

        CASES = [Case(id=f"c{i}", family="mixed") for i in range(3)]

        @llmjury.parametrize(CASES)
        async def test_with_tmp_path(case, jury, tmp_path):
            verdict = await jury.compare("longer answer here", "short", criteria="c")
            (tmp_path / "w.txt").write_text(verdict.winner)
            assert (tmp_path / "w.txt").read_text() == "a"

        @pytest.mark.parametrize("word", ["x", "y"])
        @llmjury.parametrize(CASES)
        async def test_plain_params(case, jury, word):
            graded = await jury.score(word, rubric="r", name=f"words")
            assert graded.scored

        @llmjury.parametrize(CASES[:1])
        async def test_skips(case, jury):
            pytest.skip("not today")
    """)
    result = pytester.runpytest_inprocess(*flags)
    result.assert_outcomes(passed=9, skipped=1)
    section = summary(pytester)["custom"]
    assert (section["verdicts"], sorted(section["compare"]), sorted(section["score"])) == \
        (18, ["test_with_tmp_path"], ["words"])  # each test's judge verdict and its `check`


def test_only_plain_jury_tests_are_plannable(pytester):
    from llmjury.judgement.planner import plannable, plugin_modules

    pytester.makepyfile(test_kinds="""
        import pytest
        import llmjury
        from llmjury import Case

        CASES = [Case(id="c0", family="kinds")]

        @pytest.fixture
        def extra():
            return 1

        @llmjury.parametrize(CASES)
        async def test_plain(case, jury):
            pass

        @llmjury.parametrize(CASES)
        async def test_fixture(case, jury, extra):
            pass

        @llmjury.parametrize(CASES)
        def test_sync(case, jury):
            pass

        async def test_no_jury():
            pass
    """)
    items, _ = pytester.inline_genitems("-p", "no:asyncio", "-p", "no:deepeval")
    plugins = plugin_modules(items[0].config)
    assert {item.originalname: plannable(item, plugins) for item in items} == {
        "test_plain": True, "test_fixture": False, "test_sync": False, "test_no_jury": False}


def test_a_failure_planned_by_another_worker_shows_its_message_once():
    """Under xdist the worker that reports a test another planned showed the exception's lines, then
    the traceback ending with the same lines again."""
    from llmjury.judgement.planner import _error_summary, _error_text
    from llmjury.session.runner import handed_failure

    def body() -> None:
        verdict = None
        assert verdict == "a", "the judge preferred " + "the reference"  # the whole message is not in its source

    try:
        body()
    except AssertionError as exc:
        text = handed_failure(_error_summary(exc), _error_text(exc))
    lines = text.splitlines()
    assert lines[0] == "AssertionError: the judge preferred the reference"
    assert text.count("the judge preferred the reference") == 1
    assert "in body" in text and 'assert verdict == "a"' in text  # where it was raised
    assert lines[-1] == "(planned by another worker)"


def test_a_structured_score_is_counted_as_read_from_its_schema_not_as_text(bound, openai_server):
    """Before: `jury.score`'s answers, asked with a JSON schema and read as one, were counted as read
    from "the text's decision line" (runs read schema/text 0/1)."""
    openai_server.reply = lambda body, i: '{"reasoning": "names the capital", "score": 4}'
    jury, recorded = bound()
    graded = jury.engine.run(jury.score("Paris", rubric="r"))
    assert graded.scored and openai_server.requests[0]["response_format"]["type"] == "json_schema"
    (record,) = recorded
    assert record.record()["read"] == {"schema": 1}


@pytest.mark.parametrize(("text", "words"), [
    ("Paris is the capital of France.", 6),
    ("パリはフランスの首都です。", 6),  # twelve characters and a full stop, no space
    ("巴黎是法国的首都", 4),
    ("你好，世界！", 2),
    ("東京\u3000大阪", 2),
    ("ｶﾀｶﾅｶﾀｶﾅ", 4),
    ("𠀋𠀋𠀋𠀋", 2),
    ("파리는 프랑스의 수도입니다", 3),  # Korean parts its words with spaces
    ("東京 is big", 3),
])
def test_the_offline_rules_count_words_in_languages_written_without_spaces(text, words):
    """Before: a Japanese or Chinese answer had no space, counted one word, and every offline score of
    one was the scale's floor and every comparison of two a tie."""
    from llmjury.custom import length_score, word_count

    assert word_count(text) == words
    assert length_score(text, 1, 5) == min(5, 1 + words // 3)
