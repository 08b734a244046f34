"""Elo arena (seed 002): every arranged battle is a case; the judge decides it in both orders.

MT-Bench questions battle the models' recorded answers (or live answers from any provider spec
named in `arena.models`). MRBench's tutors battle twice: by human label, and by the judge.
Pairwise items from `arena.pairs=PATH` are judged live, and their human labels and recorded
verdicts are read beside. A dataset with no file (no option, no shipped copy) has no cases.
"""

from __future__ import annotations

from pathlib import Path

import llmjury
from llmjury.assertions import assert_scored
from llmjury.families.arena.agreement import llmbar_counts
from llmjury.families.arena.llmbar import published
from llmjury.families.arena.results import LLMBarReplay
from llmjury.family import Metric


@llmjury.case_set("arena", "battle")
def test_battle(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


@llmjury.case_set("arena", "tutor_battle")
def test_tutor_battle(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


@llmjury.case_set("arena", "tutors_by_human_label")
def test_tutors_by_human_label(outcome: llmjury.Outcome) -> None:
    assert outcome.verdicts, "the MRBench file yields no labelled tutor pair"


@llmjury.case_set("arena", "pair")
def test_pair(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


@llmjury.case_set("arena", "pair_records")
def test_pair_records(outcome: llmjury.Outcome) -> None:
    """Human labels and recorded verdicts of the pairwise items file (none is fine: judged live only)."""
    assert all(v.valid for v in outcome.verdicts)


@llmjury.case_set("arena", "llmbar_recorded_judge")
def test_llmbar_recorded_judge(outcome: llmjury.Outcome) -> None:
    """A recorded judge file reproduces LLMBar's published counts through our parser and swap handling."""
    results = [v.result for v in outcome.verdicts if isinstance(v.result, LLMBarReplay)]
    ours = llmbar_counts(results)
    reference = published(Path(outcome.verdicts[0].attributes["statistics"]))["counts"]
    n = len(results)

    def count(key: str) -> tuple[int, int]:
        figure = ours[key]
        assert isinstance(figure, Metric) and figure.value is not None
        return round(figure.value * n), n

    assert count("accuracy_original") == reference["correct_False"]
    assert count("accuracy_swapped") == reference["correct_True"]
    assert count("correct_both") == reference["correct_both"]
    assert count("positional_agreement") == reference["equal"]


@llmjury.case_set("arena", "prd_source")
def test_prd_source(outcome: llmjury.Outcome) -> None:
    """PRD's human votes (the human leaderboard) and each LLM reviewer as a recorded judge."""
    assert len(outcome.verdicts) in (7040, 1600)
