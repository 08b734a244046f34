from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import optimize, stats

from llmjury.correlation import bootstrap_spearman, correlations, kendall_tau_b, rank_correlation, resample_ranks
from llmjury.stats import (
    cases_needed,
    detectable_change,
    length_controlled_rate,
    logistic_fit,
    mean_interval,
    metric,
    paired_difference,
    paired_proportions_interval,
    proportion,
    sign_test,
    t_quantile,
)


def reference_fit(y, z, ridge=1e-3):
    """The same penalised soft-label likelihood, minimised by scipy's exact-Hessian trust region."""
    def loss(w):
        t = w[0] + w[1] * z
        return (np.logaddexp(0, t) - y * t).sum() + ridge * (w @ w)

    def grad(w):
        g = 1 / (1 + np.exp(-(w[0] + w[1] * z))) - y
        return np.array([g.sum(), (g * z).sum()]) + 2 * ridge * w

    def hess(w):
        p = 1 / (1 + np.exp(-(w[0] + w[1] * z)))
        c = p * (1 - p)
        return np.array([[c.sum(), (c * z).sum()], [(c * z).sum(), (c * z * z).sum()]]) + 2 * ridge * np.eye(2)

    return optimize.minimize(loss, np.zeros(2), jac=grad, hess=hess, method="trust-exact",
                             options={"gtol": 1e-12}).x


def soft_labels(rng, n, p=(0.3, 0.1, 0.6)):
    return rng.choice([0.0, 0.5, 1.0], n, p=p)


@pytest.mark.parametrize("n", [5, 12, 80, 400])
def test_logistic_fit_reaches_the_optimum_of_each_row(n):
    rng = np.random.default_rng(n)
    y = np.stack([soft_labels(rng, n) for _ in range(6)])
    z = np.tanh(rng.normal(0, 1.5, (6, n)))
    fitted = logistic_fit(y, z)
    for row in range(6):
        assert fitted[row] == pytest.approx(reference_fit(y[row], z[row]), abs=1e-7)


def test_logistic_fit_stays_finite_when_every_outcome_is_a_win():
    z = np.tanh(np.linspace(-2, 2, 30))[None]
    fitted = logistic_fit(np.ones((1, 30)), z)
    assert np.isfinite(fitted).all()
    assert fitted[0] == pytest.approx(reference_fit(np.ones(30), z[0]), abs=1e-6)


def test_length_controlled_rate_is_the_fit_on_the_cases_and_on_the_seeded_resamples():
    rng = np.random.default_rng(3)
    outcome, diff = soft_labels(rng, 60), rng.normal(0, 200, 60)
    found = length_controlled_rate(outcome, diff, seed=7, resamples=40)
    x = np.tanh(diff / diff.std())
    draws = np.random.default_rng(7)
    rates = [1 / (1 + np.exp(-reference_fit(outcome[i], x[i])[0]))
             for i in (draws.integers(0, 60, 60) for _ in range(40))]
    point = 1 / (1 + np.exp(-reference_fit(outcome, x)[0]))
    assert found["value"] == pytest.approx(point, abs=1e-6)
    assert found["low"] == pytest.approx(np.percentile(rates, 2.5), abs=1e-6)
    assert found["high"] == pytest.approx(np.percentile(rates, 97.5), abs=1e-6)
    assert found["n"] == 60


def test_length_controlled_rate_without_length_differences_is_the_shrunk_win_rate():
    outcome = np.array([1.0, 1.0, 0.0, 0.5, 1.0, 0.0, 1.0, 1.0])
    found = length_controlled_rate(outcome, np.zeros(8), resamples=10)
    # b has nothing to explain, so sigmoid(a) is the mean outcome, pulled a hair towards 1/2 by the ridge
    assert found["value"] == pytest.approx(outcome.mean(), abs=1e-3)


def test_length_controlled_rate_needs_five_cases():
    assert length_controlled_rate(np.ones(4), np.arange(4.0))["value"] is None


@pytest.mark.parametrize("n, distinct", [(6, 3), (40, 5), (300, 300), (2500, 7)])
def test_kendall_tau_b_of_each_resample_equals_scipys_on_the_drawn_items(n, distinct, monkeypatch):
    monkeypatch.setattr("llmjury.correlation.SIGN_CELLS", 2500 * 1000)  # blocks of 1000 columns at n=2500
    rng = np.random.default_rng(n)
    x = rng.integers(0, distinct, n).astype(float)
    y = x + rng.normal(0, 2, n).round()
    index = rng.integers(0, n, (12, n))
    counts = np.stack([np.bincount(row, minlength=n) for row in index])
    found = kendall_tau_b(x, y, counts)
    expected = [stats.kendalltau(x[row], y[row]).statistic for row in index]
    assert found == pytest.approx(expected, abs=1e-12, nan_ok=True)


def test_kendall_tau_b_is_nan_where_one_side_is_constant():
    assert np.isnan(kendall_tau_b(np.ones(5), np.arange(5.0), np.ones((1, 5))))[0]


def test_kendall_tau_b_above_the_pairwise_limit_gives_the_same_figures(monkeypatch):
    rng = np.random.default_rng(5)
    x, y = rng.integers(0, 4, 50).astype(float), rng.integers(0, 6, 50).astype(float)
    counts = np.stack([np.bincount(rng.integers(0, 50, 50), minlength=50) for _ in range(5)])
    pairwise = kendall_tau_b(x, y, counts)
    monkeypatch.setattr("llmjury.correlation.PAIRWISE_ITEMS", 10)
    assert kendall_tau_b(x, y, counts) == pytest.approx(pairwise, abs=1e-12)


@pytest.mark.parametrize("n, distinct", [(2, 2), (3, 3), (16, 4), (500, 500)])
def test_correlations_equal_scipys(n, distinct):
    rng = np.random.default_rng(n)
    x = rng.integers(0, distinct, n).astype(float)
    x[:2] = [0, 1]  # never constant
    y = x * 0.5 + rng.normal(0, 1, n).round(1)
    found = correlations(x, y)
    assert found["pearson"] == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert found["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert found["kendall"] == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)


@pytest.mark.parametrize("n, distinct", [(3, 3), (5, 5), (9, 9), (9, 4), (33, 33), (34, 34), (40, 6)])
def test_rank_correlation_and_its_p_values_equal_scipys(n, distinct):
    rng = np.random.default_rng(n * distinct)
    for _ in range(30):
        x = rng.permutation(n).astype(float) if distinct == n else rng.integers(0, distinct, n).astype(float)
        y = x + rng.normal(0, n / 3, n).round() if rng.random() < 0.7 else rng.permutation(x)
        for pair in ((x, y), (x, x), (x, -x)):  # also perfect agreement and perfect reversal
            if np.ptp(pair[0]) == 0 or np.ptp(pair[1]) == 0:
                continue
            found = rank_correlation(*pair)
            rho, tau = stats.spearmanr(*pair), stats.kendalltau(*pair)
            assert [found["spearman"], found["spearman_p"], found["kendall"], found["kendall_p"]] == \
                pytest.approx([rho.statistic, rho.pvalue, tau.statistic, tau.pvalue], abs=1e-12)


def test_rank_correlation_is_nan_for_a_constant_side_and_as_scipys_for_two_items():
    found = rank_correlation(np.array([1.0, 2.0, 3.0]), np.array([4.0, 4.0, 4.0]))
    assert all(np.isnan(value) for value in found.values())
    found = rank_correlation(np.array([1.0, 2.0]), np.array([2.0, 1.0]))
    assert (found["spearman"], found["kendall"], found["kendall_p"]) == (-1.0, -1.0, 1.0)
    assert np.isnan(found["spearman_p"]) and np.isnan(stats.spearmanr([1, 2], [2, 1]).pvalue)


@pytest.mark.parametrize("n, distinct", [(2, 2), (5, 2), (40, 3), (300, 300)])
def test_bootstrap_spearman_of_each_resample_equals_scipys(n, distinct):
    rng = np.random.default_rng(n)
    x = rng.integers(0, distinct, n).astype(float)
    y = x + rng.normal(0, 1, n).round()
    index = rng.integers(0, n, (40, n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on a constant resample; both say NaN
        expected = [stats.spearmanr(x[row], y[row]).statistic for row in index]
    assert bootstrap_spearman(x, y, index) == pytest.approx(expected, abs=1e-12, nan_ok=True)


def test_correlations_are_nan_where_one_side_is_constant():
    found = correlations(np.array([1.0, 2.0, 3.0]), np.array([4.0, 4.0, 4.0]))
    assert all(np.isnan(value) for value in found.values())


@pytest.mark.parametrize("n, distinct", [(1, 1), (7, 2), (60, 8), (400, 400)])
def test_resample_ranks_equal_scipys_rankdata_of_each_resample(n, distinct):
    rng = np.random.default_rng(n)
    values = rng.integers(0, distinct, n).astype(float)
    index = rng.integers(0, n, (15, n))
    assert np.array_equal(resample_ranks(values, index), stats.rankdata(values[index], axis=1))


@pytest.mark.parametrize("n", [5, 7, 20, 101, 1000, 37217])
def test_wilson_interval_equals_scipys_for_every_count(n):
    for k in sorted({0, 1, n // 3, n // 2, n - 1, n} | set(range(0, n + 1, max(1, n // 40)))):
        if not 0 <= k <= n:
            continue
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        found = proportion(k, n)
        assert (found["value"], found["n"], found["method"]) == (k / n, n, "wilson")
        assert found["low"] == pytest.approx(ci.low, abs=1e-12)
        assert found["high"] == pytest.approx(ci.high, abs=1e-12)


def test_a_rate_of_no_trials_has_no_value_and_no_interval():
    assert proportion(0, 0) == {"value": None, "low": None, "high": None, "n": 0, "method": "wilson"}


@pytest.mark.parametrize("n", [1, 2, 5, 10, 31, 200, 2500, 20_000, 20_001])
def test_sign_test_equals_scipys_exact_binomial_test(n):
    for wins in sorted({0, 1, n // 4, n // 2, (n + 1) // 2, n - 1, n} | set(range(0, n + 1, max(1, n // 30)))):
        if not 0 <= wins <= n:
            continue
        found = sign_test(wins, n - wins)
        assert (found["wins"], found["losses"], found["n"]) == (wins, n - wins, n)
        assert found["p_value"] == pytest.approx(stats.binomtest(wins, n, 0.5).pvalue, abs=1e-12)


@pytest.mark.parametrize("n", [2, 3, 7, 30, 400])
def test_mean_interval_and_t_quantile_equal_scipys(n):
    values = np.random.default_rng(n).normal(3, 1.5, n).round(1)
    values[:2] = [1.0, 2.0]  # never constant
    low, high = stats.t.interval(0.95, n - 1, loc=values.mean(), scale=stats.sem(values))
    assert mean_interval(values) == pytest.approx((low, high), abs=1e-12)
    assert t_quantile(0.975, n - 1) == pytest.approx(stats.t.ppf(0.975, n - 1), abs=1e-12)


def test_sign_test_without_decisive_outcomes_has_no_p_value():
    assert sign_test(0, 0) == {"wins": 0, "losses": 0, "n": 0, "p_value": None}


# -- paired differences ---------------------------------------------------------------------------------
def test_the_paired_proportions_interval_is_newcombes_square_and_add():
    """Cavo et al. (2012), 161 paired outcomes (59 both, 6 first only, 16 second only): -0.0621
    (95% CI -0.1186 to -0.0046), as Fagerland, Lydersen and Laake's contingencytables computes it."""
    low, high = paired_proportions_interval(59, 6, 16, 161)
    assert (round(low, 4), round(high, 4)) == (-0.1186, -0.0046)
    flipped = paired_proportions_interval(59, 16, 6, 161)
    assert flipped == (pytest.approx(-high), pytest.approx(-low))


def test_the_paired_proportions_interval_covers_the_true_difference_about_95_percent_of_the_time():
    rng = np.random.default_rng(0)
    hits = 0
    draws = 2000
    for _ in range(draws):  # 60 cases right 80% of the time on main, 15% of them made wrong by the change
        before = rng.random(60) < 0.8
        now = before & (rng.random(60) >= 0.15 / 0.8)
        both, rose, fell = int((now & before).sum()), int((now & ~before).sum()), int((~now & before).sum())
        low, high = paired_proportions_interval(both, rose, fell, 60)
        hits += low <= -0.15 <= high
    assert 0.93 <= hits / draws <= 0.98


def test_a_paired_rate_difference_carries_the_exact_mcnemar_p_value():
    now = np.array([1, 1, 0, 0, 1, 0, 1, 1, 0, 0] * 3, dtype=float)
    before = np.array([1, 1, 1, 1, 1, 0, 1, 1, 1, 0] * 3, dtype=float)
    ones = np.ones(30)
    found = paired_difference(now, ones, before, ones)
    assert found.discordant == {"rose": 0, "fell": 9}
    assert found.p_value == pytest.approx(stats.binomtest(0, 9, 0.5).pvalue)
    assert found.value == pytest.approx(-0.3) and found.n == 30


def test_unchanged_per_case_values_give_a_zero_width_interval():
    values, ones = np.array([1, 0, 1, 1], dtype=float), np.ones(4)
    found = paired_difference(values, ones, values, ones)
    assert (found.value, found.low, found.high, found.p_value) == (0.0, 0.0, 0.0, 1.0)
    scores = np.array([3.0, 4.0, 5.0])
    found = paired_difference(scores, np.ones(3), scores, np.ones(3))
    assert (found.value, found.low, found.high, found.sd) == (0.0, 0.0, 0.0, None)


def test_a_paired_score_difference_is_a_paired_t_interval_clipped_to_what_the_difference_can_be():
    rng = np.random.default_rng(1)
    now, before = rng.integers(1, 6, 40).astype(float), rng.integers(1, 6, 40).astype(float)
    found = paired_difference(now, np.ones(40), before, np.ones(40))
    d = now - before
    low, high = stats.t.interval(0.95, 39, loc=d.mean(), scale=stats.sem(d))
    assert (found.low, found.high) == (pytest.approx(low), pytest.approx(high))
    assert found.p_value == pytest.approx(stats.ttest_rel(now, before).pvalue)
    tiny = paired_difference(np.array([5.0, 1.0]), np.ones(2), np.array([1.0, 5.0]), np.ones(2))
    assert (tiny.low, tiny.high) == (-4.0, 4.0)  # t with 1 degree of freedom would reach far beyond


def test_a_case_scored_in_one_run_only_still_counts_in_its_runs_mean():
    found = paired_difference(np.array([1.0, 1.0, 0.0]), np.array([1.0, 1.0, 0.0]),
                              np.array([1.0, 0.0, 1.0]), np.ones(3))
    assert found.value == pytest.approx(1.0 - 2 / 3) and found.method == "paired t on per-case differences"


def test_the_detectable_change_and_the_cases_a_margin_needs_are_the_usual_power_formulae():
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert detectable_change(0.3, 60) == pytest.approx(z * 0.3 / 60 ** 0.5)
    assert cases_needed(0.3, 0.05) == int(np.ceil((z * 0.3 / 0.05) ** 2))
    assert detectable_change(0.3, cases_needed(0.3, 0.05)) <= 0.05


def test_every_case_changing_alike_states_no_spread_to_compute_a_detectable_change_from():
    found = paired_difference(np.zeros(40), np.ones(40), np.ones(40), np.ones(40))
    assert (found.value, found.discordant, found.sd) == (-1.0, {"rose": 0, "fell": 40}, None)


# -- the comparison's confidence level ------------------------------------------------------------------
@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.92, 0.99])
def test_wilson_interval_at_any_level_equals_scipys(confidence):
    for k, n in [(0, 7), (3, 7), (7, 7), (17, 60), (48, 60), (401, 1000)]:
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
        found = proportion(k, n, confidence)
        assert (found["low"], found["high"]) == (pytest.approx(ci.low, abs=1e-12), pytest.approx(ci.high, abs=1e-12))


def test_the_paired_proportions_interval_at_another_level_squares_and_adds_that_levels_wilson_intervals():
    """Newcombe's method 10 written from scipy's Wilson intervals at 90%: the level reaches both."""
    both, rose, fell, n = 59, 6, 16, 161
    first = stats.binomtest(both + rose, n).proportion_ci(confidence_level=0.9, method="wilson")
    second = stats.binomtest(both + fell, n).proportion_ci(confidence_level=0.9, method="wilson")
    p1, p2, neither = (both + rose) / n, (both + fell) / n, n - both - rose - fell
    phi = (both * neither - rose * fell - n / 2) / np.sqrt((both + rose) * (fell + neither) * (both + fell)
                                                           * (rose + neither))
    below = np.sqrt((p1 - first.low) ** 2 - 2 * phi * (p1 - first.low) * (second.high - p2) + (second.high - p2) ** 2)
    above = np.sqrt((first.high - p1) ** 2 - 2 * phi * (first.high - p1) * (p2 - second.low) + (p2 - second.low) ** 2)
    low, high = paired_proportions_interval(both, rose, fell, n, 0.9)
    assert (low, high) == (pytest.approx(p1 - p2 - below, abs=1e-12), pytest.approx(p1 - p2 + above, abs=1e-12))
    wide = paired_proportions_interval(both, rose, fell, n)
    assert wide[0] < low < high < wide[1]


def test_a_paired_difference_at_another_level_is_that_levels_interval_and_keeps_its_test():
    rng = np.random.default_rng(4)
    now, before, ones = rng.integers(1, 6, 50).astype(float), rng.integers(1, 6, 50).astype(float), np.ones(50)
    found, default = paired_difference(now, ones, before, ones, 0.9), paired_difference(now, ones, before, ones)
    d = now - before
    low, high = stats.t.interval(0.9, 49, loc=d.mean(), scale=stats.sem(d))
    assert (found.low, found.high) == (pytest.approx(low), pytest.approx(high))
    assert (found.value, found.p_value, found.sd) == (default.value, default.p_value, default.sd)
    rates_now, rates_before = (d > 0).astype(float), (d >= 0).astype(float)
    rate = paired_difference(rates_now, ones, rates_before, ones, 0.9)
    assert (rate.low, rate.high) == paired_proportions_interval(
        int((rates_now * rates_before).sum()), 0, int(((rates_now == 0) & (rates_before == 1)).sum()), 50, 0.9)


def test_the_detectable_change_at_a_level_uses_that_levels_two_sided_quantile():
    z = stats.norm.ppf(0.96) + stats.norm.ppf(0.8)
    assert detectable_change(0.3, 60, 0.92) == pytest.approx(z * 0.3 / 60 ** 0.5)
    assert cases_needed(0.3, 0.05, 0.92) == int(np.ceil((z * 0.3 / 0.05) ** 2))
    assert detectable_change(0.3, 60, 0.92) < detectable_change(0.3, 60)


def test_a_nan_of_any_float_width_is_no_value_in_a_metric():
    # A float32 NaN (a numpy scalar that is not a Python float) once passed through as NaN, which
    # summary.json cannot hold as JSON.
    found = metric(np.float32("nan"), np.float16("nan"), np.float64("nan"), 3, "mean")
    assert (found["value"], found["low"], found["high"]) == (None, None, None)
    assert metric(np.float32(0.5), 0, 1, 3, "mean")["value"] == 0.5


def test_the_paired_proportions_interval_over_four_cases_is_built_from_wilsons_bounds():
    """A rate over fewer than 5 items reports no interval, and the paired interval read its bounds
    from that report: comparing two 4-case runs where one case changed crashed with a TypeError."""
    low, high = paired_proportions_interval(both=2, rose=0, fell=1, n=4)
    assert -1.0 <= low < -0.25 + 1e-9 and -0.25 < high <= 1.0


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("cells", [10**6, 40 * 7])  # one block; blocks of 7 rows
def test_kendall_leave_one_out_is_scipys_tau_without_each_item(ties, cells, monkeypatch):
    from llmjury.correlation import kendall_leave_one_out

    monkeypatch.setattr("llmjury.correlation.SIGN_CELLS", cells)
    rng = np.random.default_rng(4)
    x = rng.integers(1, 6, 40).astype(float) if ties else rng.normal(size=40)
    y = x + rng.normal(0, 1, 40)
    found = kendall_leave_one_out(x, y)
    expected = [stats.kendalltau(np.delete(x, i), np.delete(y, i)).statistic for i in range(40)]
    assert found == pytest.approx(expected, abs=1e-12)
