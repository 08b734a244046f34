"""The humans' order over the battles a judge judged is the order a whole leaderboard of those battles
gives, computed from the point ratings alone."""

from __future__ import annotations

import random

from llmjury.families.arena import FAMILY
from llmjury.families.arena.report import aggregate, leaderboard, ordered, point_ratings

MODELS = ["m1", "m2", "m3", "m4"]


def verdict(i: int, a: str, b: str, winner: str, kind: str, provider: str):
    return FAMILY.typed({"case_id": f"mine-{i}", "family": "arena", "kind": kind, "judge": {"provider": provider},
                         "result": {"winner": winner}, "attributes": {
                             "dataset": "mine", "question": f"q{i}", "question_index": i, "model_a": a,
                             "model_b": b, "experiment": "default", "answer_a": "x", "answer_b": "y"}})


def battles(seed: int, count: int, kind: str, provider: str, skip: set[int] = frozenset()):
    rng = random.Random(seed)
    out = []
    for i in range(count):
        a, b = rng.sample(MODELS, 2)
        if i not in skip:
            out.append(verdict(i, a, b, rng.choice(["model_a", "model_a", "model_b", "tie"]), kind, provider))
    return out


def test_the_point_ratings_order_is_the_leaderboards():
    for seed in range(5):
        vs = battles(seed, 60, "battle", "openai:j")
        fought, _, bt = point_ratings(vs)
        assert ordered(fought.models, bt) == leaderboard(vs).order


def test_the_humans_order_on_the_judges_battles_is_a_leaderboard_of_those_battles():
    humans = battles(1, 80, "human_label", "human:x")
    judge = battles(2, 80, "battle", "openai:j", skip=set(range(0, 80, 3)))  # the judge skipped a third
    section = aggregate(humans + judge)
    judged = {v.case_id for v in judge}
    expected = leaderboard([v for v in humans if v.case_id in judged]).order
    assert section.judge_validity.mine.human_order_same_battles == expected
    assert expected != leaderboard(humans).order  # the restriction tells: the battles the judge left out count
