"""Meta-evaluation: how well predicted scores track human scores.

Pearson r, Spearman rho and Kendall tau (tau-b), equal to scipy's (llmjury.correlation), two ways: pooled
over all items (seed 004's way), and per dialogue context then averaged (the G-Eval paper's turn-level protocol;
contexts where either side is constant are skipped). Pooled intervals bootstrap items; per-context
intervals bootstrap contexts; system-level intervals bootstrap systems. Every bootstrap draws
CORRELATION_RESAMPLES resamples for all three coefficients, and every view gives its figure no
interval below one minimum (MIN_CORRELATION_N items, contexts or systems) and says so. A
system-level correlation (per-system means) is added when items name at least three systems.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from llmjury.correlation import MIN_CORRELATION_N, kendall_leave_one_out, kendall_tau_b, resample_ranks
from llmjury.correlation import correlations as stats_correlations
from llmjury.families.geval.results import DeepevalResult, MetaEvaluation, ScoreResult
from llmjury.intervals import CORRELATION_RESAMPLES, bca_interval
from llmjury.judgement.verdicts import Verdict
from llmjury.stats import metric, too_few

KINDS = ("pearson", "spearman", "kendall")
RESAMPLES = CORRELATION_RESAMPLES
#: Leave-one-out fits the BCa acceleration is estimated from (a seeded subset above this many items).
LEAVE_ONE_OUT = 200


def correlations(predicted: npt.ArrayLike, human: npt.ArrayLike) -> dict[str, float]:
    """The three coefficients; NaN where one side is constant."""
    return stats_correlations(np.asarray(predicted, dtype=float), np.asarray(human, dtype=float))


def pooled(predicted: np.ndarray, human: np.ndarray, seed: int = 0) -> dict[str, Any]:
    """Pooled coefficients with a paired item bootstrap (BCa): the same RESAMPLES resamples for all
    three, Kendall's from each resample's item counts. Fewer than MIN_CORRELATION_N items get no
    interval, and the method says so."""
    return _bootstrapped(predicted, human, seed, "pooled", "item")


def _bootstrapped(predicted: np.ndarray, human: np.ndarray, seed: int, view: str, unit: str) -> dict[str, Any]:
    """The three coefficients of paired values with a BCa bootstrap over those units: one set of
    RESAMPLES resamples for all three, the acceleration from up to LEAVE_ONE_OUT leave-one-out fits."""
    point = correlations(predicted, human)
    n = len(predicted)
    if n < MIN_CORRELATION_N:
        return {kind: metric(point[kind], None, None, n, f"{view}; {too_few(n)}") for kind in KINDS}
    rng = np.random.default_rng(seed)
    draws = _coefficients(predicted, human, rng.integers(0, n, size=(RESAMPLES, n)))
    left_out = np.arange(n) if n <= LEAVE_ONE_OUT else np.sort(rng.choice(n, LEAVE_ONE_OUT, replace=False))
    kept = np.arange(n - 1)[None, :]
    jackknife = _coefficients(predicted, human, kept + (kept >= left_out[:, None]), kendall=False)
    jackknife["kendall"] = kendall_leave_one_out(predicted, human)
    out = {}
    for kind in KINDS:
        bounds = bca_interval(draws[kind], point[kind], jackknife[kind], items=n)
        low, high = bounds if bounds is not None else (None, None)
        out[kind] = metric(point[kind], low, high, n, f"{view}, {unit} bootstrap (BCa, {RESAMPLES} resamples)")
    return out


#: Resamples whose coefficients are computed at once: each array derived from a block of them holds
#: about a million cells (8 MB), whatever the number of items; every row is its own, so the figures
#: do not depend on it.
BLOCK_CELLS = 1_000_000


def _coefficients(predicted: np.ndarray, human: np.ndarray, index: np.ndarray, *,
                  kendall: bool = True) -> dict[str, np.ndarray]:
    """Pearson, Spearman and (unless told not to) Kendall of the items each row of `index` draws
    (Kendall's from each row's item counts), a block of rows at a time."""
    rows = max(1, BLOCK_CELLS // max(1, index.shape[1]))
    blocks = [_block_coefficients(predicted, human, index[start:start + rows], kendall=kendall)
              for start in range(0, max(1, len(index)), rows)]
    return {kind: np.concatenate([block[kind] for block in blocks]) for kind in blocks[0]}


def _block_coefficients(predicted: np.ndarray, human: np.ndarray, index: np.ndarray, *,
                        kendall: bool) -> dict[str, np.ndarray]:
    out = {"pearson": _rowwise_pearson(predicted[index], human[index]),
           "spearman": _rowwise_pearson(resample_ranks(predicted, index), resample_ranks(human, index))}
    if kendall:
        out["kendall"] = kendall_tau_b(predicted, human, _draw_counts(index, len(predicted)))
    return out


def _draw_counts(index: np.ndarray, items: int) -> np.ndarray:
    """How often each row of `index` draws each item: one bincount over the rows' cells numbered
    apart (`np.add.at` on the same cells took five times as long)."""
    cells = index + (np.arange(len(index)) * items)[:, None]
    return np.bincount(cells.ravel(), minlength=len(index) * items).reshape(len(index), items).astype(float)


def _rowwise_pearson(x: np.ndarray, y: np.ndarray) -> npt.NDArray[np.float64]:
    x = x - x.mean(axis=1, keepdims=True)
    y = y - y.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        r: npt.NDArray[np.float64] = (x * y).sum(axis=1) / np.sqrt((x * x).sum(axis=1) * (y * y).sum(axis=1))
    return r


def per_context(predicted: np.ndarray, human: np.ndarray, groups: Sequence[str], seed: int = 0) -> dict[str, Any]:
    """Correlation within each context, averaged over the contexts where both sides vary."""
    by_group: dict[str, list[int]] = defaultdict(list)
    for i, g in enumerate(groups):
        by_group[g].append(i)
    per = []
    for indices in by_group.values():
        p, h = predicted[indices], human[indices]
        if len(indices) > 1 and np.ptp(p) > 0 and np.ptp(h) > 0:
            per.append(correlations(p, h))
    out: dict[str, Any] = {"contexts_used": len(per), "contexts": len(by_group)}
    rng = np.random.default_rng(seed)
    for kind in KINDS:
        values = np.array([c[kind] for c in per])
        if len(values) == 0:
            out[kind] = metric(None, None, None, 0, "per context, averaged")
            continue
        method = "per context, averaged"
        if len(values) < MIN_CORRELATION_N:
            out[kind] = metric(values.mean(), None, None, len(values), f"{method}; {too_few(len(values))}")
            continue
        draws = rng.choice(values, size=(RESAMPLES, len(values)), replace=True).mean(axis=1)
        out[kind] = metric(values.mean(), np.percentile(draws, 2.5), np.percentile(draws, 97.5), len(values),
                           f"{method}; context bootstrap ({RESAMPLES} resamples)")
    return out


def system_level(predicted: np.ndarray, human: np.ndarray, systems: Sequence[str | None]) -> dict[str, Any] | None:
    """Correlation of per-system mean scores (needs three or more systems)."""
    named = [s for s in systems if s is not None]
    names = sorted({s for s in named if s})
    if len(names) < 3 or len(named) < len(systems):
        return None
    index = np.array([names.index(s) for s in named])
    p = np.array([predicted[index == k].mean() for k in range(len(names))])
    h = np.array([human[index == k].mean() for k in range(len(names))])
    return _bootstrapped(p, h, 0, "system level (per-system means)", "system")


def meta_evaluate(verdicts: Sequence[Verdict], seed: int = 0) -> MetaEvaluation:
    """All three views for one judge x dataset x task x criterion group of typed verdicts: the valid
    ones with a score and a human rating are scored, the rest counted as unscored."""
    scored = [(v.result, v.attributes) for v in verdicts if v.valid and v.attributes.get("human") is not None
              and isinstance(v.result, ScoreResult | DeepevalResult)]
    return evaluate(np.array([float(result.score) for result, _ in scored]),
                    np.array([float(a["human"]) for _, a in scored]),
                    [a.get("context_id") for _, a in scored], [a.get("system_id") for _, a in scored],
                    [result.method for result, _ in scored], len(verdicts) - len(scored), seed)


def evaluate(predicted: np.ndarray, human: np.ndarray, groups: Sequence[str | None],
             systems: Sequence[str | None], methods: Sequence[str] = (), unscored: int = 0,
             seed: int = 0) -> MetaEvaluation:
    """The meta-evaluation of predicted against human scores: pooled (from three items), per context
    (when contexts repeat) and at system level (three or more systems)."""
    out: dict[str, Any] = {"items": len(predicted), "unscored": unscored}
    if len(predicted) < 3:
        return MetaEvaluation.model_validate(out)
    out["pooled"] = pooled(predicted, human, seed)
    if len(set(groups)) < len(groups):
        out["per_context"] = per_context(predicted, human, [str(g) for g in groups], seed)
    level = system_level(predicted, human, systems)
    if level:
        out["system_level"] = level
    if methods:
        out["methods"] = dict(Counter(methods))
    return MetaEvaluation.model_validate(out)
