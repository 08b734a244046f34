from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import optimize, stats

from llmjury.stats import (
    bootstrap_spearman,
    correlations,
    kendall_tau_b,
    length_controlled_rate,
    logistic_fit,
    mean_interval,
    proportion,
    rank_correlation,
    resample_ranks,
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
    monkeypatch.setattr("llmjury.stats.SIGN_BLOCK", 1000)  # more than one block at n=2500
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
    monkeypatch.setattr("llmjury.stats.PAIRWISE_ITEMS", 10)
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


@pytest.mark.parametrize("n", [1, 2, 3, 7, 20, 101, 1000, 37217])
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
