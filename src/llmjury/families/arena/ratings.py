"""Ratings from battle outcomes: online Elo and Bradley-Terry, with bootstrap intervals.

Outcomes are `model_a`, `model_b`, `tie` or `tie (bothbad)`; a tie counts as half a win for
each side (FastChat's convention). Bradley-Terry is fitted by maximum likelihood on pair counts
(battles aggregated first), so a million battles cost no more than a few thousand, and its
bootstrap resamples those counts from a multinomial and fits every round at once. Online Elo
depends on the order of the battles: it runs in the order given (callers sort records first), and
its bootstrap reruns the same estimator (an average over random orders) on resampled battles.

Online Elo is a sequential recursion that numpy cannot vectorise along the battles, but a
bootstrap's passes run side by side: one numpy step moves every pass by one battle. Very long
passes run one by one instead. Large passes are compiled with
numba (the well-kept LLVM JIT of the numpy world, cached on disk after the first call): about a
hundred times faster than the same loop in Python, with the same arithmetic. Importing numba and
loading the compiled pass costs about a second, though, which is four million updates of the
plain loop over Python lists: a run's leaderboards (under a million updates) use the loop.
numba is an optional extra (`pip install 'llmjury[fast]'`); without it every pass runs the loop.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, MutableSequence, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from llmjury.stats import damped_newton

K_FACTOR, SCALE, BASE, INIT = 4.0, 400.0, 10.0, 1000.0
WINNERS = ("model_a", "model_b", "tie", "tie (bothbad)")
SCORE_A = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5, "tie (bothbad)": 0.5}
#: Newton steps allowed per fit; a fit needs about 10, one with a model that never lost about 40.
MAX_NEWTON_STEPS = 500
#: Above this many Elo updates in one call the numba-compiled pass pays for its import and load.
COMPILED_ELO_UPDATES = 4_000_000


@dataclass(frozen=True)
class Battles:
    """Battles as index arrays into `models`; `score_a` is 1, 0 or 0.5."""

    models: list[str]
    a: np.ndarray
    b: np.ndarray
    score_a: np.ndarray

    @classmethod
    def from_rows(cls, model_a: Sequence[str], model_b: Sequence[str], winner: Sequence[str],
                  models: Sequence[str] | None = None) -> Battles:
        names = sorted(set(model_a) | set(model_b)) if models is None else list(models)
        index = {m: i for i, m in enumerate(names)}
        unknown = sorted({w for w in winner if w not in SCORE_A})
        if unknown:
            raise ValueError(f"unknown winner value(s) {unknown}; expected one of {list(WINNERS)}")
        return cls(names, np.array([index[m] for m in model_a], dtype=np.int64),
                   np.array([index[m] for m in model_b], dtype=np.int64),
                   np.array([SCORE_A[w] for w in winner], dtype=np.float64))

    def __len__(self) -> int:
        return len(self.a)


def _elo_pass(cells: Sequence[int], models: int, order: Sequence[int], ratings: MutableSequence[float], k: float,
              log_base: float) -> None:
    """One online Elo pass over battles `order[0], order[1], ...`, updating `ratings` in place:
    run as it is on Python lists, or compiled by numba on arrays (`_compiled_pass`)."""
    for t in range(len(order)):
        pair, twice_score = divmod(cells[order[t]], 3)
        ia, ib = divmod(pair, models)
        ra, rb = ratings[ia], ratings[ib]
        delta = k * (twice_score * 0.5 - 1.0 / (1.0 + math.exp((rb - ra) * log_base)))
        ratings[ia] = ra + delta
        ratings[ib] = rb - delta


@cache
def _compiled_pass() -> Any:
    """The compiled pass; None where numba is not installed (it is the optional extra
    `llmjury[fast]`, 200 MB with llvmlite): every pass then runs the plain loop."""
    try:
        import numba  # imported for a large pass only: it and the cached machine code cost a second
    except ImportError:
        return None
    return numba.njit(cache=True, nogil=True)(_elo_pass)


def outcome_cells(battles: Battles) -> np.ndarray:
    """Each battle as one small integer, (a * models + b) * 3 + 2 * score_a: a resampled Elo pass
    reads these at random, and 2 bytes a battle (up to 104 models) stay in cache where three
    8-byte arrays would not."""
    twice = battles.score_a * 2
    rounded = np.rint(twice)
    if not np.array_equal(twice, rounded):
        raise ValueError("score_a must be 1, 0 or 0.5 for every battle")
    m = len(battles.models)
    dtype = np.int16 if m * m * 3 <= np.iinfo(np.int16).max else np.int64
    cells: np.ndarray = ((battles.a * m + battles.b) * 3 + rounded.astype(np.int64)).astype(dtype)
    return cells


def online_elo(battles: Battles, *, k: float = K_FACTOR, scale: float = SCALE, base: float = BASE,
               init: float = INIT, order: np.ndarray | None = None) -> np.ndarray:
    """FastChat's online Elo, one update per battle in the given order (or `order`)."""
    order = np.arange(len(battles)) if order is None else np.asarray(order)
    if len(order) and (order.min() < 0 or order.max() >= len(battles)):
        # The compiled pass reads without bounds checks: a wrong index would give made-up ratings.
        raise IndexError(f"order holds battle indices outside 0..{len(battles) - 1}")
    ratings: np.ndarray = elo_passes(battles, [order], updates=len(order), k=k, scale=scale, base=base, init=init)[0]
    return ratings


def elo_passes(battles: Battles, orders: Iterable[np.ndarray], *, updates: int, k: float = K_FACTOR,
               scale: float = SCALE, base: float = BASE, init: float = INIT) -> np.ndarray:
    """One online Elo rating vector per order of the battles (indices, repeats allowed).

    `updates` is the number the passes make in all: enough of them pay for loading the compiled
    pass, which every later call in the process then uses too. The orders are read one at a time,
    so a bootstrap's resamples are never all in memory."""
    cells, m = outcome_cells(battles), len(battles.models)
    log_base = math.log(base) / scale
    loaded = _compiled_pass.cache_info().currsize > 0
    compiled = _compiled_pass() if loaded or updates > COMPILED_ELO_UPDATES else None
    plain: list[int] = [] if compiled else cells.tolist()  # lists: Python reads their items far faster
    out = []
    for order in orders:
        if compiled is not None:
            ratings = np.full(m, float(init))
            compiled(cells, m, np.asarray(order, dtype=np.int64), ratings, float(k), log_base)
        else:
            values = [float(init)] * m
            _elo_pass(plain, m, np.asarray(order, dtype=np.int64).tolist(), values, float(k), log_base)
            ratings = np.array(values)
        out.append(ratings)
    return np.stack(out) if out else np.empty((0, m))


def win_counts(battles: Battles) -> np.ndarray:
    """W[i, j]: wins of model i over model j, ties counting half to each."""
    m = len(battles.models)
    wins = np.bincount(battles.a * m + battles.b, weights=battles.score_a, minlength=m * m)
    wins += np.bincount(battles.b * m + battles.a, weights=1.0 - battles.score_a, minlength=m * m)
    return wins.reshape(m, m)


def fit_bradley_terry(wins: np.ndarray, *, scale: float = SCALE, base: float = BASE) -> np.ndarray:
    """Maximum-likelihood strengths (rating units, mean 0) for a stack of pair-count matrices.

    `wins` is `(rounds, m, m)`; every round is fitted at once by damped Newton steps on the
    log-likelihood plus a very small ridge that keeps the fit finite when a model never lost. The
    objective is strictly convex, so each round reaches its optimum to machine precision and the
    ratings do not depend on how models are ordered or named; a 30-model Hessian is tiny, so one
    batched solve per step beats a general-purpose optimiser called once per round.
    """
    rounds, m, _ = wins.shape
    alpha = math.log(base) / scale
    ridge = 1e-6 * np.maximum(wins.sum(axis=(1, 2)), 1.0) * alpha * alpha
    games = wins + wins.transpose(0, 2, 1)
    beta = np.zeros((rounds, m))

    def loss(x: np.ndarray, rows: np.ndarray) -> np.ndarray:
        diff = alpha * (x[:, :, None] - x[:, None, :])
        per_round: np.ndarray = ((wins[rows] * np.logaddexp(0.0, -diff)).sum(axis=(1, 2))
                                 + ridge[rows] * (x * x).sum(axis=1))
        return per_round

    def newton_step(x: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        w, g, h = wins[rows], games[rows], ridge[rows]
        s = 1.0 / (1.0 + np.exp(-alpha * (x[:, :, None] - x[:, None, :])))
        lost = w * (1.0 - s) * alpha
        grad = -(lost.sum(axis=2) - lost.sum(axis=1)) + 2 * h[:, None] * x
        curvature = alpha * alpha * g * s * (1.0 - s)
        hessian = -curvature
        diagonal = np.arange(m)
        hessian[:, diagonal, diagonal] += curvature.sum(axis=2) + 2 * h[:, None]
        return grad, np.linalg.solve(hessian, grad[:, :, None])[:, :, 0]

    def converged(step: np.ndarray, x: np.ndarray) -> np.ndarray:
        # Converged once a step is below 1e-9 of the ratings' scale: where a model never lost, the
        # ratings sit far out (1000 points) and rounding alone keeps the steps near 1e-9 points.
        done: np.ndarray = np.abs(step).max(axis=1) < 1e-9 * np.maximum(1.0, np.abs(x).max(axis=1))
        return done

    fitted = damped_newton(beta, loss, newton_step, converged, max_steps=MAX_NEWTON_STEPS)
    if fitted is None:
        raise ArithmeticError(f"Bradley-Terry fit did not converge in {MAX_NEWTON_STEPS} Newton steps")
    return fitted


def bradley_terry(wins: np.ndarray, *, scale: float = SCALE, base: float = BASE, init: float = INIT,
                  anchor: tuple[int, float] | None = None) -> np.ndarray:
    """Maximum-likelihood ratings on the Elo scale from a pair-count matrix.

    Ratings are shifted so their mean is `init`, or so that model `anchor[0]` sits at `anchor[1]`.
    """
    ratings: np.ndarray = _shifted(fit_bradley_terry(wins[None], scale=scale, base=base), init, anchor)[0]
    return ratings


def _shifted(beta: np.ndarray, init: float, anchor: tuple[int, float] | None) -> np.ndarray:
    shift = anchor[1] - beta[:, anchor[0]] if anchor else init - beta.mean(axis=1)
    shifted: np.ndarray = beta + shift[:, None]
    return shifted


def predicted_win_rates(ratings: np.ndarray, *, scale: float = SCALE, base: float = BASE) -> np.ndarray:
    """P[i, j]: the chance model i beats model j implied by the ratings."""
    rates: np.ndarray = 1.0 / (1.0 + base ** ((ratings[None, :] - ratings[:, None]) / scale))
    return rates


def empirical_win_rates(battles: Battles) -> np.ndarray:
    """Observed share of wins (ties half) of model i against model j; NaN where they never met."""
    wins = win_counts(battles)
    games = wins + wins.T
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(games > 0, wins / games, np.nan)


def resampled_wins(battles: Battles, *, rounds: int, seed: int = 0) -> np.ndarray:
    """`rounds` pair-count matrices, each from a multinomial resample of the battles' outcome counts
    (the same as resampling the battles with replacement, without touching a million rows)."""
    m = len(battles.models)
    counts = np.bincount(outcome_cells(battles), minlength=m * m * 3)
    keys = np.flatnonzero(counts)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(len(battles), counts[keys] / len(battles), size=rounds).astype(np.float64)
    pair, score = keys // 3, (keys % 3) / 2.0
    a, b = np.divmod(pair, m)
    # Each outcome cell adds its score to W[a, b] and the rest to W[b, a]: one matrix product
    # turns every round's draws into its pair-count matrix.
    spread = np.zeros((len(keys), m * m))
    spread[np.arange(len(keys)), pair] += score
    spread[np.arange(len(keys)), b * m + a] += 1.0 - score
    return (draws @ spread).reshape(rounds, m, m)


def bootstrap_bradley_terry(battles: Battles, *, rounds: int = 200, seed: int = 0,
                            anchor: tuple[int, float] | None = None) -> np.ndarray:
    """`rounds` x models ratings, each fitted on a multinomial resample of the battle counts."""
    return _shifted(fit_bradley_terry(resampled_wins(battles, rounds=rounds, seed=seed)), INIT, anchor)


def jackknife_bradley_terry(battles: Battles, *, anchor: tuple[int, float] | None = None
                            ) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-battle-out ratings, one fit per distinct outcome (two battles with the same models
    and outcome leave the same counts), with how many battles each stands for: what a BCa
    interval's acceleration is computed from, in one batched fit however many battles there are."""
    m = len(battles.models)
    counts = np.bincount(outcome_cells(battles), minlength=m * m * 3)
    keys = np.flatnonzero(counts)
    pair, score = keys // 3, (keys % 3) / 2.0
    a, b = np.divmod(pair, m)
    wins = np.repeat(win_counts(battles)[None], len(keys), axis=0)
    rows = np.arange(len(keys))
    wins[rows, a, b] -= score
    wins[rows, b, a] -= 1.0 - score
    return _shifted(fit_bradley_terry(wins), INIT, anchor), counts[keys].astype(float)


def permuted_elo(battles: Battles, *, permutations: int = 20, seed: int = 0) -> np.ndarray:
    """Online Elo averaged over seeded random orders of the same battles: one order's accident
    (which battles happened to come last) no longer decides the rating."""
    rng = np.random.default_rng(seed)
    ratings: np.ndarray = order_averaged_elo(battles, rng.permutation(len(battles))[None], permutations, rng)[0]
    return ratings


def bootstrap_elo(battles: Battles, *, rounds: int = 200, orders: int = 1, seed: int = 0) -> np.ndarray:
    """`rounds` x models online Elo ratings, each on the battles resampled with replacement and
    averaged over `orders` random orders of that resample: the bootstrap of `permuted_elo` with
    `permutations=orders`, so a point and its interval come from one estimator. A resample's
    draws come in random order already: its first order is the draws as drawn."""
    rng = np.random.default_rng(seed)
    n, m = len(battles), len(battles.models)
    out = np.empty((rounds, m))
    chunk = max(1, min(LANE_CELLS // max(1, n * orders), MAX_BATCHED_PASSES // orders))
    for start in range(0, rounds, chunk):
        size = min(chunk, rounds - start)
        out[start:start + size] = order_averaged_elo(battles, rng.integers(0, n, size=(size, n)), orders, rng)
    return out


#: Battle draws held at once by a vectorised batch of Elo passes: their indices, 8 bytes a draw (32 MB;
#: twice that with more orders than one, the resample beside its shuffles), as the passes read them a
#: block of steps at a time. A batch's cost is a few numpy calls per step whatever its width, so the
#: wider the batch, the cheaper a round: 1,000 rounds of 7,000 battles in two batches took 0.43 s, in
#: eight (a million draws each) 0.91 s.
LANE_CELLS = 4_000_000
#: ... and at most this many passes: past about a thousand a step's cost grows with its width, so a
#: wider batch of short passes would only hold more (a block of steps for each pass).
MAX_BATCHED_PASSES = 4096
#: Steps of a batch whose battles are looked up at once (models and scores of every pass's draw).
STEP_BLOCK = 64
#: Fewer passes than this run one by one in the plain loop: a batch step costs about as much as
#: this many plain updates (a point estimate is one pass; numpy stepping it alone cost 0.2 s a run).
MIN_BATCHED_PASSES = 16
#: Above this many battles a pass is long enough for the compiled loop, run pass by pass, to beat
#: numpy stepping every pass of a batch at once (whose cost per battle is numpy's call overhead).
LANE_BATTLES = 200_000


def order_averaged_elo(battles: Battles, sequences: np.ndarray, orders: int, rng: np.random.Generator
                       ) -> np.ndarray:
    """For each row of `sequences` (battle indices in a random order, repeats allowed): online Elo
    averaged over that order and `orders - 1` more random orders of the same battles. The one
    estimator behind the arena's Elo figure and every one of its bootstrap rounds."""
    rows, n = sequences.shape
    lanes = sequences
    if orders > 1:
        lanes = np.concatenate([sequences, *(rng.permuted(sequences, axis=1) for _ in range(orders - 1))])
    looped = n > LANE_BATTLES or len(lanes) < MIN_BATCHED_PASSES
    ratings = elo_passes(battles, iter(lanes), updates=lanes.size) if looped else _elo_lanes(battles, lanes)
    averaged: np.ndarray = ratings.reshape(orders, rows, -1).mean(axis=0)
    return averaged


def _elo_lanes(battles: Battles, lanes: np.ndarray, *, k: float = K_FACTOR, scale: float = SCALE,
               base: float = BASE, init: float = INIT) -> np.ndarray:
    """One online Elo pass per row of `lanes`, all rows stepped together by numpy: the same
    arithmetic as `_elo_pass`, a battle of every pass per step, so a bootstrap of a few thousand
    battles costs a few thousand numpy steps instead of rounds x battles Python updates."""
    lane_count, m = len(lanes), len(battles.models)
    offset = (np.arange(lane_count) * m)[None, :]
    ratings = np.full(lane_count * m, float(init))
    log_base = math.log(base) / scale
    ra, rb, expected = np.empty(lane_count), np.empty(lane_count), np.empty(lane_count)
    for start in range(0, lanes.shape[1], STEP_BLOCK):
        drawn = lanes[:, start:start + STEP_BLOCK].T  # step-major: row t holds every pass's t-th battle
        first, second = battles.a[drawn] + offset, battles.b[drawn] + offset
        for ia, ib, won in zip(first, second, battles.score_a[drawn], strict=True):
            np.take(ratings, ia, out=ra)
            np.take(ratings, ib, out=rb)
            np.subtract(rb, ra, out=expected)
            expected *= log_base
            np.exp(expected, out=expected)
            expected += 1.0
            np.divide(1.0, expected, out=expected)
            np.subtract(won, expected, out=expected)
            expected *= k
            ratings[ia] = ra + expected
            ratings[ib] = rb - expected
    return ratings.reshape(lane_count, m)
