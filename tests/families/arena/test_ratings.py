from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmjury.families.arena.ratings import (
    Battles,
    bootstrap_bradley_terry,
    bradley_terry,
    empirical_win_rates,
    online_elo,
    permuted_elo,
    predicted_win_rates,
    win_counts,
)


def reference_elo(rows, k=4, scale=400, base=10, init=1000):
    """FastChat's compute_online_elo, written out plainly."""
    rating = {}
    for a, b, winner in rows:
        ra, rb = rating.setdefault(a, init), rating.setdefault(b, init)
        ea = 1 / (1 + base ** ((rb - ra) / scale))
        eb = 1 / (1 + base ** ((ra - rb) / scale))
        sa = {"model_a": 1, "model_b": 0}.get(winner, 0.5)
        rating[a] = ra + k * (sa - ea)
        rating[b] = rb + k * (1 - sa - eb)
    return rating


def test_online_elo_matches_fastchats_formula():
    rows = [("x", "y", "model_a"), ("y", "z", "tie"), ("z", "x", "model_b"), ("x", "z", "tie (bothbad)"),
            ("y", "x", "model_a")] * 7
    battles = Battles.from_rows(*zip(*rows, strict=True))
    ours = dict(zip(battles.models, online_elo(battles), strict=True))
    expected = reference_elo(rows)
    assert ours == pytest.approx(expected, abs=1e-9)


def synthetic(strength, n, seed):
    rng = np.random.default_rng(seed)
    m = len(strength)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    p = 1 / (1 + 10 ** ((np.array(strength)[b] - np.array(strength)[a]) / 400))
    return Battles([f"m{i}" for i in range(m)], a, b, (rng.random(n) < p).astype(float))


def test_bradley_terry_recovers_known_strengths():
    strength = [0, 100, 200, 400]
    ratings = bradley_terry(win_counts(synthetic(strength, 40_000, 1)))
    assert np.diff(ratings - ratings[0]) == pytest.approx(np.diff(strength), abs=20)
    assert ratings.mean() == pytest.approx(1000)


def test_anchor_puts_the_named_model_at_its_rating():
    ratings = bradley_terry(win_counts(synthetic([0, 50, 90], 5000, 2)), anchor=(2, 1250.0))
    assert ratings[2] == pytest.approx(1250.0)


def test_ties_count_half_to_each_side():
    battles = Battles.from_rows(["a", "a"], ["b", "b"], ["tie", "model_a"])
    assert win_counts(battles).tolist() == [[0, 1.5], [0.5, 0]]
    assert empirical_win_rates(battles)[0, 1] == 0.75


def test_predicted_win_rate_of_a_400_point_gap_is_ten_to_one():
    p = predicted_win_rates(np.array([1400.0, 1000.0]))
    assert p[0, 1] == pytest.approx(10 / 11) and p[1, 0] == pytest.approx(1 / 11)


def test_a_model_that_never_lost_gets_a_finite_rating():
    ratings = bradley_terry(win_counts(Battles.from_rows(["a"] * 5, ["b"] * 5, ["model_a"] * 5)))
    assert all(math.isfinite(r) for r in ratings) and ratings[0] > ratings[1]


def test_bootstrap_interval_covers_the_estimate_and_is_seeded():
    battles = synthetic([0, 60, 120], 3000, 3)
    first = bootstrap_bradley_terry(battles, rounds=50, seed=5)
    assert np.array_equal(first, bootstrap_bradley_terry(battles, rounds=50, seed=5))
    point = bradley_terry(win_counts(battles))
    low, high = np.percentile(first, 2.5, axis=0), np.percentile(first, 97.5, axis=0)
    assert np.all(low <= point) and np.all(point <= high)


def test_unknown_winner_is_rejected_with_the_allowed_values():
    with pytest.raises(ValueError, match=r"unknown winner value\(s\) \['draw'\]"):
        Battles.from_rows(["a"], ["b"], ["draw"])


outcomes = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.sampled_from(["model_a", "model_b", "tie"]))
                    .filter(lambda t: t[0] != t[1]), min_size=5, max_size=40)


@settings(max_examples=40, deadline=None)
@given(outcomes, st.permutations(range(4)), st.randoms(use_true_random=False))
def test_renaming_or_reordering_models_and_battles_changes_no_rating(rows, relabel, rng):
    names = ["m0", "m1", "m2", "m3"]
    base = Battles.from_rows([names[a] for a, _, _ in rows], [names[b] for _, b, _ in rows], [w for *_, w in rows])
    original = dict(zip(base.models, bradley_terry(win_counts(base)), strict=True))
    renamed = [f"z{relabel[i]}" for i in range(4)]
    shuffled = list(rows)
    rng.shuffle(shuffled)
    other = Battles.from_rows([renamed[a] for a, _, _ in shuffled], [renamed[b] for _, b, _ in shuffled],
                              [w for *_, w in shuffled])
    again = dict(zip(other.models, bradley_terry(win_counts(other)), strict=True))
    for i in range(4):
        if names[i] in original:
            assert again[renamed[i]] == pytest.approx(original[names[i]], abs=1e-3)


def test_permuted_elo_does_not_depend_on_input_order():
    battles = synthetic([0, 100, 200], 600, 4)
    order = np.random.default_rng(9).permutation(len(battles))
    shuffled = Battles(battles.models, battles.a[order], battles.b[order], battles.score_a[order])
    # The same multiset of battles: averages over many random orders agree closely.
    assert permuted_elo(battles, permutations=200) == pytest.approx(permuted_elo(shuffled, permutations=200), abs=3)
