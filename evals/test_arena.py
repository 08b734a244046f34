"""Elo arena (seed 002): every arranged battle is a case; the judge decides it in both orders.

MT-Bench questions battle the models' recorded answers (or live answers from any provider spec
named in `arena.models`). MRBench's tutors battle twice: by human label, and by the judge.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import llmjury
from llmjury.assertions import assert_scored
from llmjury.families import arena
from llmjury.families.arena import llmbar, prd
from llmjury.families.arena.llmbar import published, replay_metrics
from llmjury.families.arena.mrbench import HumanLabels, battles, human_battles, judge_tutors
from llmjury.plugin import settings_of
from llmjury.settings import family_options


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    settings = settings_of(metafunc.config)
    options = arena.ArenaOptions.model_validate(family_options(settings, arena.FAMILY))
    if metafunc.function is test_battle:
        llmjury.generate(metafunc, arena.arrange(options))
    elif metafunc.function is test_tutor_battle:
        llmjury.generate(metafunc, battles(None, pairs_per_conversation=options.mrbench_pairs, seed=settings.seed))
    elif metafunc.function is test_tutors_by_human_label:
        llmjury.generate(metafunc, [HumanLabels(id="mrbench-human-labels")])


@llmjury.pipeline(arena.battle)
def test_battle(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


@llmjury.pipeline(judge_tutors)
def test_tutor_battle(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


@llmjury.pipeline(human_battles)
def test_tutors_by_human_label(outcome: llmjury.Outcome) -> None:
    assert len(outcome.verdicts) > 4000


@llmjury.pipeline(llmbar.replay)
@llmjury.parametrize(llmbar.recorded_files())
def test_llmbar_recorded_judge(outcome: llmjury.Outcome) -> None:
    """A recorded judge file reproduces LLMBar's published counts through our parser and swap handling."""
    records = [v.record() for v in outcome.verdicts]
    ours = replay_metrics(records)
    reference = published(Path(records[0]["attributes"]["statistics"]))["counts"]
    n = len(records)
    assert (round(ours["accuracy_original"]["value"] * n), n) == reference["correct_False"]
    assert (round(ours["accuracy_swapped"]["value"] * n), n) == reference["correct_True"]
    assert (round(ours["correct_both"]["value"] * n), n) == reference["correct_both"]
    assert (round(ours["positional_agreement"]["value"] * n), n) == reference["equal"]


@llmjury.pipeline(prd.replay)
@llmjury.parametrize(prd.sources())
def test_prd_source(outcome: llmjury.Outcome) -> None:
    """PRD's human votes (the human leaderboard) and each LLM reviewer as a recorded judge."""
    assert len(outcome.verdicts) in (7040, 1600)
