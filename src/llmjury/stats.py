"""Intervals and tests for the figures in reports, named the way reports and gates read them.

Every metric is reported as `{"value", "low", "high", "n", "method"}` so gates and renderers
treat a win rate, a rating and a correlation alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

#: The level of every interval unless a caller passes its own (a comparison's `confidence`).
CONFIDENCE = 0.95
#: Up to this many decisive outcomes sign_test sums the binomial tail exactly (under 0.1 s).
EXACT_SIGN_TEST = 20_000
#: Fewer items than this give no interval: a t interval over 2-4 values is mostly its quantile's
#: width (over three 1-5 scores it ran from -0.13 to 7.46), and reports say "too few to tell".
MIN_INTERVAL_N = 5
#: The power a detectable change is computed at (with a two-sided test at 1 - confidence).
POWER = 0.8


def two_sided_z(confidence: float) -> float:
    """The normal quantile that bounds a two-sided interval at `confidence` (1.96 at 0.95)."""
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def _detection_z(confidence: float) -> float:
    """z(1 - alpha/2) + z(power): the standard errors between no change and a change detected at POWER."""
    return two_sided_z(confidence) + NormalDist().inv_cdf(POWER)


def metric(value: float | None, low: float | None, high: float | None, n: int, method: str, *,
           minimum: int | None = None, discrete: bool = False) -> dict[str, Any]:
    """A reported figure with its interval, or with none and the reason in `method`: an interval from
    fewer than `minimum` items (MIN_INTERVAL_N unless a caller needs more) or one of zero width (every
    resample alike) tells a reader nothing, and printed as `0.935 [0.935, 0.935]` it claims certainty.
    A `discrete` figure (a rank) may have a zero-width interval: first in every resample is a finding."""
    def clean(x: float | None) -> float | None:
        return None if x is None or math.isnan(x) else float(x)  # numpy scalars too, float32 included

    value, low, high = clean(value), clean(low), clean(high)
    if low is not None or high is not None:
        reason = interval_problem(low, high, n, MIN_INTERVAL_N if minimum is None else minimum, discrete)
        if value is None or reason is not None:
            low = high = None
            method = method if value is None or reason is None else f"{method}; {reason}"
    return {"value": value, "low": low, "high": high, "n": int(n), "method": method}


def interval_problem(low: float | None, high: float | None, n: int, minimum: int, discrete: bool = False
                     ) -> str | None:
    """Why an interval cannot be stated, or None when it can."""
    if n < minimum:
        return too_few(n)
    if low is None or high is None:
        return f"{NO_INTERVAL} one of its bounds could not be computed"
    if not discrete and high - low <= 1e-12 * max(1.0, abs(low), abs(high)):
        return f"{NO_INTERVAL} every resample gave the same value, too little spread to tell"
    return None


#: How a metric's method starts the reason it has no interval (`too_few`, `interval_problem`).
TOO_FEW = "too few items"
NO_INTERVAL = "no interval:"


def too_few(n: int) -> str:
    """The reason a report gives for a figure from too few items to bound."""
    return f"{TOO_FEW} (n={n}) to tell"


def proportion(successes: int, trials: int, confidence: float = CONFIDENCE) -> dict[str, Any]:
    """A rate with its Wilson score interval at `confidence` (well behaved near 0, 1 and for small n).

    Written out (Newcombe 1998, as `scipy.stats.binomtest(...).proportion_ci(method="wilson")`
    computes it) because importing scipy.stats for it cost a small run's session end over a second.
    """
    if trials == 0:
        return metric(None, None, None, 0, "wilson")
    low, high = wilson_bounds(successes, trials, confidence)
    return metric(successes / trials, low, high, trials, "wilson")


def wilson_bounds(successes: int, trials: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The Wilson score interval itself, whatever the count: Newcombe's paired interval is built from
    it even where a reported rate over so few items shows none (trials > 0)."""
    z = two_sided_z(confidence)
    p, q, z2 = successes / trials, 1 - successes / trials, z ** 2
    denom = 2 * (trials + z2)
    center = (2 * trials * p + z2) / denom
    delta = z / denom * math.sqrt(4 * trials * p * q + z2)
    return (0.0 if successes == 0 else center - delta), (1.0 if successes == trials else center + delta)


def t_quantile(q: float, dof: int) -> float:
    """Student's t quantile, `scipy.stats.t.ppf(q, dof)` to the bit: scipy.special's `stdtrit`,
    which that calls, without importing all of scipy.stats (a second of a small run's session end)."""
    from scipy.special import stdtrit

    return float(stdtrit(dof, q))


def mean_interval(values: np.ndarray) -> tuple[float, float]:
    """The 95% Student t interval of a mean, as `scipy.stats.t.interval(0.95, n - 1, loc=mean,
    scale=scipy.stats.sem(values))` computes it (two or more values)."""
    values = np.asarray(values, dtype=float)
    n, mean = len(values), values.mean()
    sem = np.std(values, ddof=1) / np.sqrt(n)
    return (float(t_quantile((1 - CONFIDENCE) / 2, n - 1) * sem + mean),
            float(t_quantile((1 + CONFIDENCE) / 2, n - 1) * sem + mean))


def mean_metric(values: Sequence[float], scale: tuple[float, float] | None = None) -> dict[str, Any]:
    """A mean with its t interval, kept inside the values' `scale` when one is known (a 1-5 mean's
    interval never leaves [1, 5]); fewer than MIN_INTERVAL_N values, or values that do not vary,
    give no interval, and the method says why instead of printing a zero-width one."""
    array = np.asarray(values, dtype=float)
    n = len(array)
    if n == 0:
        return metric(None, None, None, 0, "mean")
    mean = float(array.mean())
    if n < MIN_INTERVAL_N:
        return metric(mean, None, None, n, f"mean; {too_few(n)}")
    if float(array.std()) == 0.0:
        return metric(mean, None, None, n, "mean; no interval: every value equal, no spread to tell from")
    low, high = mean_interval(array)
    if scale is not None and (low < scale[0] or high > scale[1]):
        return metric(mean, max(low, scale[0]), min(high, scale[1]), n,
                      f"mean, t interval clipped to the scale [{scale[0]:g}, {scale[1]:g}]")
    return metric(mean, low, high, n, "mean, t interval")


def sign_test(wins: int, losses: int) -> dict[str, Any]:
    """Two-sided exact sign test on decisive outcomes (ties left out).

    At p = 1/2 the binomial is symmetric, so the p-value is twice the lower tail of the smaller
    count, capped at 1, and that tail is a sum of binomial coefficients over 2^n: summed as Python
    integers it is exact (scipy.special.bdtr is off by 1e-11 at n = 2500) and needs no scipy.stats
    import, which cost a small run's session end a second. Its cost grows as n^2, so above
    EXACT_SIGN_TEST decisive outcomes scipy.stats.binomtest computes it.
    """
    n = wins + losses
    if not n:
        p = None
    elif n > EXACT_SIGN_TEST:
        from scipy import stats

        p = float(stats.binomtest(wins, n, 0.5).pvalue)
    else:
        term = tail = 1  # C(n, 0); then C(n, i) for i up to the smaller count
        for i in range(min(wins, losses)):
            term = term * (n - i) // (i + 1)
            tail += term
        p = 1.0 if wins == losses else min(1.0, tail / 2 ** (n - 1))
    return {"wins": wins, "losses": losses, "n": n, "p_value": p}


def length_controlled_rate(outcome: np.ndarray, length_difference: np.ndarray, *, seed: int = 0,
                           resamples: int = 200) -> dict[str, Any]:
    """Win rate with the length difference regressed out: a length-adjusted win rate.

    Fits P(win) = sigmoid(a + b * tanh(d / sd(d))) by maximum likelihood with soft labels (win 1,
    tie 0.5, loss 0), where d is the first side's length minus the second's, and reports
    sigmoid(a): the predicted win rate had both answers been equally long. It borrows the length
    term of AlpacaEval 2's length-controlled win rate but fits no per-instruction difficulty term
    (AlpacaEval fits one across many models; one comparison cannot), so it is not that figure.
    Interval: case bootstrap (percentile).
    """
    outcome = np.asarray(outcome, dtype=float)
    diff = np.asarray(length_difference, dtype=float)
    n = len(outcome)
    if n < MIN_INTERVAL_N:
        return metric(None, None, None, n, f"{LENGTH_ADJUSTED}; {too_few(n)}")
    scale = diff.std() or 1.0
    x = np.tanh(diff / scale)
    rng = np.random.default_rng(seed)
    rows = np.stack([np.arange(n), *(rng.integers(0, n, n) for _ in range(resamples))])
    intercepts = logistic_fit(outcome[rows], x[rows])[:, 0]
    rates = 1.0 / (1.0 + np.exp(-intercepts))
    return metric(rates[0], np.percentile(rates[1:], 2.5), np.percentile(rates[1:], 97.5), n,
                  f"{LENGTH_ADJUSTED}, case bootstrap")


#: What `length_controlled_rate` fits, as its method names it.
LENGTH_ADJUSTED = "length-adjusted (logistic on tanh length difference, no instruction-difficulty term)"


def logistic_fit(y: np.ndarray, z: np.ndarray, *, ridge: float = 1e-3, max_steps: int = 100) -> np.ndarray:
    """(a, b) maximising sum(y log p + (1 - y) log(1 - p)) - ridge (a^2 + b^2), p = sigmoid(a + b z),
    for every row of `y` and `z` (soft labels in [0, 1]) at once.

    Two parameters need no general-purpose optimiser: damped Newton steps with the 2 x 2 Hessian
    solved in closed form, batched over rows (a bootstrap's resamples), reach the optimum to machine
    precision in a few steps where one L-BFGS-B call per resample took a tenth of a second.
    """
    def loss(v: np.ndarray, rows: np.ndarray) -> np.ndarray:
        logit = v[:, :1] + v[:, 1:] * z[rows]
        # -y log p - (1 - y) log(1 - p) = log(1 + e^t) - y t, computed without overflow
        per_row: np.ndarray = (np.logaddexp(0.0, logit) - y[rows] * logit).sum(axis=1) + ridge * (v * v).sum(axis=1)
        return per_row

    def newton_step(v: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        yy, zz = y[rows], z[rows]
        p = 1.0 / (1.0 + np.exp(-(v[:, :1] + v[:, 1:] * zz)))
        g = p - yy
        grad = np.stack([g.sum(axis=1), (g * zz).sum(axis=1)], axis=1) + 2 * ridge * v
        c = p * (1 - p)
        haa, hab, hbb = c.sum(axis=1) + 2 * ridge, (c * zz).sum(axis=1), (c * zz * zz).sum(axis=1) + 2 * ridge
        det = haa * hbb - hab * hab
        step = np.stack([hbb * grad[:, 0] - hab * grad[:, 1], haa * grad[:, 1] - hab * grad[:, 0]], axis=1)
        return grad, step / det[:, None]

    def converged(step: np.ndarray, v: np.ndarray) -> np.ndarray:
        done: np.ndarray = np.abs(step).max(axis=1) < 1e-10
        return done

    fitted = damped_newton(np.zeros((len(y), 2)), loss, newton_step, converged, max_steps=max_steps)
    if fitted is None:
        raise ArithmeticError(f"logistic fit did not converge in {max_steps} Newton steps")
    return fitted


#: Step halvings a damped Newton step may take before its row is taken as at its optimum.
HALVINGS = 60


def damped_newton(start: np.ndarray, loss: Callable[[np.ndarray, np.ndarray], np.ndarray],
                  newton_step: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
                  converged: Callable[[np.ndarray, np.ndarray], np.ndarray], *,
                  max_steps: int) -> np.ndarray | None:
    """Minimise a strictly convex loss for every row of `start` at once by damped Newton steps:
    the one solver of the batched fits (the length-adjusted logistic, Bradley-Terry's bootstrap).

    `loss(x, rows)` is each row's loss at parameters `x` (the rows `rows` of the problem);
    `newton_step(x, rows)` its gradient and Newton step (x - step is the full step);
    `converged(step, x)` which rows are done. A row's step is halved until its loss falls enough
    (Armijo); a row whose loss no halving lowers is at its optimum to rounding and stays where it
    was, with the loss it has there (a step the search never accepted is never taken). Returns the
    fitted rows, or None when some row still moves after `max_steps` steps."""
    x = np.array(start, dtype=float)
    active = np.arange(len(x))
    current = loss(x, active)
    for _ in range(max_steps):
        if not len(active):
            return x
        here = x[active]
        grad, step = newton_step(here, active)
        slope = (grad * step).reshape(len(active), -1).sum(axis=1)
        t = np.ones(len(active))
        taken = np.zeros(len(active), dtype=bool)
        new = current[active].copy()
        for _ in range(HALVINGS):
            trial = loss(here - _expand(t, here) * step, active)
            # Near the optimum both sides differ by rounding only: a step that small is taken as it is.
            enough = (trial <= current[active] - 1e-4 * t * slope) | (trial - current[active] <= 1e-12 * np.abs(trial))
            accept = enough & ~taken
            new[accept] = trial[accept]
            taken |= accept
            if taken.all():
                break
            t[~taken] *= 0.5
        moved = np.where(taken, t, 0.0)
        x[active] = here - _expand(moved, here) * step
        current[active] = new
        done = converged(step, here) | ~taken
        active = active[~done]
    return x if not len(active) else None


def _expand(t: np.ndarray, like: np.ndarray) -> np.ndarray:
    """A per-row step length shaped to multiply a stack of parameter rows."""
    return t.reshape((len(t),) + (1,) * (like.ndim - 1))


@dataclass(frozen=True)
class PairedDifference:
    """The difference of two runs' means over the same cases, with a paired interval and test.

    `sd` is the standard deviation of one case's contribution to the difference: what a detectable
    change and the cases a margin needs are computed from (None when every case changed alike)."""

    value: float
    low: float | None
    high: float | None
    #: Cases scored in either run (a case scored in neither tells nothing).
    n: int
    method: str
    #: Two-sided p-value of "no difference": exact McNemar for 0/1 values, paired t otherwise.
    p_value: float
    #: For 0/1 values: cases that went 0 -> 1 (`rose`) and 1 -> 0 (`fell`); None otherwise.
    discordant: dict[str, int] | None
    sd: float | None


def paired_difference(num_now: np.ndarray, n_now: np.ndarray, num_before: np.ndarray,
                      n_before: np.ndarray, confidence: float = CONFIDENCE) -> PairedDifference | None:
    """The n-weighted mean of per-case values now minus before, case i weighing n[i] in each run,
    with its two-sided interval at `confidence`.

    When every case has one 0/1 value in both runs (a rate), the interval is Newcombe's hybrid
    score interval for paired proportions and the test exact McNemar; otherwise a paired t interval
    on each case's linearised contribution (per-case differences when each n is 1). Both are
    closed-form, so the same two runs give the same interval whatever seed a caller holds. A case
    whose value did not change adds no width: when no case changed the interval is [0, 0].
    None when either run has no value."""
    num_now, n_now, num_before, n_before = (np.asarray(a, dtype=float) for a in (num_now, n_now, num_before,
                                                                                   n_before))
    keep = (n_now > 0) | (n_before > 0)
    num_now, n_now, num_before, n_before = num_now[keep], n_now[keep], num_before[keep], n_before[keep]
    cases = int(keep.sum())
    if not n_now.sum() or not n_before.sum():
        return None
    now, before = num_now.sum() / n_now.sum(), num_before.sum() / n_before.sum()
    if ((n_now == 1) & (n_before == 1)).all() and np.isin(num_now, (0, 1)).all() \
            and np.isin(num_before, (0, 1)).all():
        rose, fell = int(((num_now == 1) & (num_before == 0)).sum()), int(((num_now == 0) & (num_before == 1)).sum())
        low, high = paired_proportions_interval(int((num_now * num_before).sum()), rose, fell, cases, confidence)
        p = sign_test(rose, fell)["p_value"]
        # At least one discordant case is assumed; every case changing alike leaves no spread to work from.
        spread = max(rose + fell, 1) / cases - (now - before) ** 2
        return PairedDifference(now - before, low, high, cases, "paired proportions: Newcombe hybrid score "
                                "interval, exact McNemar test", 1.0 if p is None else p,
                                {"rose": rose, "fell": fell}, math.sqrt(spread) if spread > 1e-12 else None)
    contribution = ((num_now - now * n_now) / n_now.mean()) - ((num_before - before * n_before) / n_before.mean())
    method = "paired t on per-case differences"
    if cases < 2:
        return PairedDifference(now - before, None, None, cases, method, 1.0, None, None)
    sd = float(np.sqrt((contribution ** 2).sum() / (cases - 1)))
    se = sd / math.sqrt(cases)
    half = t_quantile(0.5 + confidence / 2, cases - 1) * se
    if se > 0:
        from scipy.special import stdtr

        p = float(2 * stdtr(cases - 1, -abs(now - before) / se))
    else:
        p = 1.0 if now == before else 0.0
    values = np.r_[num_now[n_now > 0] / n_now[n_now > 0], num_before[n_before > 0] / n_before[n_before > 0]]
    lowest, highest = value_bounds(values)
    span = highest - lowest  # the difference of two means of such values cannot leave [-span, span]
    return PairedDifference(now - before, max(now - before - half, -span), min(now - before + half, span), cases,
                            method, p, None, sd if sd > 0 else None)


def value_bounds(values: np.ndarray) -> tuple[float, float]:
    """The range per-case values can take: [0, 1] for rates and shares, else the range observed."""
    lowest, highest = float(np.min(values)), float(np.max(values))
    return (0.0, 1.0) if lowest >= 0 and highest <= 1 else (lowest, highest)


def paired_proportions_interval(both: int, rose: int, fell: int, n: int,
                                confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The `confidence` interval of p_now - p_before for n paired 0/1 outcomes: Newcombe's (1998,
    method 10) hybrid score interval ("square and add"), which combines each rate's Wilson interval
    at that level with their correlation.

    Its coverage stays near the level for small n and rates near 0 or 1, where a Wald interval's
    drops (bench/gating.py checks it). `both` counts the pairs that are 1 in both runs; `rose` 0 -> 1;
    `fell` 1 -> 0. With no discordant pair the difference is 0 on every case: [0, 0]."""
    if not rose and not fell:
        return 0.0, 0.0
    neither = n - both - rose - fell
    p1, p2 = (both + rose) / n, (both + fell) / n
    (l1, u1), (l2, u2) = wilson_bounds(both + rose, n, confidence), wilson_bounds(both + fell, n, confidence)
    spread = (both + rose) * (fell + neither) * (both + fell) * (rose + neither)
    association: float = both * neither - rose * fell
    # Newcombe's continuity-corrected correlation: a small positive association counts as none.
    if association > n / 2:
        association -= n / 2
    elif association > 0:
        association = 0
    phi = association / math.sqrt(spread) if spread else 0.0
    below = (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    above = (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2
    difference = p1 - p2
    return max(-1.0, difference - math.sqrt(max(below, 0.0))), min(1.0, difference + math.sqrt(max(above, 0.0)))


def detectable_change(sd: float, n: int, confidence: float = CONFIDENCE) -> float:
    """The smallest true change a two-sided test at 1 - `confidence` on n paired cases detects with
    80% power: the drop a `delta.high>=0` gate on that interval catches four times in five."""
    return _detection_z(confidence) * sd / math.sqrt(n)


def cases_needed(sd: float, margin: float, confidence: float = CONFIDENCE) -> int:
    """How many paired cases make `margin` the smallest change detectable (80% power, two-sided test
    at 1 - `confidence`)."""
    return math.ceil((_detection_z(confidence) * sd / margin) ** 2)
