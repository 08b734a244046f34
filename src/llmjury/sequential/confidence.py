"""Confidence sequences for the mean of bounded values, by betting (Waudby-Smith & Ramdas 2023).

A fixed-n interval is valid at one sample size chosen in advance: looked at after every batch and
acted on at the first look that excludes a threshold, a 95% interval fails far more than 5% of
unchanged pull requests. A confidence sequence holds at every sample size at once,
P(for all t: mean in C_t) >= 1 - alpha, so a run may stop at any look it likes.

Why betting: of the constructions for bounded values (Hoeffding, empirical Bernstein, betting),
the hedged capital process of Waudby-Smith & Ramdas ("Estimating means of bounded random variables
by betting", JRSS-B 2023, Theorem 3 with their predictable plug-in bets) adapts to the variance
like empirical Bernstein and is uniformly tighter than it in their experiments; rates near 0 or 1
and paired deltas that are mostly 0 (low variance) are where a CI gate stops earliest. It costs a
grid of candidate means, computed at once with numpy: every candidate's log-capital is a
cumulative sum over the observations.

For each candidate mean m, two gamblers bet that the mean is above and below m with predictable
stakes lambda_i (chosen from observations before i, truncated at c/m and c/(1-m) so capital never
goes negative). Under the true mean the hedged capital max(K+, K-)/2 is a nonnegative
supermartingale, so by Ville's inequality it ever exceeds 1/alpha with probability at most alpha:
the candidates whose capital stays below 1/alpha form the sequence. Its running intersection is
still valid, and its width never grows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Candidate means on [0, 1]: bounds are reported on this grid, rounded outward (conservative).
GRID_POINTS = 2001
#: The truncation of the bets (WSR's c in (0, 1); 1/2 is their default).
TRUNCATION = 0.5
#: Observations per block of the computation (memory is runs x block x grid).
TIME_BLOCK = 256


@dataclass(frozen=True)
class ConfidenceSequence:
    """A confidence sequence's bounds after each observation (on the values' own scale)."""

    low: np.ndarray
    high: np.ndarray
    alpha: float

    def at(self, t: int) -> tuple[float, float]:
        """The bounds after the first `t` observations (t >= 1); before any, the whole scale."""
        return float(self.low[t - 1]), float(self.high[t - 1])


def predictable_bets(x: np.ndarray, alpha: float) -> np.ndarray:
    """WSR's predictable plug-in stakes (their eq. 26 before truncation), for values in [0, 1]:
    lambda_t = sqrt(2 log(2/alpha) / (sigma2_{t-1} t log(1+t))), with the running mean and variance
    started at 1/2 and 1/4. `x` may be 2-D (runs by observations): computed along the last axis."""
    t = np.arange(1, x.shape[-1] + 1, dtype=float)
    mean = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)
    var = (0.25 + np.cumsum((x - mean) ** 2, axis=-1)) / (t + 1)
    before = np.concatenate([np.full((*x.shape[:-1], 1), 0.25), var[..., :-1]], axis=-1)
    return np.sqrt(2 * math.log(2 / alpha) / (before * t * np.log1p(t)))


def betting_bounds(x: np.ndarray, alpha: float = 0.05, grid_points: int = GRID_POINTS,
                   looks: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Running-intersection bounds of the hedged betting sequence for values in [0, 1].

    `x` is 1-D (one run) or 2-D (runs by observations, for simulations); bounds come back as
    (runs, observations), at every observation or only at the 1-based counts in `looks` (the
    running intersection is still taken over every observation). Observations are taken in blocks
    of TIME_BLOCK, carrying each candidate's capital, so memory is runs x TIME_BLOCK x grid."""
    x = np.atleast_2d(np.asarray(x, dtype=float))
    if x.size and (x.min() < 0 or x.max() > 1):
        raise ValueError("betting_bounds: values must lie in [0, 1]")
    runs, steps = x.shape
    grid = np.linspace(0.0, 1.0, grid_points)
    step = grid[1] - grid[0]
    up_cap = TRUNCATION / np.maximum(grid, 1e-12)  # bets never risk more than capital can pay
    down_cap = TRUNCATION / np.maximum(1 - grid, 1e-12)
    threshold = math.log(2 / alpha)  # hedged capital max(K+, K-)/2 >= 1/alpha
    bets = predictable_bets(x, alpha)
    log_up = np.zeros((runs, 1, grid_points))
    log_down = np.zeros((runs, 1, grid_points))
    alive = np.ones((runs, 1, grid_points), dtype=bool)
    low, high = np.empty((runs, steps)), np.empty((runs, steps))
    for start in range(0, steps, TIME_BLOCK):
        block = slice(start, min(start + TIME_BLOCK, steps))
        lam = bets[:, block, None]
        centred = x[:, block, None] - grid
        log_up = log_up[:, -1:] + np.cumsum(np.log1p(np.minimum(lam, up_cap) * centred), axis=1)
        log_down = log_down[:, -1:] + np.cumsum(np.log1p(-np.minimum(lam, down_cap) * centred), axis=1)
        inside = np.logical_and.accumulate((np.maximum(log_up, log_down) < threshold) & alive, axis=1)
        alive = inside[:, -1:]
        found = inside.any(axis=2)
        first = np.argmax(inside, axis=2)
        last = grid_points - 1 - np.argmax(inside[..., ::-1], axis=2)
        # rounded outward to the next grid point: the true bound lies between two candidates
        low[:, block] = np.where(found, np.maximum(grid[first] - step, 0.0), np.nan)
        high[:, block] = np.where(found, np.minimum(grid[last] + step, 1.0), np.nan)
    if looks is not None:
        index = np.asarray(looks, dtype=int) - 1
        low, high = low[:, index], high[:, index]
    return low, high


def confidence_sequence(values: np.ndarray | Sequence[float], scale: tuple[float, float],
                        confidence: float = 0.95) -> ConfidenceSequence:
    """The sequence for the mean of `values` (in their order), each known to lie in `scale`."""
    lo, hi = scale
    if not hi > lo:
        raise ValueError(f"confidence_sequence: the scale [{lo}, {hi}] is empty")
    array = np.asarray(values, dtype=float)
    outside = np.flatnonzero((array < lo) | (array > hi))
    if outside.size:
        raise ValueError(f"confidence_sequence: value {array[outside[0]]:g} (at {int(outside[0])}) lies outside "
                         f"the scale [{lo:g}, {hi:g}]")
    alpha = 1 - confidence
    if array.size == 0:
        return ConfidenceSequence(np.empty(0), np.empty(0), alpha)
    low, high = betting_bounds((array - lo) / (hi - lo), alpha)
    return ConfidenceSequence(lo + low[0] * (hi - lo), lo + high[0] * (hi - lo), alpha)
