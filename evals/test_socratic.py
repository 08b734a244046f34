"""Socratic tutor evaluation (seeds 000 and 003).

Simulated subsets: our tutor ("candidate" role) against the plainly prompted teacher
("baseline" role) on dialogues between the "teacher" and a persona "student", judged pairwise k
times. MRBench: the same judge on real tutors' replies, scored against human preferences.
A case fails only when its verdict could not be scored; who wins is for the report and gates.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import llmjury
from llmjury.assertions import assert_scored
from llmjury.families import socratic
from llmjury.families.socratic.mathdial import subsets
from llmjury.families.socratic.mrbench import pair_cases
from llmjury.families.socratic.pipeline import compare_real, judge_tutor_pair
from llmjury.plugin import settings_of
from llmjury.settings import family_options


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    settings = settings_of(metafunc.config)
    options = socratic.SocraticOptions.model_validate(family_options(settings, socratic.FAMILY))
    if metafunc.function is test_ours_against_baseline:
        llmjury.generate(metafunc, socratic.simulated_cases(options, settings.seed))
    elif metafunc.function is test_ours_against_baseline_on_real_dialogues:
        path = Path(options.mathdial) if options.mathdial else None
        llmjury.generate(metafunc, subsets(path, count=options.mathdial_subsets, seed=settings.seed))
    elif metafunc.function is test_judge_on_human_preferences:
        path = Path(options.mrbench) if options.mrbench else None
        cases, _skipped = pair_cases(path, pairs_per_conversation=options.mrbench_pairs, seed=settings.seed)
        llmjury.generate(metafunc, cases)


@llmjury.pipeline(socratic.compare)
def test_ours_against_baseline(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


@llmjury.pipeline(compare_real)
def test_ours_against_baseline_on_real_dialogues(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


@llmjury.pipeline(judge_tutor_pair)
def test_judge_on_human_preferences(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)
