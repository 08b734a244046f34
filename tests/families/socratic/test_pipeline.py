"""The Socratic pipeline end to end on providers: offline, fake OpenAI judge, http tutor."""

from __future__ import annotations

from typing import Any

import pytest

from llmjury.errors import ConfigError
from llmjury.families.socratic.cases import simulated_cases
from llmjury.families.socratic.dialogue import STUDENT, TEACHER, cut, generate_dialogue
from llmjury.families.socratic.options import SocraticOptions
from llmjury.families.socratic.pipeline import compare, positions
from llmjury.families.socratic.results import PairwiseResult
from llmjury.testing import FakeChoice, FakeServer, Fault


def first_case(**options):
    return simulated_cases(SocraticOptions(**options), seed=0)[0]


def test_cases_are_seeded_distinct_and_as_many_as_asked():
    a = simulated_cases(SocraticOptions(dialogues=10, subsets=20), seed=3)
    b = simulated_cases(SocraticOptions(dialogues=10, subsets=20), seed=3)
    assert [c.id for c in a] == [c.id for c in b]
    assert len({c.id for c in a}) == 20
    assert all(1 <= c.cut <= 4 for c in a)
    assert [c.id for c in simulated_cases(SocraticOptions(dialogues=10, subsets=20), seed=4)] != [c.id for c in a]


def test_more_subsets_than_cut_points_is_a_config_error():
    with pytest.raises(ConfigError, match="at most 8 distinct subsets"):
        simulated_cases(SocraticOptions(dialogues=2, turns=4, subsets=9), seed=0)


def test_generated_dialogue_alternates_and_cuts_end_on_the_student(make_jury):
    jury = make_jury()
    plan = first_case().dialogue
    turns = jury.engine.run(generate_dialogue(jury, plan))
    assert [t.speaker for t in turns] == [STUDENT, TEACHER] * plan.turns
    assert turns[0].text == plan.question
    assert cut(turns, 2)[-1].speaker == STUDENT and len(cut(turns, 2)) == 3


def test_offline_compare_gives_a_scored_majority_with_alternating_positions(make_jury):
    jury = make_jury()
    outcome = jury.engine.run(compare(first_case(), jury))
    verdict = outcome.verdict
    assert verdict.kind == "pairwise" and isinstance(verdict.result, PairwiseResult)
    assert verdict.valid and verdict.result.winner in {"ours", "baseline", "tie"}
    assert [r.ours_position for r in verdict.result.runs] == ["A", "B", "A"]
    assert verdict.result.counted_runs == 3 and len(verdict.raw) == 3
    assert (verdict.result.source, verdict.result.subject) == ("simulated", first_case().dialogue.subject)
    assert outcome.details["context"].startswith("[Student]: ")


def test_positions_modes():
    assert positions("c", 4, "alternate", 0) == ["A", "B", "A", "B"]
    assert positions("c", 3, "fixed", 0) == ["A", "A", "A"]
    assert positions("c", 8, "random", 1) == positions("c", 8, "random", 1)


def test_real_judge_answers_are_mapped_back_through_the_swap(make_jury, openai_server):
    # Always "(a)": the judge prefers whatever sits in slot A, so preferences flip with the swap.
    openai_server.reply = lambda body, i: "Both are fine.\n### (a) Teacher A"
    jury = make_jury(roles={"judge": f"openai:judge;base_url={openai_server.base_url}"})
    verdict = jury.engine.run(compare(first_case(), jury)).verdict
    assert [r.preferred for r in verdict.result.runs] == ["ours", "baseline", "ours"]
    assert (verdict.result.winner, verdict.result.confidence) == ("ours", "majority")
    assert "Teacher A" in openai_server.requests[0]["messages"][0]["content"]


def test_one_unreadable_run_does_not_sink_the_case(make_jury, openai_server):
    def reply(body, index):
        # The first of the two runs with the offline baseline in slot B rambles, and so does its repair.
        swapped = "[Teacher A]: Good question." in body["messages"][0]["content"]
        return "I refuse to pick" if (not swapped and index == 0 and body.get("n", 1) == 2) or \
            len(body["messages"]) > 2 else "### (b)"

    openai_server.reply = reply
    jury = make_jury(roles={"judge": f"openai:judge;base_url={openai_server.base_url}"})
    verdict = jury.engine.run(compare(first_case(), jury)).verdict
    runs = verdict.result.runs
    assert verdict.valid and verdict.result.counted_runs == 2
    assert [r.error is not None for r in runs] == [True, False, False]
    assert "I refuse to pick" in verdict.raw


def test_an_order_no_run_of_which_is_readable_leaves_the_case_unscored(make_jury, openai_server):
    """Before: the two `ab` runs decided alone, `unanimous`, and the case counted in the win rate
    although the judge never read the pair the other way round (position bias unchecked; a user trial)."""
    def reply(body, index):
        # The offline baseline opens with "Good question."; when it sits in slot A the judge rambles.
        swapped = "[Teacher A]: Good question." in body["messages"][0]["content"]
        return "I refuse to pick" if swapped else "### (b)"

    openai_server.reply = reply
    jury = make_jury(roles={"judge": f"openai:judge;base_url={openai_server.base_url}"})
    verdict = jury.engine.run(compare(first_case(), jury)).verdict
    runs = verdict.result.runs
    assert not verdict.valid and verdict.cause == "no_decision"
    assert "no judge run of order ba counted" in verdict.error
    assert [r.error is not None for r in runs] == [False, True, False] and runs[1].attempts == 2
    assert "I refuse to pick" in verdict.raw


def test_refusing_judge_makes_an_unscored_verdict_naming_the_cause(make_jury, openai_server):
    openai_server.reply = lambda body, i: FakeChoice("", refusal="policy")
    jury = make_jury(roles={"judge": f"openai:judge;base_url={openai_server.base_url}"})
    verdict = jury.engine.run(compare(first_case(), jury)).verdict
    assert not verdict.valid and verdict.error.startswith("refused")
    assert verdict.result.winner is None and all(r.preferred is None for r in verdict.result.runs)


class Tutor(FakeServer):
    def route(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        return 200, {"reply": "What would happen if the pivot were always the smallest element?"}


def test_candidate_from_an_http_tutor_service(make_jury):
    with Tutor() as tutor:
        jury = make_jury(roles={"candidate": f"http:{tutor.origin}/chat"})
        outcome = jury.engine.run(compare(first_case(), jury))
        assert outcome.details["ours"].startswith("What would happen if the pivot")
        sent = tutor.requests[0]["messages"]
        assert sent[0]["role"] == "system" and sent[-1]["role"] == "user"


def test_failed_candidate_service_is_unscored_not_a_crash(make_jury):
    with Tutor() as tutor:
        tutor.faults.extend([Fault(status=404, message="no such tutor")])
        jury = make_jury(roles={"candidate": f"http:{tutor.origin}/chat"})
        verdict = jury.engine.run(compare(first_case(), jury)).verdict
        assert not verdict.valid and "candidate response" in verdict.error and "404" in verdict.error
        assert verdict.kind == "pairwise" and verdict.result.source == "simulated" and verdict.result.runs == []


def test_separate_aspects_are_judged_and_reported(make_jury):
    jury = make_jury(options={"socratic.aspects": "separate"})
    verdict = jury.engine.run(compare(first_case(), jury)).verdict
    assert set(verdict.result.aspects) == {"Understanding", "Explanation", "Language", "Readability"}


def test_a_jury_votes_once_per_order_each_and_the_report_shows_each_jurors_agreement(make_jury, openai_server):
    # Every juror prefers whatever sits in slot A: each juror's A-B and B-A runs disagree, a tie.
    openai_server.reply = lambda body, i: "### (a)"
    jury = make_jury(roles={"judge": f"openai:judge;base_url={openai_server.base_url}*2"})
    verdict = jury.engine.run(compare(first_case(), jury)).verdict
    result = verdict.result
    assert [(r.juror, r.ours_position, r.preferred) for r in result.runs] == [
        ("openai:judge#1", "A", "ours"), ("openai:judge#1", "B", "baseline"),
        ("openai:judge#2", "A", "ours"), ("openai:judge#2", "B", "baseline")]
    assert [(v.judge, v.winner) for v in result.jurors] == [("openai:judge#1", "tie"), ("openai:judge#2", "tie")]
    assert (result.winner, result.confidence) == ("tie", "unanimous")
    from llmjury.families.socratic import FAMILY

    section = FAMILY.aggregate([FAMILY.typed(verdict.record())])
    assert {name: figures.agreement_with_jury.value for name, figures in section.jury.items()} == {
        "openai:judge#1": 1.0, "openai:judge#2": 1.0}
