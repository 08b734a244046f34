from __future__ import annotations

import pytest

from llmjury.errors import JudgeParseError
from llmjury.families.arena import FAMILY
from llmjury.families.arena.agreement import canonical, human_majority, reviewer_agreement
from llmjury.families.arena.llmbar import parse_output_choice
from llmjury.families.arena.prd import parse_last_line


def test_llmbar_output_choice():
    assert parse_output_choice("Output (b)") == "model_b"
    assert parse_output_choice("Reasoning...\n Output (a) is better") == "model_a"
    with pytest.raises(JudgeParseError):
        parse_output_choice("Both are fine")


def test_prd_pairs_are_canonicalised_and_majority_is_strict():
    assert canonical("gpt4", "bard", "model_a") == ("bard", "gpt4", "model_b")

    def vote(a, b, w, q="1"):
        return FAMILY.typed({"case_id": f"{q}-{a}-{b}", "family": "arena", "kind": "human_label",
                             "judge": {"provider": "human:x"}, "attributes": {"question": q, "model_a": a,
                                                                              "model_b": b}, "result": {"winner": w}})

    human = [vote("bard", "gpt4", "model_b"), vote("gpt4", "bard", "model_a"), vote("bard", "gpt4", "tie"),
             vote("bard", "claude", "model_a", "2"), vote("claude", "bard", "model_a", "2")]
    majority = human_majority(human)
    assert majority[("1", "bard", "gpt4")] == "model_b"  # two votes for gpt4 (one from each order), one tie
    assert majority[("2", "bard", "claude")] == "tie"  # one vote each way
    reviewer = [vote("bard", "gpt4", "model_b"), vote("gpt4", "bard", "model_b")]
    out = reviewer_agreement(reviewer, majority, [], None, 2)
    assert out.agreement_with_ties.value == 0.5 and out.swap_consistency.value == 0.0


def test_prd_last_line_verdicts():
    assert [parse_last_line(t) for t in ("1", " 3 ", "**2**", "Assistant 1 is better")] == [1, 3, 2, None]


def test_a_prd_reviewers_agreement_counts_verdicts_but_its_interval_is_over_pairs():
    """A pair's two answer orders are one case: before, the Wilson interval took 2n verdicts of n pairs
    as independent (n = verdicts, and too narrow when a reviewer's two orders agree)."""
    def vote(a, b, w, q):
        return FAMILY.typed({"case_id": f"{q}-{a}-{b}", "family": "arena", "kind": "human_label",
                             "judge": {"provider": "human:x"}, "attributes": {"question": q, "model_a": a,
                                                                              "model_b": b}, "result": {"winner": w}})

    questions = [str(q) for q in range(30)]
    majority = human_majority([vote("bard", "gpt4", "model_b", q) for q in questions])
    # the reviewer agrees on both orders of 20 pairs and on neither order of 10
    reviewer = [v for i, q in enumerate(questions)
                for v in (vote("bard", "gpt4", "model_b" if i < 20 else "model_a", q),
                          vote("gpt4", "bard", "model_a" if i < 20 else "model_b", q))]
    out = reviewer_agreement(reviewer, majority, [], None, 2)
    agreement = out.agreement_with_ties
    assert agreement.value == pytest.approx(2 / 3) and agreement.n == 30  # the curators' figure, over 30 pairs
    assert "over cases" in agreement.method
    wilson_over_verdicts = 0.116  # half of Wilson's width at 40 of 60, which counts each order as a case
    assert (agreement.high - agreement.low) / 2 > wilson_over_verdicts
