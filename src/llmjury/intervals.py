"""How a metric's interval is made, decided in one place from what the metric is.

A family declares what each of its metrics is (`Family.interval_kinds`, checked at start-up), and
this module names the method that holds for that kind, both for the figure in a run's summary and
for its difference from a baseline run (`llmjury.results.compare`):

| kind | a run's figure | a difference between two runs |
|---|---|---|
| `proportion` | Wilson score interval | Newcombe's paired score interval (exact McNemar test) |
| `mean` | Student t over case values (one value per case) | paired t over per-case differences |
| `smooth` | case bootstrap | delete-a-group jackknife over cases |
| `rating` | bootstrap of its estimator, 200+ rounds (BCa: Bradley-Terry; normal: Elo) | delete-a-group jackknife |
| `correlation` | item bootstrap (BCa), the same resamples for all three coefficients | delete-a-group jackknife |
| `non_smooth` | case bootstrap, or none | none, said plainly (a jackknife on a maximum is inconsistent) |
| `rank` | bootstrap order statistics (whole ranks) | none, said plainly |

A proportion or mean is compared per case only where it is checked to be the n-weighted mean of
its per-case values on both runs; a declared proportion or mean that is not (a rate over pairs
some cases lack) is a smooth statistic of the cases. A metric whose family declares nothing, and
which is no mean of per-case values, gets no interval in a comparison, and its method says why:
nothing falls back to a method that may not hold.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Literal, get_args

from llmjury.headline import covers

if TYPE_CHECKING:
    import numpy as np

# Light at import (typing and the headline paths only): the family contract reads the kinds at
# every process's start-up, and numpy loads where a report is made.

#: What a metric is, as far as its interval goes (the table above).
IntervalKind = Literal["proportion", "mean", "smooth", "rating", "correlation", "non_smooth", "rank"]
KINDS: tuple[str, ...] = get_args(IntervalKind)
#: Resamples of every correlation bootstrap: Pearson's, Spearman's and Kendall's alike.
CORRELATION_RESAMPLES = 1000
#: The fewest bootstrap rounds a rating's interval is made from (Elo and Bradley-Terry).
MIN_RATING_ROUNDS = 200
#: How a comparison finds a difference's interval, by kind, once per-case additivity is known.
Comparison = Literal["paired", "jackknife", "none"]


def declared_kind(kinds: Mapping[str, IntervalKind], steps: Sequence[str]) -> IntervalKind | None:
    """The kind a family declares for the metric at these path steps: the most specific of its
    declared paths that covers them (`rating` covers `rating[gpt-4o]`; `*` stands for any key)."""
    matching = [path for path in kinds if covers([path], steps)]
    return kinds[max(matching, key=lambda path: len(path.split(".")))] if matching else None


def comparison_method(kind: IntervalKind | None, per_case: bool) -> tuple[Comparison, str | None]:
    """How a difference of this metric between two runs gets its interval, and when it gets none,
    the reason the delta's method states."""
    if per_case:
        return "paired", None
    if kind in ("proportion", "mean", "smooth", "rating", "correlation"):
        return "jackknife", None
    if kind is None:
        return "none", ("no interval: the family does not declare what kind of metric this is "
                        "(Family.interval_kinds) and it is no mean of per-case values")
    return "none", (f"no interval: a {kind.replace('_', '-')} figure (a maximum, a rank) has no valid "
                    "re-aggregation interval; compare its values")


def grouped_jackknife(point: float, replicates: Sequence[float], deleted: Sequence[int], n: int,
                      confidence: float | None = None) -> tuple[float, float, float] | None:
    """(low, high, standard error) of a statistic from its delete-a-group replicates: replicate j
    left out `deleted[j]` of the n cases. Groups of unequal size are weighted as Busing, Meijer and
    van der Leeden (1999) derive, which is the textbook (g - 1)/g sum of squares when every group
    has n/g cases; t quantile on g - 1 degrees of freedom. None with fewer than two groups."""
    import numpy as np

    from llmjury.stats import CONFIDENCE, t_quantile

    theta = np.asarray(replicates, dtype=float)
    sizes = np.asarray(deleted, dtype=float)
    g = len(theta)
    if g < 2 or len(sizes) != g or sizes.sum() != n:
        return None
    h = n / sizes
    jackknifed = g * point - float(((1 - sizes / n) * theta).sum())
    pseudo = h * point - (h - 1) * theta
    variance = float(((pseudo - jackknifed) ** 2 / (h - 1)).sum()) / g
    se = math.sqrt(max(variance, 0.0))
    half = t_quantile(0.5 + (CONFIDENCE if confidence is None else confidence) / 2, g - 1) * se
    return point - half, point + half, se


def equal_groups(n: int, groups: int) -> list[np.ndarray]:
    """Positions 0..n-1 cut into `groups` contiguous groups whose sizes differ by at most one."""
    import numpy as np

    return [part for part in np.array_split(np.arange(n), min(n, groups)) if len(part)]


def percentile_interval(samples: np.ndarray, confidence: float = 0.95, *,
                        discrete: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap bounds per column; a `discrete` quantity keeps whole values (the lower
    order statistic below, the higher above), never an interpolation no resample gave."""
    import numpy as np

    tail = (1.0 - confidence) / 2 * 100
    if discrete:
        return (np.percentile(samples, tail, axis=0, method="lower"),
                np.percentile(samples, 100 - tail, axis=0, method="higher"))
    return np.percentile(samples, tail, axis=0), np.percentile(samples, 100 - tail, axis=0)


def case_rate(per_case: Sequence[float], what: str) -> dict[str, Any]:
    """A rate whose units within a case are not independent (runs ABA give two swapped pairs that
    share a run): each case's own rate is one value, and their mean gets a t interval over cases,
    kept in [0, 1]. `n` counts cases."""
    import numpy as np

    from llmjury.stats import CONFIDENCE, MIN_INTERVAL_N, metric, t_quantile, too_few

    values = np.asarray(per_case, dtype=float)
    n = len(values)
    method = f"{what}: mean of per-case rates, t interval over cases"
    if n == 0:
        return metric(None, None, None, 0, method)
    mean = float(values.mean())
    if n < MIN_INTERVAL_N:
        return metric(mean, None, None, n, f"{method}; {too_few(n)}")
    sd = float(values.std(ddof=1))
    if sd == 0.0:
        return metric(mean, None, None, n, f"{method}; no interval: every case alike, no spread to tell from")
    half = t_quantile(0.5 + CONFIDENCE / 2, n - 1) * sd / math.sqrt(n)
    return metric(mean, max(0.0, mean - half), min(1.0, mean + half), n, method)


def cluster_rate(successes: Sequence[int], trials: Sequence[int], what: str) -> dict[str, Any]:
    """A rate over units that come in cases (a PRD pair's two answer orders): the value counts every
    unit, as the published figure does, and the interval is the ratio estimator's over cases (each
    case's successes against its units), so units of one case are not taken as independent. `n`
    counts cases."""
    import numpy as np

    from llmjury.stats import CONFIDENCE, MIN_INTERVAL_N, metric, t_quantile, too_few

    wins, units = np.asarray(successes, dtype=float), np.asarray(trials, dtype=float)
    keep = units > 0
    wins, units = wins[keep], units[keep]
    n = len(units)
    method = f"{what}: units counted, ratio-estimator t interval over cases"
    if n == 0:
        return metric(None, None, None, 0, method)
    rate = float(wins.sum() / units.sum())
    if n < MIN_INTERVAL_N:
        return metric(rate, None, None, n, f"{method}; {too_few(n)}")
    spread = float(((wins - rate * units) ** 2).sum()) / (n - 1)
    se = math.sqrt(spread / n) / float(units.mean())
    if se == 0.0:
        return metric(rate, None, None, n, f"{method}; no interval: every case alike, no spread to tell from")
    half = t_quantile(0.5 + CONFIDENCE / 2, n - 1) * se
    return metric(rate, max(0.0, rate - half), min(1.0, rate + half), n, method)


def bca_interval(samples: np.ndarray, point: float, leave_one_out: np.ndarray, *, items: int,
                 confidence: float = 0.95, weights: np.ndarray | None = None) -> tuple[float, float] | None:
    """Efron's bias-corrected and accelerated bootstrap bounds (BCa; Efron and Tibshirani 1993,
    ch. 14) of one statistic: the percentile interval moved by the share of resamples below the
    point (bias) and by the skewness of its leave-one-out values (acceleration). A correlation's
    resamples are skewed towards zero; the plain percentile interval of Pearson's r over 30 items
    held the truth 91% of the time at a nominal 95%, BCa 94%. `leave_one_out` may be a seeded
    subset of the `items` leave-one-out values (its skewness estimates the whole set's), or one
    value per distinct item with `weights` counting the items it stands for (a battle count). None
    when the resamples or the point are undefined."""
    import numpy as np

    values = samples[np.isfinite(samples)]
    finite = np.isfinite(leave_one_out)
    loo = leave_one_out[finite]
    w = np.ones(len(loo)) if weights is None else np.asarray(weights, dtype=float)[finite]
    if not len(values) or not math.isfinite(point):
        return None
    normal = NormalDist()
    # A resample equal to the point counts half, "equal" within rounding: a resample that draws the
    # items' own values again (common over few items with tied scores) computes the point by another
    # sum order, and the last bits of that sum differ between numpy builds.
    tied = np.isclose(values, point, rtol=1e-9, atol=1e-12)
    below = float((values < point)[~tied].sum() + 0.5 * tied.sum()) / len(values)
    z0 = normal.inv_cdf(min(max(below, 1e-6), 1 - 1e-6))
    d = float((w * loo).sum() / w.sum()) - loo if len(loo) else np.zeros(1)
    w = w if len(loo) else np.ones(1)
    spread = float((w * d * d).sum())
    represented = float(w.sum())
    acceleration = 0.0 if spread == 0 else \
        float((w * d ** 3).sum()) / (6 * spread ** 1.5) / math.sqrt(items / represented)
    z = normal.inv_cdf(0.5 + confidence / 2)

    def level(edge: float) -> float:
        shifted = z0 + edge
        return 100 * normal.cdf(z0 + shifted / (1 - acceleration * shifted))

    return float(np.percentile(values, level(-z))), float(np.percentile(values, level(z)))


def normal_interval(point: np.ndarray, samples: np.ndarray, confidence: float = 0.95
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The point plus and minus z standard deviations of its bootstrap replicates, per column: for
    an estimator whose own randomness (online Elo's battle order) is in the point and in every
    replicate alike, an interval placed on the point holds where a percentile interval, placed where
    the replicates' order noise averages out, is too wide (97.5% at a nominal 95% over 600 battles)."""
    spread = samples.std(axis=0, ddof=1) * NormalDist().inv_cdf(0.5 + confidence / 2)
    return point - spread, point + spread
