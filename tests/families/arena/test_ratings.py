from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmjury.families.arena import ratings as module
from llmjury.families.arena.ratings import (
    Battles,
    bootstrap_bradley_terry,
    bootstrap_elo,
    bradley_terry,
    elo_passes,
    empirical_win_rates,
    fit_bradley_terry,
    jackknife_bradley_terry,
    online_elo,
    permuted_elo,
    predicted_win_rates,
    resampled_wins,
    win_counts,
)
from llmjury.intervals import percentile_interval as interval


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


def reference_bradley_terry(wins, scale=400, base=10, init=1000, iterations=20_000):
    """Zermelo's (Hunter's MM) fixed-point iteration for Bradley-Terry strengths, written out plainly."""
    m = len(wins)
    p = [1.0] * m
    for _ in range(iterations):
        new = [sum(wins[i]) / sum((wins[i][j] + wins[j][i]) / (p[i] + p[j]) for j in range(m) if j != i)
               for i in range(m)]
        total = math.prod(new) ** (1 / m)
        p = [x / total for x in new]
    ratings = [scale * math.log(x, base) for x in p]
    return [r - sum(ratings) / m + init for r in ratings]


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


def test_a_fit_whose_ratings_sit_far_out_converges():
    """Two models that never lost, each beating a different one: the optimum lies about 1000 points
    out, where rounding alone keeps Newton's steps near 1e-9 points (found by the property test)."""
    wins = np.array([[0.0, 0, 0, 0], [1, 0, 2, 0], [0, 0, 0, 0], [0, 0, 2, 0]])
    ratings = fit_bradley_terry(wins[None])[0]
    assert np.argsort(ratings).tolist() == [2, 0, 3, 1]
    assert np.abs(ratings).max() > 500  # far out indeed


def test_permuted_elo_does_not_depend_on_input_order():
    battles = synthetic([0, 100, 200], 600, 4)
    order = np.random.default_rng(9).permutation(len(battles))
    shuffled = Battles(battles.models, battles.a[order], battles.b[order], battles.score_a[order])
    # The same multiset of battles: averages over many random orders agree closely.
    assert permuted_elo(battles, permutations=200) == pytest.approx(permuted_elo(shuffled, permutations=200), abs=3)


def battle_rows(battles):
    names = {1.0: "model_a", 0.0: "model_b", 0.5: "tie"}
    return [(battles.models[a], battles.models[b], names[s])
            for a, b, s in zip(battles.a.tolist(), battles.b.tolist(), battles.score_a.tolist(), strict=True)]


def with_ties(strength, n, seed):
    battles = synthetic(strength, n, seed)
    score = np.where(np.random.default_rng(seed + 100).random(n) < 0.15, 0.5, battles.score_a)
    return Battles(battles.models, battles.a, battles.b, score)


def test_online_elo_on_a_long_run_with_ties_matches_the_plain_loop_to_1e_6():
    battles = with_ties([0, 80, 150, 300, 310], 20_000, 6)
    expected = reference_elo(battle_rows(battles))
    assert online_elo(battles) == pytest.approx([expected[m] for m in battles.models], abs=1e-6)


def test_the_compiled_elo_pass_of_a_large_call_gives_the_plain_loops_bits(monkeypatch):
    battles = with_ties([0, 80, 150, 300, 310], 5_000, 9)
    orders = [np.random.default_rng(seed).permutation(len(battles)) for seed in range(3)]
    module._compiled_pass.cache_clear()  # loaded by an earlier test, it would run both calls
    plain = elo_passes(battles, orders, updates=3 * len(battles))
    monkeypatch.setattr(module, "COMPILED_ELO_UPDATES", 1000)  # the same call, now past the threshold
    compiled = elo_passes(battles, orders, updates=3 * len(battles))
    assert module._compiled_pass.cache_info().currsize == 1
    assert np.array_equal(plain, compiled)


@pytest.mark.parametrize("order", [[0, 5], [1, -1]])
def test_an_order_naming_a_battle_that_does_not_exist_is_refused(order):
    battles = with_ties([0, 80, 150], 3, 5)
    with pytest.raises(IndexError, match=r"order holds battle indices outside 0\.\.2"):
        online_elo(battles, order=np.array(order))


def test_once_the_compiled_elo_pass_is_loaded_every_later_pass_uses_it(monkeypatch):
    """numba's import and cached code load are paid once per process; after that even a short pass
    (an arena's single online Elo of a million battles, after its bootstrap) runs compiled."""
    battles = with_ties([0, 80, 150], 300, 5)
    module._compiled_pass.cache_clear()
    plain = online_elo(battles)
    assert module._compiled_pass.cache_info().currsize == 0  # a short call alone loads nothing
    module._compiled_pass()  # as a long call does
    monkeypatch.setattr(module, "_elo_pass", lambda *args: pytest.fail("the plain loop ran"))
    assert np.array_equal(online_elo(battles), plain)


@pytest.mark.parametrize("past_threshold", [False, True])
def test_elo_passes_hold_one_resample_at_a_time(monkeypatch, past_threshold):
    """A bootstrap of a million battles holds one or two 8 MB resamples, not every round's at once."""
    import weakref

    if past_threshold:
        monkeypatch.setattr(module, "COMPILED_ELO_UPDATES", 100)
    battles = with_ties([0, 80, 150], 300, 4)
    alive: list[weakref.ref] = []

    def orders():
        for seed in range(5):
            # the pass's loop variable holds the last order until the next arrives: one, never all
            assert sum(ref() is not None for ref in alive) <= 1, "earlier orders are still held"
            order = np.random.default_rng(seed).integers(0, len(battles), size=len(battles))
            alive.append(weakref.ref(order))
            yield order
            del order

    ratings = elo_passes(battles, orders(), updates=5 * len(battles))
    assert ratings.shape == (5, 3) and len(alive) == 5


def test_elo_bootstrap_rounds_are_the_plain_loop_on_the_seeded_resamples():
    battles = with_ties([0, 100, 200], 500, 7)
    rows = battle_rows(battles)
    rng = np.random.default_rng(11)
    for ratings in bootstrap_elo(battles, rounds=4, seed=11):
        expected = reference_elo([rows[i] for i in rng.integers(0, len(rows), size=len(rows))])
        assert ratings == pytest.approx([expected[m] for m in battles.models], abs=1e-9)


def test_permuted_elo_is_the_mean_of_the_plain_loop_over_the_seeded_orders():
    battles = with_ties([0, 50, 120, 130], 400, 8)
    rows = battle_rows(battles)
    rng = np.random.default_rng(3)
    first = rng.permutation(len(rows))
    orders = [first, *(rng.permuted(first[None], axis=1)[0] for _ in range(4))]
    runs = [reference_elo([rows[i] for i in order]) for order in orders]
    expected = [sum(run[m] for run in runs) / 5 for m in battles.models]
    assert permuted_elo(battles, permutations=5, seed=3) == pytest.approx(expected, abs=1e-9)


def test_elo_refuses_a_score_that_is_not_a_win_a_loss_or_a_tie():
    battles = Battles(["a", "b"], np.array([0]), np.array([1]), np.array([0.7]))
    with pytest.raises(ValueError, match=r"score_a must be 1, 0 or 0\.5"):
        online_elo(battles)


def test_bradley_terry_matches_zermelos_iteration():
    wins = win_counts(with_ties([0, 90, 160, 250, 400], 6000, 9))
    expected = reference_bradley_terry(wins.tolist())
    assert bradley_terry(wins) == pytest.approx(expected, abs=0.01)


def test_resampled_wins_keep_the_battle_count_and_only_observed_outcomes():
    battles = with_ties([0, 100, 200, 300], 800, 10)
    observed = win_counts(battles) > 0
    for wins in resampled_wins(battles, rounds=20, seed=4):
        assert wins.sum() == pytest.approx(len(battles))
        assert not np.any(wins[~observed])


def test_each_bootstrap_round_is_the_plain_fit_of_its_resample():
    battles = with_ties([0, 60, 200, 220], 1500, 12)
    samples = bootstrap_bradley_terry(battles, rounds=6, seed=2)
    for wins, ratings in zip(resampled_wins(battles, rounds=6, seed=2), samples, strict=True):
        assert ratings == pytest.approx(reference_bradley_terry(wins.tolist(), iterations=5000), abs=0.01)


def test_fitting_rounds_together_equals_fitting_each_alone_even_when_a_model_never_lost():
    unbeaten = win_counts(Battles.from_rows(["a", "a", "b", "c"], ["b", "c", "c", "a"],
                                            ["model_a", "model_a", "tie", "model_b"]))
    usual = win_counts(with_ties([0, 100, 150], 300, 13))
    together = fit_bradley_terry(np.stack([unbeaten, usual]))
    assert together[0] == pytest.approx(fit_bradley_terry(unbeaten[None])[0], abs=1e-6)
    assert together[1] == pytest.approx(fit_bradley_terry(usual[None])[0], abs=1e-6)
    assert np.isfinite(together).all() and together[0][0] > together[0][1]


def test_each_elo_bootstrap_round_averages_its_resample_over_as_many_orders_as_the_point_does():
    """The point (`permuted_elo`) and every bootstrap round are one estimator: a round is the
    resample's draws and `orders - 1` shuffles of them, each run by the plain loop, averaged."""
    battles = with_ties([0, 100, 200], 300, 7)
    rows = battle_rows(battles)
    rng = np.random.default_rng(5)
    drawn = rng.integers(0, len(rows), size=(2, len(rows)))
    shuffles = [rng.permuted(drawn, axis=1) for _ in range(2)]
    for r, ratings in enumerate(bootstrap_elo(battles, rounds=2, orders=3, seed=5)):
        runs = [reference_elo([rows[i] for i in order]) for order in (drawn[r], shuffles[0][r], shuffles[1][r])]
        assert ratings == pytest.approx([sum(run[m] for run in runs) / 3 for m in battles.models], abs=1e-9)


def test_the_batched_elo_passes_give_the_plain_loops_ratings_above_and_below_the_lane_threshold(monkeypatch):
    battles = with_ties([0, 80, 150, 300], 2_000, 3)
    batched = bootstrap_elo(battles, rounds=6, orders=2, seed=1)
    monkeypatch.setattr(module, "LANE_BATTLES", 10)  # now each pass by the loop
    assert bootstrap_elo(battles, rounds=6, orders=2, seed=1) == pytest.approx(batched, abs=1e-9)


def test_rank_intervals_are_ranks_a_resample_gave_not_values_between_two_ranks():
    samples = np.array([[1] * 39 + [2]]).T  # one model first in 39 resamples of 40, second in one
    low, high = interval(samples, discrete=True)
    assert (low[0], high[0]) == (1, 2)
    assert interval(samples)[1][0] == pytest.approx(1.025)  # linear interpolation: a rank no one had


def test_without_numba_every_pass_runs_the_plain_loop_with_the_same_ratings(monkeypatch):
    """numba is an optional extra (llmjury[fast]): a pass long enough to want it, where it is not
    installed, runs the plain loop and gives the compiled pass's ratings."""
    import sys

    battles = with_ties([0, 80, 150], 300, 5)
    expected = online_elo(battles)
    module._compiled_pass.cache_clear()
    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` raises ImportError
    monkeypatch.setattr(module, "COMPILED_ELO_UPDATES", 0)
    try:
        assert module._compiled_pass() is None
        assert np.array_equal(online_elo(battles), expected)
    finally:
        module._compiled_pass.cache_clear()


def test_each_leave_one_battle_out_fit_is_the_fit_without_that_battle():
    battles = with_ties([0, 80, 150], 60, 2)
    loo, weights = jackknife_bradley_terry(battles)
    assert weights.sum() == len(battles) and len(loo) == len(weights) <= 3 * 3 * 3
    cells = module.outcome_cells(battles)
    for row, cell in enumerate(np.unique(cells)):
        first = int(np.flatnonzero(cells == cell)[0])
        keep = np.arange(len(battles)) != first
        without = Battles(battles.models, battles.a[keep], battles.b[keep], battles.score_a[keep])
        assert loo[row] == pytest.approx(bradley_terry(win_counts(without)), abs=1e-6)


def test_an_elo_bootstrap_of_thousands_of_battles_holds_a_bounded_batch_of_draws():
    """Before: a batch of up to 4 million draws (160 MB for 1,000 rounds of 7,000 battles, a merge's or
    a session end's peak; 84 MB for these 300) with their models and scores; now only their indices
    (8 bytes a draw, up to 32 MB), the models and scores of a block of steps at a time."""
    import tracemalloc

    battles = with_ties([0, 50, 100, 150, 200, 250, 300, 350, 400], 7000, 3)
    tracemalloc.start()
    try:
        bootstrap_elo(battles, rounds=1000)  # 7 million draws: more than one batch holds
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40e6


def test_an_elo_bootstrap_of_few_battles_and_many_rounds_holds_a_bounded_batch_of_passes():
    """Forty battles a pass: four million draws would be 100,000 passes, each holding a block of steps."""
    import tracemalloc

    battles = with_ties([0, 100, 200], 40, 3)
    tracemalloc.start()
    try:
        bootstrap_elo(battles, rounds=20_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20e6


def test_the_batched_elo_passes_give_the_same_bits_whatever_block_of_steps_they_look_up(monkeypatch):
    battles = with_ties([0, 100, 200, 250], 1_000, 6)
    whole = bootstrap_elo(battles, rounds=40, seed=2)
    monkeypatch.setattr(module, "STEP_BLOCK", 7)  # blocks that do not divide the passes' length
    assert np.array_equal(bootstrap_elo(battles, rounds=40, seed=2), whole)


def test_a_few_elo_passes_run_in_the_plain_loop_and_give_the_batched_ratings(monkeypatch):
    """A point estimate is one pass: numpy stepping it alone cost a step's few calls per battle."""
    battles = with_ties([0, 80, 150], 900, 4)
    monkeypatch.setattr(module, "MIN_BATCHED_PASSES", 1)  # now batched however few
    batched = bootstrap_elo(battles, rounds=5, seed=9)
    looped = []
    monkeypatch.setattr(module, "elo_passes", lambda *args, **kw: looped.append(1) or elo_passes(*args, **kw))
    monkeypatch.setattr(module, "MIN_BATCHED_PASSES", 16)
    assert bootstrap_elo(battles, rounds=5, seed=9) == pytest.approx(batched, abs=1e-9)
    assert looped


def test_the_elo_bootstrap_gives_the_same_ratings_whatever_its_batch_of_draws(monkeypatch):
    battles = with_ties([0, 100, 200], 300, 5)
    whole = bootstrap_elo(battles, rounds=50, seed=3)
    monkeypatch.setattr(module, "LANE_CELLS", len(battles) * 7)  # batches of 7 rounds, the last shorter
    monkeypatch.setattr(module, "MIN_BATCHED_PASSES", 1)  # every batch stepped by numpy, as the whole was
    assert np.array_equal(bootstrap_elo(battles, rounds=50, seed=3), whole)
