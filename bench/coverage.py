"""How often each interval the suite prints covers the truth: simulated coverage beside the nominal
level, per interval kind, at small and large n; and how much the Elo interval's width moves by seed.

    python bench/coverage.py              # about two minutes on two cores
    python bench/coverage.py --quick      # fewer simulations (a smoke run: coverage to +-4 points)
    python bench/coverage.py --run reports/latest   # also: the methods a saved run's figures name

Each kind is computed by the suite's own function on data simulated from a known truth, many times
over; coverage is the share of simulations whose interval holds the truth, printed with its Monte
Carlo standard error. The kinds and their truths:

    rate             Wilson (stats.proportion)                     p of a Bernoulli
    paired delta     Newcombe's paired interval (stats.paired_difference on 0/1 values)  p1 - p2
    mean             t interval (stats.mean_metric) on 1-5 scores                      the scores' mean
    consistency      per-case rate of ABA runs (intervals.case_rate)                   the expected case rate
    agreement        a reviewer's two orders per pair, units counted (intervals.cluster_rate)  the expected rate
    correlation      BCa item bootstrap (geval.meta.pooled), Pearson/Spearman/Kendall  each coefficient on 2x10^5 draws
    Bradley-Terry    BCa bootstrap (arena BT_ROUNDS), the top model's rating          its strength (mean 1000)
    Elo              normal bootstrap interval, one random order (arena ELO_ROUNDS)  E[the estimator] on n battles

A rating's n, as in the summary, is its model's games (60 battles among 5 models: 24 games).

An interval "holds" at n >= 30 when its coverage is within two points of nominal. Below that, the
rows say which fall short and why (a percentile bootstrap over few items is too narrow: it
cannot see the values it never drew; a t interval of a skewed case rate leans).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from llmjury.families.arena.ratings import (
    Battles,
    bootstrap_bradley_terry,
    bootstrap_elo,
    bradley_terry,
    permuted_elo,
    win_counts,
)
from llmjury.families.arena.report import BT_ROUNDS, ELO_ORDERS, ELO_ROUNDS, bradley_terry_bounds
from llmjury.families.geval.meta import pooled
from llmjury.intervals import case_rate, cluster_rate, normal_interval
from llmjury.stats import CONFIDENCE, mean_metric, paired_difference, proportion

NOMINAL = CONFIDENCE
#: Coverage within this many points of nominal counts as holding (at n >= LARGE).
TOLERANCE = 0.02
LARGE = 30


@dataclass(frozen=True)
class Row:
    kind: str
    n: int
    covered: int
    total: int
    note: str = ""

    @property
    def coverage(self) -> float:
        return self.covered / self.total

    def line(self) -> str:
        se = math.sqrt(self.coverage * (1 - self.coverage) / self.total)
        gap = self.coverage - NOMINAL
        holds = "holds" if abs(gap) <= TOLERANCE else ("short" if gap < 0 else "wide")
        if self.n < LARGE:
            holds = f"{holds} (small n)"
        return (f"{self.kind:<22} {self.n:>6} {self.total:>6} {self.coverage:>9.3f} {se:>7.3f} {NOMINAL:>8.2f} "
                f"{100 * gap:>+7.1f}  {holds:<18} {self.note}")


#: Why a kind falls short of nominal over a handful of items.
SHORT_BECAUSE = {
    "rate": "a count of ten takes few values, so Wilson's coverage swings around nominal",
    "paired delta": "with no discordant pair, likely among ten cases, the paired interval is [0, 0]",
    "mean": "a t interval over a few skewed values leans",
    "consistency": "a t interval over ten skewed per-case shares leans",
    "agreement": "a ratio estimator's t interval over ten pairs leans",
    "correlation": "a bootstrap over ten items never draws the values it did not see: too narrow",
    "Bradley-Terry": "a rating at either end over a few dozen games is biased outwards",
    "Elo": "online Elo over a few dozen games has barely left its start",
}


def covered(low: float | None, high: float | None, truth: float) -> bool:
    """No interval (too few to tell) never covers: it is counted against the method, not skipped."""
    return low is not None and high is not None and low <= truth <= high


def simulate(kind: str, n: int, sims: int, one: Callable[[np.random.Generator], bool], seed: int,
             note: str = "") -> Row:
    rng = np.random.default_rng(seed)
    return Row(kind, n, sum(one(rng) for _ in range(sims)), sims, note)


def rate(n: int, sims: int) -> Row:
    p = 0.3

    def one(rng: np.random.Generator) -> bool:
        m = proportion(int(rng.binomial(n, p)), n)
        return covered(m["low"], m["high"], p)

    return simulate("rate (Wilson)", n, sims, one, 1)


def paired_delta(n: int, sims: int) -> Row:
    # a 2x2 table: both 1, rose, fell, neither (correlated runs)
    cells = np.array([0.55, 0.1, 0.05, 0.30])
    truth = cells[1] - cells[2]  # p_now - p_before

    def one(rng: np.random.Generator) -> bool:
        counts = rng.multinomial(n, cells)
        now = np.repeat([1, 1, 0, 0], counts).astype(float)
        before = np.repeat([1, 0, 1, 0], counts).astype(float)
        found = paired_difference(now, np.ones(n), before, np.ones(n))
        return found is not None and covered(found.low, found.high, truth)

    return simulate("paired delta (Newcombe)", n, sims, one, 2)


def mean(n: int, sims: int) -> Row:
    scores, weights = np.arange(1, 6), np.array([0.1, 0.15, 0.3, 0.3, 0.15])
    truth = float(scores @ weights)

    def one(rng: np.random.Generator) -> bool:
        m = mean_metric(rng.choice(scores, n, p=weights).tolist(), scale=(1, 5))
        return covered(m["low"], m["high"], truth)

    return simulate("mean (t)", n, sims, one, 3)


def consistency(n: int, sims: int) -> Row:
    """Cases judged ABA: a case's runs keep the preference with its own probability (cases differ),
    two swapped pairs per case share run B. Truth: the expected per-case share."""
    keep = np.array([0.95, 0.7, 0.4])
    share = np.array([0.6, 0.3, 0.1])
    # B agrees with the first A with chance q, with the second A when both or neither flipped
    truth = float(share @ ((keep + keep ** 2 + (1 - keep) ** 2) / 2))

    def one(rng: np.random.Generator) -> bool:
        q = rng.choice(keep, n, p=share)
        b_flips = rng.random(n) >= q  # run B against run A's preference
        a2_flips = rng.random(n) >= q  # the second A run against the first
        first_pair = ~b_flips
        second_pair = b_flips == a2_flips  # B and the second A agree
        m = case_rate(((first_pair.astype(float) + second_pair) / 2).tolist(), "position consistency")
        return covered(m["low"], m["high"], truth)

    return simulate("consistency (ABA)", n, sims, one, 4,
                    "t over per-case shares")


def agreement(n: int, sims: int) -> Row:
    """PRD-style agreement: each of n pairs judged in both orders (some orders dropped as ties), the two
    orders of a pair alike more often than chance. Truth: the expected agreement per counted order."""
    easy = np.array([0.9, 0.6, 0.3])  # a pair's chance of agreement in each order
    share = np.array([0.5, 0.3, 0.2])
    truth = float(share @ easy)

    def one(rng: np.random.Generator) -> bool:
        p = rng.choice(easy, n, p=share)
        same = rng.random(n) < 0.6  # the second order repeats the first's outcome
        first = rng.random(n) < p
        second = np.where(same, first, rng.random(n) < p)
        kept = rng.random((n, 2)) >= 0.15  # an order dropped as a tie
        wins = (first & kept[:, 0]).astype(int) + (second & kept[:, 1]).astype(int)
        m = cluster_rate(wins.astype(int).tolist(), kept.sum(axis=1).tolist(), "agreement")
        return covered(m["low"], m["high"], truth)

    return simulate("agreement (pairs)", n, sims, one, 5, "ratio t over pairs")


def correlation(n: int, sims: int) -> list[Row]:
    """Predicted = human 1-5 rating plus noise; each coefficient's truth from a million draws."""
    def draw(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
        human = rng.integers(1, 6, size).astype(float)
        return np.round(human + rng.normal(0, 1.2, size)), human

    from llmjury.correlation import correlations

    big_rng = np.random.default_rng(0)
    predicted, human = draw(big_rng, 200_000)
    truth = correlations(predicted, human)
    hits = {kind: 0 for kind in ("pearson", "spearman", "kendall")}
    rng = np.random.default_rng(5)
    for sim in range(sims):
        p, h = draw(rng, n)
        found = pooled(p, h, seed=sim)
        for kind in hits:
            hits[kind] += covered(found[kind]["low"], found[kind]["high"], truth[kind])
    return [Row(f"correlation ({kind})", n, hits[kind], sims, "item bootstrap, BCa") for kind in hits]


STRENGTHS = np.array([0.0, 40.0, 80.0, 150.0, 220.0])


def battles(rng: np.random.Generator, n: int) -> Battles:
    m = len(STRENGTHS)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    p = 1 / (1 + 10 ** ((STRENGTHS[b] - STRENGTHS[a]) / 400))
    score = (rng.random(n) < p).astype(float)
    return Battles([f"m{i}" for i in range(m)], a, b, score)


def bradley_terry_row(n: int, sims: int) -> Row:
    truth = STRENGTHS - STRENGTHS.mean() + 1000
    top = len(STRENGTHS) - 1

    def one(rng: np.random.Generator) -> bool:
        data = battles(rng, n)
        if len(set(data.a.tolist()) | set(data.b.tolist())) < len(STRENGTHS):
            return False
        samples = bootstrap_bradley_terry(data, rounds=BT_ROUNDS, seed=int(rng.integers(1 << 30)))
        low, high = bradley_terry_bounds(data, bradley_terry(win_counts(data)), samples, None)
        return covered(low[top], high[top], truth[top])

    return simulate("Bradley-Terry rating", games(n), sims, one, 6, f"{n} battles; BCa, {BT_ROUNDS} rounds, top model")


def games(battles: int) -> int:
    """A rating's n is its model's games: two models a battle, spread over the models."""
    return 2 * battles // len(STRENGTHS)


def elo_rows(n: int, sims: int, truth_sims: int) -> list[Row]:
    """Elo's truth is the expectation of its own estimator on n battles (online Elo moves from 1000
    towards the strengths as battles accumulate): the mean over many fresh data sets."""
    top = len(STRENGTHS) - 1
    rng = np.random.default_rng(7)
    truth = float(np.mean([permuted_elo(battles(rng, n), permutations=1, seed=i)[top] for i in range(truth_sims)]))
    hits = 0
    for sim in range(sims):
        data = battles(rng, n)
        point = permuted_elo(data, permutations=ELO_ORDERS, seed=sim)
        low, high = normal_interval(point, bootstrap_elo(data, rounds=ELO_ROUNDS, orders=ELO_ORDERS, seed=sim))
        hits += covered(low[top], high[top], truth)
    return [Row("Elo rating", games(n), hits, sims, f"{n} battles; {ELO_ROUNDS} rounds x {ELO_ORDERS} orders, "
                f"top model; truth from {truth_sims} data sets")]


def elo_width_by_seed(n: int, seeds: int) -> str:
    data = battles(np.random.default_rng(11), n)
    top = len(STRENGTHS) - 1
    widths = []
    for seed in range(seeds):
        point = permuted_elo(data, permutations=ELO_ORDERS, seed=seed)
        low, high = normal_interval(point, bootstrap_elo(data, rounds=ELO_ROUNDS, orders=ELO_ORDERS, seed=seed))
        widths.append(float(high[top] - low[top]))
    w = np.array(widths)
    span = float((w.max() - w.min()) / w.mean())
    verdict = "ok" if span < 0.10 else "MOVES"
    return (f"Elo interval width of the top model over {seeds} seeds, one data set of {n} battles: "
            f"{w.min():.1f} to {w.max():.1f} (mean {w.mean():.1f}); the range is {100 * span:.1f}% of the mean "
            f"({verdict}, target < 10%)")


def run_methods(path: str) -> list[str]:
    """The methods a saved run's figures name, counted: what its intervals are."""
    import json
    from collections import Counter
    from pathlib import Path

    summary = json.loads((Path(path) / "summary.json").read_text())
    methods: Counter[str] = Counter()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "value" in node and "method" in node and "n" in node:
                methods[str(node["method"]).split(";")[0]] += 1
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(summary)
    return [f"{count:>5}  {method}" for method, count in methods.most_common()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer simulations: a smoke run")
    parser.add_argument("--run", help="a saved run folder: list the interval methods its figures name")
    parser.add_argument("--sizes", type=lambda text: [int(n) for n in text.split(",")], default=[10, 30, 100],
                        help="the n of the rates, means, consistency and correlations (default 10,30,100)")
    parser.add_argument("--sims", type=int, help="simulations per kind (default 2000; 400 with --quick)")
    args = parser.parse_args()
    sims = args.sims or (400 if args.quick else 2000)
    heavy = max(10, sims // 5)  # kinds with a bootstrap inside every simulation
    started = time.perf_counter()
    print(f"coverage of each printed interval kind, nominal {NOMINAL:.2f}; 'holds' = within "
          f"{100 * TOLERANCE:.0f} points at n >= {LARGE}")
    print(f"{'kind':<22} {'n':>6} {'sims':>6} {'coverage':>9} {'+-se':>7} {'nominal':>8} {'gap':>7}  {'':<18} note")
    rows: list[Row] = []
    for n in args.sizes:
        for build in (rate, paired_delta, mean, consistency, agreement):
            rows.append(build(n, sims))
            print(rows[-1].line(), flush=True)
        for row in correlation(n, heavy):
            rows.append(row)
            print(row.line(), flush=True)
    for n in (60, 600):
        rows.append(bradley_terry_row(n, sims // 2))
        print(rows[-1].line(), flush=True)
        for row in elo_rows(n, heavy // 2, 4 * heavy):
            rows.append(row)
            print(row.line(), flush=True)
    print()
    print(elo_width_by_seed(600, 10))
    short = [r for r in rows if r.n >= LARGE and abs(r.coverage - NOMINAL) > TOLERANCE]
    small = [r for r in rows if r.n < LARGE and r.coverage < NOMINAL - TOLERANCE]
    print("at n >= 30: " + ("every kind within two points of nominal" if not short else
                            "outside two points: " + ", ".join(f"{r.kind} n={r.n}" for r in short)))
    if small:
        print("short at small n, and why:")
        for row in small:
            reason = next((why for kind, why in SHORT_BECAUSE.items() if row.kind.startswith(kind)), "")
            print(f"  {row.kind} n={row.n} ({row.coverage:.3f}): {reason}")
    if args.run:
        print()
        print(f"interval methods in {args.run}:")
        print("\n".join(run_methods(args.run)))
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
