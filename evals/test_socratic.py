"""Socratic tutor evaluation (seeds 000 and 003).

Simulated subsets: our tutor ("candidate" role) against the plainly prompted teacher
("baseline" role) on dialogues between the "teacher" and a persona "student", judged pairwise k
times; the same on real MathDial dialogues. Pre-collected replies (`socratic.responses`): only
the judge runs. MRBench: the same judge on annotated tutors' replies, scored against people's
preferences. A case fails only when its verdict could not be scored; who wins is for the report
and gates.
"""

from __future__ import annotations

import llmjury
from llmjury.assertions import assert_scored


@llmjury.case_set("socratic", "simulated")
def test_ours_against_baseline(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


@llmjury.case_set("socratic", "mathdial")
def test_ours_against_baseline_on_real_dialogues(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


@llmjury.case_set("socratic", "mrbench")
def test_judge_on_human_preferences(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


@llmjury.case_set("socratic", "responses")
def test_judge_collected_replies(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)

