"""Intervals and tests for the figures in reports; scipy does the statistics, this names them.

Every metric is reported as `{"value", "low", "high", "n", "method"}` so gates and renderers
treat a win rate, a rating and a correlation alike.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

CONFIDENCE = 0.95


def metric(value: float | None, low: float | None, high: float | None, n: int, method: str) -> dict[str, Any]:
    def clean(x: float | None) -> float | None:
        return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)

    return {"value": clean(value), "low": clean(low), "high": clean(high), "n": int(n), "method": method}


def proportion(successes: int, trials: int) -> dict[str, Any]:
    """A rate with its Wilson score interval (well behaved near 0, 1 and for small n)."""
    if trials == 0:
        return metric(None, None, None, 0, "wilson")
    from scipy import stats  # here, not at the top: families import this module at plugin start-up

    ci = stats.binomtest(successes, trials).proportion_ci(confidence_level=CONFIDENCE, method="wilson")
    return metric(successes / trials, ci.low, ci.high, trials, "wilson")


def sign_test(wins: int, losses: int) -> dict[str, Any]:
    """Two-sided exact sign test on decisive outcomes (ties left out)."""
    from scipy import stats

    n = wins + losses
    p = stats.binomtest(wins, n, 0.5).pvalue if n else None
    return {"wins": wins, "losses": losses, "n": n, "p_value": None if p is None else float(p)}


def length_controlled_rate(outcome: np.ndarray, length_difference: np.ndarray, *, seed: int = 0,
                           resamples: int = 200) -> dict[str, Any]:
    """Win rate with the length difference regressed out, as AlpacaEval's length control does.

    Fits P(win) = sigmoid(a + b * tanh(d / sd(d))) by maximum likelihood with soft labels (win 1,
    tie 0.5, loss 0), where d is the first side's length minus the second's, and reports
    sigmoid(a): the predicted win rate had both answers been equally long. Interval: case bootstrap.
    """
    outcome = np.asarray(outcome, dtype=float)
    diff = np.asarray(length_difference, dtype=float)
    n = len(outcome)
    if n < 5:
        return metric(None, None, None, n, "length-controlled (logistic), bootstrap")
    scale = diff.std() or 1.0
    x = np.tanh(diff / scale)

    def fit(y: np.ndarray, z: np.ndarray) -> float:
        def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
            logit = w[0] + w[1] * z
            p = 1.0 / (1.0 + np.exp(-logit))
            eps = 1e-12
            value = -(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps)).sum() + 1e-3 * (w @ w)
            g = p - y
            return value, np.array([g.sum(), (g * z).sum()]) + 2e-3 * w

        from scipy import optimize

        w = optimize.minimize(loss, np.zeros(2), jac=True, method="L-BFGS-B").x
        return float(1.0 / (1.0 + np.exp(-w[0])))

    point = fit(outcome, x)
    rng = np.random.default_rng(seed)
    draws = [fit(outcome[i], x[i]) for i in (rng.integers(0, n, n) for _ in range(resamples))]
    return metric(point, np.percentile(draws, 2.5), np.percentile(draws, 97.5), n,
                  "length-controlled (logistic on tanh length difference), bootstrap")
