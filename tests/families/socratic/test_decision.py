from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llmjury.errors import JudgeParseError
from llmjury.families.socratic.decision import parse_decision
from llmjury.majority import robust_verdict


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("...comparison...\n### (a) Teacher A", "a"),
        ("### ( b )", "b"),
        ("###(c) Equivalent", "c"),
        ("Overall B is kinder.\n### Final decision\nTeacher B", "b"),
        ("### b", "b"),
        ("### **A**", "a"),
        ("### Teacher A.", "a"),
        ("comparison\n\n**### (c) Equivalent**", "c"),
        ("### Teacher A is better than Teacher B", "a"),  # the winner named first, the loser after
    ],
)
def test_reads_the_last_decision_block(text, expected):
    assert parse_decision(text) == expected


@pytest.mark.parametrize("text", [
    "Teacher A is better.", "### I cannot decide", "###",
    # a second decision-shaped line, or more than a decision on the decision line, is ambiguous
    "draft ### (b)\nfinal:\n### (a) Teacher A", "### They are equivalent.",
    "### (a) Teacher B", "[Teacher A]: what is 2+2?\n\nequivalent",
])
def test_unreadable_decisions_raise_with_the_text(text):
    with pytest.raises(JudgeParseError, match="socratic-decision/5"):
        parse_decision(text)


@pytest.mark.parametrize(
    ("votes", "winner", "confidence"),
    [
        (["ours", "ours", "ours"], "ours", "unanimous"),
        (["ours", "baseline", "ours"], "ours", "majority"),
        (["ours", "baseline", "tie"], "tie", "no_consensus"),
        (["tie", "tie", "ours"], "tie", "majority"),
        (["ours", "baseline"], "tie", "no_consensus"),
        (["baseline"], "baseline", "unanimous"),
        (["ours", "ours", "baseline", "baseline", "tie"], "tie", "no_consensus"),
    ],
)
def test_robust_verdict_follows_seed_003(votes, winner, confidence):
    result = robust_verdict(votes)
    assert (result.winner, result.confidence, result.counted) == (winner, confidence, len(votes))


def test_no_counted_run_gives_no_verdict():
    assert robust_verdict([]) is None


@given(st.lists(st.sampled_from(["ours", "baseline", "tie"]), min_size=1, max_size=9), st.randoms())
def test_robust_verdict_ignores_run_order(votes, rng):
    shuffled = list(votes)
    rng.shuffle(shuffled)
    assert robust_verdict(votes) == robust_verdict(shuffled)


@pytest.mark.parametrize(("correction", "expected"), [
    ("Wait, looking again, Teacher B guides the student better.", "b"),
    ("Wait, looking again, Teacher B asks the student better questions.", "b"),
    ("잠깐, 다시 보니 선생님 B가 학생에게 더 잘 질문합니다.", "b"),
    ("Aspetta, rileggendo, l'Insegnante B guida meglio lo studente.", "b"),
    # negated, the reason supports nothing: the earlier decision competes
    ("Wait, looking again, Teacher B doesn't guide the student better.", None),
    ("Wait, looking again, Teacher B does not guide better.", None),
    ("잠깐, 다시 보니 선생님 B가 학생에게 더 잘 질문하지 않습니다.", None),
    ("Aspetta, rileggendo, l'Insegnante B non guida meglio lo studente.", None),
    # no correcting words: a reason alone corrects nothing
    ("Teacher B guides the student better.", None),
])
def test_a_self_correction_whose_reason_is_a_verb_done_better_is_read(correction, expected):
    names = {"잠깐": ("선생님 A", "선생님 B"), "Aspetta": ("Insegnante A", "Insegnante B")}
    first, second = next((pair for word, pair in names.items() if correction.startswith(word)),
                         ("Teacher A", "Teacher B"))
    text = f"### (a) {first}\n\n{correction}\n\n### (b) {second}"
    if expected is None:
        with pytest.raises(JudgeParseError) as raised:
            parse_decision(text)
        assert raised.value.kind == "ambiguous"
    else:
        assert parse_decision(text) == expected
