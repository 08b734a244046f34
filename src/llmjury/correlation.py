"""Correlations between judges and people (Pearson, Spearman, Kendall tau-b) and their resampling,
with numpy, equal to scipy's: a meta-evaluation asks for them once per context, a thousand times a run."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np

#: Fewer items than this give a correlation no interval: a bootstrap over 5 items drew the same
#: few orders again and again (0.935 [0.935, 0.935]), and Fisher's z needs more than 3 to exist.
MIN_CORRELATION_N = 10
#: Cells of the pair-sign matrix built at a time (items x a block of columns): bounds each of
#: kendall_tau_b's arrays to about 8 MB, whatever the number of items. Its figures are sums of small
#: integers, exact in any grouping, so they do not depend on it.
SIGN_CELLS = 1_000_000
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


def rank_correlation(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Spearman's rho and Kendall's tau-b with their two-sided p-values, equal to scipy.stats'
    `spearmanr` and `kendalltau` (its exact null distribution without ties up to 33 items, the
    normal approximation otherwise); NaN where a side is constant (and rho's p for two items).

    For two leaderboards' ratings of a few dozen models: the pairs are counted directly, and
    only scipy.special is imported (for Student's t), not all of scipy.stats, a second at report time.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(x)
    nan = {"spearman": math.nan, "spearman_p": math.nan, "kendall": math.nan, "kendall_p": math.nan}
    if n < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return nan
    from scipy.special import stdtr

    rho = _pearson(_average_ranks(x), _average_ranks(y))
    dof = n - 2
    t = rho * math.sqrt(max(dof / ((rho + 1.0) * (1.0 - rho)), 0.0)) if abs(rho) < 1 else math.copysign(math.inf, rho)
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    sx, sy = np.sign(x[:, None] - x[None, :])[upper], np.sign(y[:, None] - y[None, :])[upper]
    pairs = n * (n - 1) // 2
    discordant, x_ties, y_ties = int((sx * sy < 0).sum()), int((sx == 0).sum()), int((sy == 0).sum())
    both_ties = int(((sx == 0) & (sy == 0)).sum())
    difference = pairs - x_ties - y_ties + both_ties - 2 * discordant
    tau = min(1.0, max(-1.0, difference / math.sqrt(pairs - x_ties) / math.sqrt(pairs - y_ties)))
    if not x_ties and not y_ties and (n <= 33 or min(discordant, pairs - discordant) <= 1):
        tau_p = _kendall_exact_p(n, pairs - discordant)
    else:
        (x0, x1), (y0, y1) = _tie_sums(x), _tie_sums(y)
        m = n * (n - 1.0)
        var = (m * (2 * n + 5) - x1 - y1) / 18 + (2 * x_ties * y_ties) / m + x0 * y0 / (9 * m * (n - 2))
        tau_p = math.erfc(abs(difference / math.sqrt(var)) / math.sqrt(2))
    return {"spearman": rho, "spearman_p": float(2 * stdtr(dof, -abs(t))), "kendall": tau, "kendall_p": tau_p}


def _tie_sums(values: np.ndarray) -> tuple[int, int]:
    """sum t(t-1)(t-2) and sum t(t-1)(2t+5) over the sizes t of tied groups (tau's variance)."""
    _, sizes = np.unique(values, return_counts=True)
    t = [int(size) for size in sizes if size > 1]
    return sum(s * (s - 1) * (s - 2) for s in t), sum(s * (s - 1) * (2 * s + 5) for s in t)


def _kendall_exact_p(n: int, concordant: int) -> float:
    """Two-sided p of Kendall's tau without ties: twice the share of the n! orders with at most
    min(concordant, discordant) inversions, counted exactly (Mahonian numbers), capped at 1."""
    c = min(concordant, n * (n - 1) // 2 - concordant)
    if n <= 2 or 4 * c == n * (n - 1):
        return 1.0
    orders = [1]  # orders of 1 item, by inversions (up to c)
    for j in range(2, n + 1):  # item j adds 0 to j - 1 inversions
        running = [0, *itertools.accumulate(orders)]
        orders = [running[min(k, len(orders) - 1) + 1] - running[max(0, k - j + 1)]
                  for k in range(min(c, len(orders) + j - 2) + 1)]
    return min(1.0, 2 * sum(orders) / math.factorial(n))


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


def bootstrap_spearman(x: np.ndarray, y: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Spearman's rho of `x[i]` against `y[i]` for every row `i` of `index` (a bootstrap's
    resamples), equal to scipy's `spearmanr` on each; NaN where a resample drew one value of a side."""
    rx, ry = resample_ranks(x, index), resample_ranks(y, index)
    dx, dy = rx - rx.mean(axis=1, keepdims=True), ry - ry.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (dx * dy).sum(axis=1) / np.sqrt((dx * dx).sum(axis=1) * (dy * dy).sum(axis=1))
    constant = (np.ptp(rx, axis=1) == 0) | (np.ptp(ry, axis=1) == 0)
    return np.where(constant, np.nan, np.clip(rho, -1.0, 1.0))


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
    columns = _sign_columns(len(x))
    for start in range(0, len(x), columns):
        block = slice(start, start + columns)
        signs = np.sign(x[:, None] - x[None, block]) * np.sign(y[:, None] - y[None, block])
        concordance += ((w32 @ signs.astype(np.float32)).astype(float) * w[:, block]).sum(axis=1)
    total = w.sum(axis=1) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        tau: np.ndarray = concordance / np.sqrt((total - _tied_pairs(x, w)) * (total - _tied_pairs(y, w)))
    return tau


def _sign_columns(items: int) -> int:
    """How many columns (or rows) of the items' pair-sign matrix keep a block within SIGN_CELLS."""
    return max(1, SIGN_CELLS // max(1, items))


def _tied_pairs(values: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Ordered pairs of drawn items (an item with itself included) that share a value, per row."""
    order = np.argsort(values, kind="stable")
    starts = np.r_[0, np.flatnonzero(np.diff(values[order])) + 1]
    tied: np.ndarray = (np.add.reduceat(w[:, order], starts, axis=1) ** 2).sum(axis=1)
    return tied


def kendall_leave_one_out(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of `x` against `y` without item i, for every i, in one pass over the pair
    signs: leaving item i out removes its row and column of the sign products (twice its row sum)
    and one from its tie groups, so all n values cost what one tau costs (a jackknife's input)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(x)
    row = np.zeros(n)
    lines = _sign_columns(n)
    for start in range(0, n, lines):
        block = slice(start, start + lines)
        row[block] = (np.sign(x[block, None] - x[None, :]) * np.sign(y[block, None] - y[None, :])).sum(axis=1)
    concordance = row.sum() - 2 * row
    total = float(n - 1) ** 2

    def tied(values: np.ndarray) -> np.ndarray:
        _, inverse, sizes = np.unique(values, return_inverse=True, return_counts=True)
        return float((sizes.astype(float) ** 2).sum()) - (2 * sizes[inverse] - 1)

    with np.errstate(invalid="ignore", divide="ignore"):
        tau: np.ndarray = concordance / np.sqrt((total - tied(x)) * (total - tied(y)))
    return tau
