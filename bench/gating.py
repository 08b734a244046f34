"""How delta gates decide on simulated pull requests: false failures on unchanged PRs, power against
real drops, inconclusive rates, and the coverage of the paired interval.

    python bench/gating.py            # 400 PRs per cell
    python bench/gating.py --quick    # 60 PRs per cell, a smoke test

Each simulated PR draws its cases afresh from a population, runs "main" and "the PR" on the same
cases and judges each run once with a noisy judge, then goes through llmjury's own code: the
comparison's per-case path (`compare.paired_delta`, the function `--llm-baseline` and
`llmjury compare` use) and `Gate.check`. Two kinds of metric:

* a rate (0/1 per case): main is right on a case with probability 0.8; a PR that drops the true
  rate by D points makes each right case wrong with probability D / 0.8; the judge flips each
  verdict with probability --flip on every run;
* a mean 1-5 score: main's scores are drawn from fixed shares; a PR that drops it by D points of
  the scale's range (D x 4 score points) lowers each case (above 1) by one point with the
  probability that makes that mean drop; the judge is off by one point (up or down, clipped)
  with probability --score-noise on every run.

Gate thresholds are shares of the metric's range: -0.05 is 5 points of a rate, 0.2 of a 1-5 score.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from llmjury.compare import paired_delta
from llmjury.gates import Gate

SIZES = (60, 200, 1000)
#: Unchanged PRs (A/A), and PRs that drop the true figure by 5 and 15 points of its range.
DROPS = (0.0, 0.05, 0.15)
MAIN_RATE = 0.8
SCORE_SHARES = np.array([0.05, 0.10, 0.20, 0.35, 0.30])  # of scores 1..5 on main (mean 3.75)
#: (label, gate template, --llm-gate-uncertain): {t} is a threshold in shares of the range. The first
#: is the default the README recommends.
STYLES = (
    ("M.delta.high>=0 (default)", "sim.m.delta.high>=0", "inconclusive"),
    ("M.delta>=0", "sim.m.delta>=0", "inconclusive"),
    ("M.delta.low>={t}", "sim.m.delta.low>={t}", "inconclusive"),
    ("M.delta.low>={t}, two outcomes", "sim.m.delta.low>={t}", "pass"),
)
MARGIN = -0.05


@dataclass(frozen=True)
class Kind:
    """A metric kind: how a PR's per-case values are drawn, its range, and its true difference."""

    name: str
    scale: float
    draw: Callable[[np.random.Generator, int, float], tuple[np.ndarray, np.ndarray]]
    true_difference: Callable[[float], float]


def binary(flip: float) -> Kind:
    def draw(rng: np.random.Generator, n: int, drop: float) -> tuple[np.ndarray, np.ndarray]:
        main = rng.random(n) < MAIN_RATE
        pr = main & (rng.random(n) >= drop / MAIN_RATE)
        judged = [truth ^ (rng.random(n) < flip) for truth in (pr, main)]
        return judged[0].astype(float), judged[1].astype(float)

    return Kind(f"rate (main {MAIN_RATE}, judge flips a verdict with p={flip} per run)", 1.0, draw,
                lambda drop: -drop * (1 - 2 * flip))


def scores(noise: float) -> Kind:
    levels = np.arange(1, 6)
    above_one = SCORE_SHARES[1:].sum()

    def judged_mean(shares: np.ndarray) -> float:
        up, down = np.where(levels < 5, noise / 2, 0.0), np.where(levels > 1, noise / 2, 0.0)
        return float((shares * (levels + up - down)).sum())

    def lowered(drop: float) -> np.ndarray:
        q = drop * 4 / above_one
        shares = SCORE_SHARES * np.where(levels > 1, 1 - q, 1.0)
        shares[:-1] += SCORE_SHARES[1:] * q
        return shares

    def judge(rng: np.random.Generator, truth: np.ndarray) -> np.ndarray:
        off = rng.random(len(truth)) < noise
        return np.clip(truth + np.where(off, rng.choice([-1, 1], len(truth)), 0), 1, 5).astype(float)

    def draw(rng: np.random.Generator, n: int, drop: float) -> tuple[np.ndarray, np.ndarray]:
        main = rng.choice(levels, n, p=SCORE_SHARES)
        pr = main - ((main > 1) & (rng.random(n) < drop * 4 / above_one))
        return judge(rng, pr), judge(rng, main)

    return Kind(f"1-5 score (main mean {float((SCORE_SHARES * levels).sum()):.2f}, judge off by one with "
                f"p={noise} per run)", 4.0, draw, lambda drop: judged_mean(lowered(drop)) - judged_mean(SCORE_SHARES))


@dataclass
class Cell:
    """Outcome counts per gate style, and interval coverage, over a cell's simulated PRs."""

    runs: int = 0
    covered: int = 0

    def __post_init__(self) -> None:
        self.outcomes: dict[str, dict[str, int]] = {label: {"pass": 0, "fail": 0, "inconclusive": 0}
                                                    for label, _, _ in STYLES}


def simulate(kind: Kind, n: int, drop: float, prs: int, seed: int) -> Cell:
    """`prs` simulated pull requests of one cell through llmjury's comparison and gates."""
    rng = np.random.default_rng(seed)
    gates = [(label, Gate.parse(text.format(t=MARGIN * kind.scale)), uncertain) for label, text, uncertain in STYLES]
    truth, ones, cell = kind.true_difference(drop), np.ones(n), Cell()
    for _ in range(prs):
        now, before = kind.draw(rng, n, drop)
        delta = paired_delta(float(now.mean() - before.mean()), (now, ones), (before, ones), n)
        summary = {"comparison": {"compared": True, "judges_differ": [], "families": {"sim": {"m": {"delta": delta}}}}}
        for label, gate, uncertain in gates:
            cell.outcomes[label][gate.check(summary, uncertain=uncertain).status] += 1
        cell.runs += 1
        cell.covered += delta["low"] <= truth <= delta["high"]
    return cell


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, default=400, help="simulated pull requests per cell (default 400)")
    parser.add_argument("--quick", action="store_true", help="60 PRs per cell: a smoke test, not figures")
    parser.add_argument("--flip", type=float, default=0.03, help="judge's verdict flip probability per run")
    parser.add_argument("--score-noise", type=float, default=0.2, help="judge's off-by-one probability per run")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    prs = 60 if args.quick else args.prs
    if prs < 1:
        parser.error(f"argument --prs: {prs} is below 1")
    print(f"{prs} simulated PRs per cell; threshold t = {MARGIN} of the metric's range; "
          "fail / inconclusive rates in %, pass is the rest")
    for k, kind in enumerate((binary(args.flip), scores(args.score_noise))):
        print(f"\n{kind.name}")
        head = "".join(f"{f'{int(d * 100)}-pt drop' if d else 'unchanged':>17}" for d in DROPS)
        print(f"{'gate':<32}{'n':>6}{head}")
        print(f"{'':<38}" + "      fail  inconc" * len(DROPS))
        cells = {(n, drop): simulate(kind, n, drop, prs, args.seed + 1000 * k + 10 * i + j)
                 for i, n in enumerate(SIZES) for j, drop in enumerate(DROPS)}
        for label, _, _ in STYLES:
            for n in SIZES:
                figures = ""
                for drop in DROPS:
                    counts, runs = cells[n, drop].outcomes[label], cells[n, drop].runs
                    figures += f"{100 * counts['fail'] / runs:>10.1f}{100 * counts['inconclusive'] / runs:>8.1f}"
                print(f"{label.format(t=MARGIN):<32}{n:>6}{figures}")
        default = STYLES[0][0]
        worst = max(cells[n, 0.0].outcomes[default]["fail"] / cells[n, 0.0].runs for n in SIZES)
        power = cells[SIZES[0], DROPS[-1]].outcomes[default]["fail"] / cells[SIZES[0], DROPS[-1]].runs
        print(f"targets for {default}: false failures on unchanged PRs <= 5% at every n: {100 * worst:.1f}% "
              f"({'met' if worst <= 0.05 else 'NOT met'}); power against a {int(100 * DROPS[-1])}-pt drop at "
              f"n={SIZES[0]} >= 80%: {100 * power:.1f}% ({'met' if power >= 0.8 else 'NOT met'})")
        coverage = "  ".join(f"n={n} {'/'.join(f'{cells[n, d].covered / cells[n, d].runs:.3f}' for d in DROPS)}"
                             for n in SIZES)
        print(f"coverage of the 95% paired interval (unchanged/5/15-pt drop): {coverage}")


if __name__ == "__main__":
    main()
