"""Intervals and tests for the figures in reports; scipy does the statistics, this names them.

Every metric is reported as `{"value", "low", "high", "n", "method"}` so gates and renderers
treat a win rate, a rating and a correlation alike.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

CONFIDENCE = 0.95


def metric(value: float | None, low: float | None, high: float | None, n: int, method: str) -> dict[str, Any]:
    def clean(x: float | None) -> float | None:
        return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)

    return {"value": clean(value), "low": clean(low), "high": clean(high), "n": int(n), "method": method}


def proportion(successes: int, trials: int) -> dict[str, Any]:
    """A rate with its Wilson score interval (well behaved near 0, 1 and for small n)."""
    if trials == 0:
        return metric(None, None, None, 0, "wilson")
    ci = stats.binomtest(successes, trials).proportion_ci(confidence_level=CONFIDENCE, method="wilson")
    return metric(successes / trials, ci.low, ci.high, trials, "wilson")


def sign_test(wins: int, losses: int) -> dict[str, Any]:
    """Two-sided exact sign test on decisive outcomes (ties left out)."""
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
    rng = np.random.default_rng(seed)
    rows = np.stack([np.arange(n), *(rng.integers(0, n, n) for _ in range(resamples))])
    intercepts = logistic_fit(outcome[rows], x[rows])[:, 0]
    rates = 1.0 / (1.0 + np.exp(-intercepts))
    return metric(rates[0], np.percentile(rates[1:], 2.5), np.percentile(rates[1:], 97.5), n,
                  "length-controlled (logistic on tanh length difference), bootstrap")


def logistic_fit(y: np.ndarray, z: np.ndarray, *, ridge: float = 1e-3, max_steps: int = 100) -> np.ndarray:
    """(a, b) maximising sum(y log p + (1 - y) log(1 - p)) - ridge (a^2 + b^2), p = sigmoid(a + b z),
    for every row of `y` and `z` (soft labels in [0, 1]) at once.

    Two parameters need no general-purpose optimiser: damped Newton steps with the 2 x 2 Hessian
    solved in closed form, batched over rows (a bootstrap's resamples), reach the optimum to machine
    precision in a few steps where one L-BFGS-B call per resample took a tenth of a second.
    """
    w = np.zeros((len(y), 2))

    def loss(v: np.ndarray, rows: np.ndarray) -> np.ndarray:
        logit = v[:, :1] + v[:, 1:] * z[rows]
        # -y log p - (1 - y) log(1 - p) = log(1 + e^t) - y t, computed without overflow
        return (np.logaddexp(0.0, logit) - y[rows] * logit).sum(axis=1) + ridge * (v * v).sum(axis=1)

    active = np.arange(len(y))
    current = loss(w, active)
    for _ in range(max_steps):
        v, yy, zz = w[active], y[active], z[active]
        p = 1.0 / (1.0 + np.exp(-(v[:, :1] + v[:, 1:] * zz)))
        g = p - yy
        grad = np.stack([g.sum(axis=1), (g * zz).sum(axis=1)], axis=1) + 2 * ridge * v
        c = p * (1 - p)
        haa, hab, hbb = c.sum(axis=1) + 2 * ridge, (c * zz).sum(axis=1), (c * zz * zz).sum(axis=1) + 2 * ridge
        det = haa * hbb - hab * hab
        step = np.stack([hbb * grad[:, 0] - hab * grad[:, 1], haa * grad[:, 1] - hab * grad[:, 0]], axis=1) / det[:, None]
        t = np.ones(len(active))
        slope = (grad * step).sum(axis=1)
        for _ in range(60):  # halve a row's step until its loss falls (Armijo)
            new = loss(v - t[:, None] * step, active)
            short = (new > current[active] - 1e-4 * t * slope) & (new - current[active] > 1e-12 * np.abs(new))
            if not short.any():
                break
            t[short] *= 0.5
        w[active] = v - t[:, None] * step
        current[active] = new
        active = active[np.abs(step).max(axis=1) >= 1e-10]
        if not len(active):
            return w
    raise ArithmeticError(f"logistic fit did not converge in {max_steps} Newton steps")
