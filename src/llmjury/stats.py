"""Intervals and tests for the figures in reports; scipy does the statistics, this names them.

Every metric is reported as `{"value", "low", "high", "n", "method"}` so gates and renderers
treat a win rate, a rating and a correlation alike.
"""

from __future__ import annotations

import math
import warnings
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
        step = np.stack([hbb * grad[:, 0] - hab * grad[:, 1], haa * grad[:, 1] - hab * grad[:, 0]], axis=1)
        step /= det[:, None]
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


#: Columns of the pair-sign matrix built at a time: bounds kendall_tau_b's memory to items x 2048.
SIGN_BLOCK = 2048
#: Above this many items the pair-sign products (resamples x items^2) cost more than one scipy call
#: (items log items) per resample, so kendall_tau_b makes those calls instead.
PAIRWISE_ITEMS = 4000


def correlations(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Pearson r, Spearman rho and Kendall tau-b, equal to scipy's, NaN where one side is constant.

    Written with numpy because scipy's three calls cost about 3 ms together however short the
    input, and a meta-evaluation asks for them once per dialogue context, a thousand times a run.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return {"pearson": _pearson(x, y), "spearman": _pearson(_average_ranks(x), _average_ranks(y)),
            "kendall": float(kendall_tau_b(x, y, np.ones((1, len(x))))[0])}


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    dx, dy = x - x.mean(), y - y.mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (dx @ dy) / math.sqrt((dx @ dx) * (dy @ dy)) if len(x) else math.nan
    return float(np.clip(r, -1.0, 1.0))


def resample_ranks(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """`scipy.stats.rankdata(values[index], axis=1)` (average ranks) without sorting any row: a
    resample's ranks follow from how often it drew each distinct value, counted in one bincount."""
    values, index = np.asarray(values, dtype=float), np.atleast_2d(index)
    order = np.argsort(values, kind="stable")
    level = np.empty(len(values), dtype=np.int64)
    level[order] = np.r_[0, np.cumsum(np.diff(values[order]) != 0)]
    levels, rows = int(level.max()) + 1 if len(values) else 0, len(index)
    drawn = level[index]
    counts = np.bincount((np.arange(rows)[:, None] * levels + drawn).ravel(), minlength=rows * levels)
    counts = counts.reshape(rows, levels)
    mean_rank = np.cumsum(counts, axis=1) - counts + (counts + 1) / 2
    return np.take_along_axis(mean_rank, drawn, axis=1)


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks from 1, ties sharing their mean rank (scipy.stats.rankdata's default)."""
    order = np.argsort(values, kind="stable")
    starts = np.r_[0, np.flatnonzero(np.diff(values[order])) + 1]
    ends = np.r_[starts[1:], len(values)]
    ranks = np.empty(len(values))
    ranks[order] = np.repeat((starts + ends + 1) / 2, ends - starts)
    return ranks


def kendall_tau_b(x: np.ndarray, y: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of `x` against `y` for every row of `counts` (how often each item is drawn),
    equal to `scipy.stats.kendalltau` on the items so drawn; NaN where one side is constant.

    A bootstrap's resamples become weights on the original items, so all of them cost a few matrix
    products over the items' pair signs instead of one scipy call per resample: with w the counts,
    tau-b = w'Sw / sqrt(w'Ax w * w'Ay w), S the product of the pairs' signs and Ax, Ay 1 where a
    pair differs on that side.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    w = np.atleast_2d(np.asarray(counts, dtype=float))
    if len(x) > PAIRWISE_ITEMS:
        from scipy import stats

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy warns on a constant side; NaN says it
            drawn = [np.repeat(np.arange(len(x)), row.astype(np.int64)) for row in w]
            return np.array([stats.kendalltau(x[items], y[items]).statistic for items in drawn])
    # Signs and counts are small integers, so float32 products and sums stay exact (below 2^24).
    w32 = w.astype(np.float32)
    concordance = np.zeros(len(w))
    for start in range(0, len(x), SIGN_BLOCK):
        block = slice(start, start + SIGN_BLOCK)
        signs = np.sign(x[:, None] - x[None, block]) * np.sign(y[:, None] - y[None, block])
        concordance += ((w32 @ signs.astype(np.float32)).astype(float) * w[:, block]).sum(axis=1)
    total = w.sum(axis=1) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return concordance / np.sqrt((total - _tied_pairs(x, w)) * (total - _tied_pairs(y, w)))


def _tied_pairs(values: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Ordered pairs of drawn items (an item with itself included) that share a value, per row."""
    order = np.argsort(values, kind="stable")
    starts = np.r_[0, np.flatnonzero(np.diff(values[order])) + 1]
    return (np.add.reduceat(w[:, order], starts, axis=1) ** 2).sum(axis=1)
