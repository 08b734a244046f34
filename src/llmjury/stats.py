"""Intervals and tests for the figures in reports; scipy does the statistics, this names them.

Every metric is reported as `{"value", "low", "high", "n", "method"}` so gates and renderers
treat a win rate, a rating and a correlation alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable
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


def bootstrap(
    statistic: Callable[..., float], *samples: np.ndarray, seed: int = 0, resamples: int = 2000, paired: bool = True
) -> tuple[float, float]:
    """Percentile bootstrap interval of `statistic` over the given arrays, seeded."""
    result = stats.bootstrap(
        samples, statistic, paired=paired, vectorized=False, n_resamples=resamples,
        confidence_level=CONFIDENCE, method="percentile", random_state=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)
