"""How delta gates decide on simulated pull requests: false failures on unchanged PRs, power against
real drops, inconclusive rates, and the coverage of the paired interval.

    python bench/gating.py                     # 1000 PRs per cell, the shipped level 0.92
    python bench/gating.py --confidence 0.9    # the default gate at another level
    python bench/gating.py --quick             # 60 PRs per cell, a smoke test

Each simulated PR draws its cases afresh from a population, runs "main" and "the PR" on the same
cases and judges each run once with a noisy judge, then goes through llmjury's own code: the
comparison's per-case path (`compare.paired_delta`, the function `--llm-baseline` and
`llmjury compare` use) and `Gate.check`. The recommended gate, `M.delta.high>=0`, is shown at the
level the shipped workflow passes (`--llm-compare-confidence 0.92`: a one-sided 4% test) beside the
option's default 0.95, each with its targets; the other styles at 0.95. Two kinds of metric:

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

from llmjury.model import RunInfo, RunSummary
from llmjury.results.compare import paired_delta
from llmjury.results.gates import Gate

SIZES = (60, 200, 1000)
#: Unchanged PRs (A/A), and PRs that drop the true figure by 5 and 15 points of its range.
DROPS = (0.0, 0.05, 0.15)
MAIN_RATE = 0.8
SCORE_SHARES = np.array([0.05, 0.10, 0.20, 0.35, 0.30])  # of scores 1..5 on main (mean 3.75)
#: The level the shipped workflow passes as --llm-compare-confidence, and the option's default.
SHIPPED_CONFIDENCE = 0.92
OPTION_DEFAULT = 0.95
DEFAULT_GATE = "M.delta.high>=0"
#: (gate template, --llm-gate-uncertain, level; None: the level under test): {t} is a threshold in
#: shares of the range. The first is the default the README recommends, the second the same gate
#: at the option's default level.
STYLES = (
    ("M.delta.high>=0", "inconclusive", None),
    ("M.delta.high>=0", "inconclusive", OPTION_DEFAULT),
    ("M.delta>=0", "inconclusive", OPTION_DEFAULT),
    ("M.delta.low>={t}", "inconclusive", OPTION_DEFAULT),
    ("M.delta.low>={t}", "pass", OPTION_DEFAULT),
)
MARGIN = -0.05


def label(template: str, uncertain: str, level: float, chosen: float) -> str:
    """A style's row label: its gate, its level, and which one is the recommended default."""
    text = template.format(t=MARGIN) + f" @{level:g}"
    if template == DEFAULT_GATE and level == chosen:
        text += " (default)"
    return text + (", two outcomes" if uncertain == "pass" else "")


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
    """Outcome counts per gate style (by row label), and interval coverage per level, over a cell's
    simulated PRs."""

    outcomes: dict[str, dict[str, int]]
    covered: dict[float, int]
    runs: int = 0


def simulate(kind: Kind, n: int, drop: float, prs: int, seed: int, chosen: float) -> Cell:
    """`prs` simulated pull requests of one cell through llmjury's comparison (at each level a style
    asks for) and gates."""
    rng = np.random.default_rng(seed)
    gates = [(label(text, uncertain, level or chosen, chosen), Gate.parse("sim." + text.lower().format(
        t=MARGIN * kind.scale)), uncertain, level or chosen) for text, uncertain, level in STYLES]
    levels = sorted({level for *_, level in gates})
    truth, ones = kind.true_difference(drop), np.ones(n)
    cell = Cell({name: {"pass": 0, "fail": 0, "inconclusive": 0} for name, *_ in gates}, dict.fromkeys(levels, 0))
    for _ in range(prs):
        now, before = kind.draw(rng, n, drop)
        summaries = {}
        for level in levels:
            delta = paired_delta(float(now.mean() - before.mean()), (now, ones), (before, ones), n, level)
            summaries[level] = RunSummary(run=RunInfo(id="sim"), comparison={
                "compared": True, "judges_differ": [], "families": {"sim": {"m": {"delta": delta}}}})
            cell.covered[level] += delta["low"] <= truth <= delta["high"]
        for name, gate, uncertain, level in gates:
            cell.outcomes[name][gate.check(summaries[level], uncertain=uncertain).status] += 1
        cell.runs += 1
    return cell


def targets(cells: dict[tuple[int, float], Cell], name: str) -> str:
    """The default gate's targets at one level: false failures on unchanged PRs <= 5% at every n (the
    worst n shown, with its binomial standard error) and power against the largest drop at the
    smallest n >= 80%."""
    runs = cells[SIZES[0], 0.0].runs
    worst = max(cells[n, 0.0].outcomes[name]["fail"] / runs for n in SIZES)
    power = cells[SIZES[0], DROPS[-1]].outcomes[name]["fail"] / runs
    return (f"targets for {name}: false failures on unchanged PRs <= 5% at every n: {100 * worst:.1f}% "
            f"(SE {100 * (worst * (1 - worst) / runs) ** 0.5:.1f}; {'met' if worst <= 0.05 else 'NOT met'}); "
            f"power against a {int(100 * DROPS[-1])}-pt drop at n={SIZES[0]} >= 80%: {100 * power:.1f}% "
            f"({'met' if power >= 0.8 else 'NOT met'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, default=1000, help="simulated pull requests per cell (default 1000)")
    parser.add_argument("--confidence", type=float, default=SHIPPED_CONFIDENCE,
                        help=f"level of the default gate's row (default {SHIPPED_CONFIDENCE}, the shipped workflow's)")
    parser.add_argument("--quick", action="store_true", help="60 PRs per cell: a smoke test, not figures")
    parser.add_argument("--flip", type=float, default=0.03, help="judge's verdict flip probability per run")
    parser.add_argument("--score-noise", type=float, default=0.2, help="judge's off-by-one probability per run")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    prs = 60 if args.quick else args.prs
    if prs < 1:
        parser.error(f"argument --prs: {prs} is below 1")
    chosen = args.confidence
    if not 0.5 < chosen < 1:
        parser.error(f"argument --confidence: {chosen} is not strictly between 0.5 and 1")
    print(f"{prs} simulated PRs per cell; threshold t = {MARGIN} of the metric's range; @L: intervals at "
          "two-sided level L (--llm-compare-confidence); fail / inconclusive rates in %, pass is the rest")
    for k, kind in enumerate((binary(args.flip), scores(args.score_noise))):
        print(f"\n{kind.name}")
        head = "".join(f"{f'{int(d * 100)}-pt drop' if d else 'unchanged':>17}" for d in DROPS)
        print(f"{'gate':<40}{'n':>6}{head}")
        print(f"{'':<46}" + "      fail  inconc" * len(DROPS))
        cells = {(n, drop): simulate(kind, n, drop, prs, args.seed + 1000 * k + 10 * i + j, chosen)
                 for i, n in enumerate(SIZES) for j, drop in enumerate(DROPS)}
        names = list(cells[SIZES[0], 0.0].outcomes)
        for name in names:
            for n in SIZES:
                figures = ""
                for drop in DROPS:
                    counts, runs = cells[n, drop].outcomes[name], cells[n, drop].runs
                    figures += f"{100 * counts['fail'] / runs:>10.1f}{100 * counts['inconclusive'] / runs:>8.1f}"
                print(f"{name:<40}{n:>6}{figures}")
        for name in dict.fromkeys(names[:2]):  # the default gate at the chosen level, then at 0.95
            print(targets(cells, name))
        for level in cells[SIZES[0], 0.0].covered:
            coverage = "  ".join(f"n={n} " + "/".join(f"{cells[n, d].covered[level] / cells[n, d].runs:.3f}"
                                                      for d in DROPS) for n in SIZES)
            print(f"coverage of the {100 * level:g}% paired interval (unchanged/5/15-pt drop): {coverage}")


if __name__ == "__main__":
    main()
