"""Ratings from battle outcomes: online Elo and Bradley-Terry, with bootstrap intervals.

Outcomes are `model_a`, `model_b`, `tie` or `tie (bothbad)`; a tie counts as half a win for
each side (FastChat's convention). Bradley-Terry is fitted by maximum likelihood on pair counts
(battles aggregated first), so a million battles cost no more than a few thousand, and its
bootstrap resamples those counts from a multinomial. Online Elo depends on the order of the
battles: it runs in the order given (callers sort records first), and its bootstrap reruns it
on resampled battles.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

K_FACTOR, SCALE, BASE, INIT = 4.0, 400.0, 10.0, 1000.0
WINNERS = ("model_a", "model_b", "tie", "tie (bothbad)")
SCORE_A = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5, "tie (bothbad)": 0.5}


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


def online_elo(battles: Battles, *, k: float = K_FACTOR, scale: float = SCALE, base: float = BASE,
               init: float = INIT, order: np.ndarray | None = None) -> np.ndarray:
    """FastChat's online Elo, one update per battle in the given order (or `order`)."""
    ratings = [init] * len(battles.models)
    if order is None:
        a, b, s = battles.a.tolist(), battles.b.tolist(), battles.score_a.tolist()
    else:  # gather with numpy first: a sequential Python loop is several times faster than random access
        a, b, s = battles.a[order].tolist(), battles.b[order].tolist(), battles.score_a[order].tolist()
    log_base = math.log(base) / scale
    exp = math.exp
    for ia, ib, score in zip(a, b, s, strict=True):
        ra, rb = ratings[ia], ratings[ib]
        delta = k * (score - 1.0 / (1.0 + exp((rb - ra) * log_base)))
        ratings[ia] = ra + delta
        ratings[ib] = rb - delta
    return np.array(ratings)


def win_counts(battles: Battles) -> np.ndarray:
    """W[i, j]: wins of model i over model j, ties counting half to each."""
    m = len(battles.models)
    wins = np.zeros((m, m))
    np.add.at(wins, (battles.a, battles.b), battles.score_a)
    np.add.at(wins, (battles.b, battles.a), 1.0 - battles.score_a)
    return wins


def bradley_terry(wins: np.ndarray, *, scale: float = SCALE, base: float = BASE, init: float = INIT,
                  anchor: tuple[int, float] | None = None) -> np.ndarray:
    """Maximum-likelihood ratings on the Elo scale from a pair-count matrix.

    A very small ridge keeps the fit finite when a model never lost; ratings are then shifted so
    their mean is `init`, or so that model `anchor[0]` sits at `anchor[1]`.
    """
    m = wins.shape[0]
    alpha = math.log(base) / scale
    ridge = 1e-6 * max(wins.sum(), 1.0) * alpha * alpha

    def loss(beta: np.ndarray) -> tuple[float, np.ndarray]:
        diff = alpha * (beta[:, None] - beta[None, :])
        log_p = -np.logaddexp(0.0, -diff)  # log sigmoid
        value = -(wins * log_p).sum() + ridge * (beta @ beta)
        g = wins * (1.0 - special.expit(diff)) * alpha
        grad = -(g.sum(axis=1) - g.sum(axis=0)) + 2 * ridge * beta
        return value, grad

    games = wins + wins.T

    def hessian(beta: np.ndarray) -> np.ndarray:
        s = special.expit(alpha * (beta[:, None] - beta[None, :]))
        weights = alpha * alpha * games * s * (1.0 - s)
        return np.diag(weights.sum(axis=1) + 2 * ridge) - weights

    # Strictly convex (the ridge), so a trust-region Newton method with the exact Hessian reaches the
    # optimum to machine precision: ratings then do not depend on how models are ordered or named.
    result = optimize.minimize(loss, np.zeros(m), jac=True, hess=hessian, method="trust-exact",
                               options={"gtol": 1e-10, "maxiter": 500})
    beta = result.x
    shift = anchor[1] - beta[anchor[0]] if anchor else init - beta.mean()
    return beta + shift


def predicted_win_rates(ratings: np.ndarray, *, scale: float = SCALE, base: float = BASE) -> np.ndarray:
    """P[i, j]: the chance model i beats model j implied by the ratings."""
    return 1.0 / (1.0 + base ** ((ratings[None, :] - ratings[:, None]) / scale))


def empirical_win_rates(battles: Battles) -> np.ndarray:
    """Observed share of wins (ties half) of model i against model j; NaN where they never met."""
    wins = win_counts(battles)
    games = wins + wins.T
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(games > 0, wins / games, np.nan)


def bootstrap_bradley_terry(battles: Battles, *, rounds: int = 200, seed: int = 0,
                            anchor: tuple[int, float] | None = None) -> np.ndarray:
    """`rounds` x models ratings, each fitted on a multinomial resample of the battle counts."""
    m = len(battles.models)
    cells = (battles.a * m + battles.b) * 3 + np.rint(battles.score_a * 2).astype(np.int64)
    keys, counts = np.unique(cells, return_counts=True)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(len(battles), counts / counts.sum(), size=rounds)
    a, rest = np.divmod(keys // 3, m)
    score = (keys % 3) / 2.0
    out = np.empty((rounds, m))
    for r in range(rounds):
        wins = np.zeros((m, m))
        np.add.at(wins, (a, rest), draws[r] * score)
        np.add.at(wins, (rest, a), draws[r] * (1.0 - score))
        out[r] = bradley_terry(wins, anchor=anchor)
    return out


def permuted_elo(battles: Battles, *, permutations: int = 20, seed: int = 0) -> np.ndarray:
    """Online Elo averaged over seeded random orders of the same battles: one order's accident
    (which battles happened to come last) no longer decides the rating."""
    rng = np.random.default_rng(seed)
    n = len(battles)
    return np.mean([online_elo(battles, order=rng.permutation(n)) for _ in range(permutations)], axis=0)


def bootstrap_elo(battles: Battles, *, rounds: int = 20, seed: int = 0) -> np.ndarray:
    """`rounds` x models online Elo ratings on battles resampled with replacement."""
    rng = np.random.default_rng(seed)
    n = len(battles)
    return np.stack([online_elo(battles, order=rng.integers(0, n, size=n)) for _ in range(rounds)])


def interval(samples: np.ndarray, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval per column."""
    tail = (1.0 - confidence) / 2 * 100
    return np.percentile(samples, tail, axis=0), np.percentile(samples, 100 - tail, axis=0)
