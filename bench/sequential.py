"""Sequential gates on simulated pull requests: a confidence sequence looked at after every batch,
beside the fixed-n paired interval peeked at the same points and the fixed-n design looked at once.

    python bench/sequential.py            # 400 PRs per cell
    python bench/sequential.py --quick    # 60 PRs per cell, a smoke test

Each simulated PR draws its cases afresh, runs "main" and "the PR" on the same cases and judges each
once with a judge that flips a verdict with probability --flip (bench/gating.py's rate model: main
is right on a case with probability 0.8; a PR that drops the rate by D points makes each right case
wrong with probability D / 0.8). The gate is the paired delta `M.delta>=0` at 95%: it fails when the
whole interval lies below 0. Cases arrive in batches of --batch; after each batch

* **sequential** (`--llm-sequential`): llmjury's betting confidence sequence
  (`llmjury.sequential.confidence`) over the per-case deltas decides the gate (`llmjury.sequential.decide`);
  a decided gate stops the run, and the cases left are not judged;
* **fixed-n peeking**: the fixed-n interval the comparison reports (`llmjury.stats.paired_difference`,
  Newcombe's paired interval) is looked at after every batch too, and the first look that fails
  the gate fails the PR: what a user who reruns a fixed-n gate as data arrive gets;
* **fixed n**: the same interval looked at once, on all n cases: the design the calls are saved against.

Targets (issue: anytime-valid gates): sequential false failures on unchanged PRs <= 5% while looking
after every batch; at least 40% fewer judge calls than fixed n against a 15-point drop; power within
5 points of fixed n. The last line states them at the design size --n.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from llmjury.sequential.confidence import betting_bounds
from llmjury.sequential.decide import decided
from llmjury.stats import paired_difference

SIZES = (200, 400, 800)
DROPS = (0.0, 0.05, 0.10, 0.15, 0.20)
MAIN_RATE = 0.8
CONFIDENCE = 0.95
#: Candidate means of the sequence's grid in the simulation (llmjury itself uses a finer one): a
#: coarser grid only rounds bounds outward, so decisions here are, if anything, later than llmjury's.
GRID = 401
#: PRs simulated at once (memory: PRs x 256 x GRID floats).
CHUNK = 100


@dataclass
class Cell:
    """Outcomes of one (n, drop) cell."""

    runs: int = 0
    seq_fail: int = 0
    seq_pass: int = 0
    seq_cases: list[int] = field(default_factory=list)
    peek_fail: int = 0
    fixed_fail: int = 0


def draw(rng: np.random.Generator, prs: int, n: int, drop: float, flip: float) -> tuple[np.ndarray, np.ndarray]:
    """Each PR's judged 0/1 outcome per case, on the PR and on main."""
    main = rng.random((prs, n)) < MAIN_RATE
    pr = main & (rng.random((prs, n)) >= drop / MAIN_RATE)
    now, before = (truth ^ (rng.random((prs, n)) < flip) for truth in (pr, main))
    return now.astype(float), before.astype(float)


def simulate(n: int, drop: float, prs: int, batch: int, flip: float, seed: int) -> Cell:
    """`prs` simulated PRs of one cell through the three designs."""
    rng = np.random.default_rng(seed)
    looks = np.arange(batch, n + 1, batch)
    if looks[-1] != n:
        looks = np.r_[looks, n]
    ones = np.ones(n)
    cell = Cell()
    for start in range(0, prs, CHUNK):
        now, before = draw(rng, min(CHUNK, prs - start), n, drop, flip)
        # per-case deltas in [-1, 1] mapped onto [0, 1], as llmjury maps a delta's scale
        low, high = betting_bounds((now - before + 1) / 2, 1 - CONFIDENCE, GRID, looks)
        low, high = 2 * low - 1, 2 * high - 1
        for r in range(len(now)):
            cell.runs += 1
            stop = n
            for k, t in enumerate(looks):
                outcome = decided(">=", 0.0, low[r, k], high[r, k])
                if outcome is not None:
                    cell.seq_fail += outcome == "fail"
                    cell.seq_pass += outcome == "pass"
                    stop = int(t)
                    break
            cell.seq_cases.append(stop)
            for t in looks:
                found = paired_difference(now[r, :t], ones[:t], before[r, :t], ones[:t], CONFIDENCE)
                if found is not None and found.high is not None and found.high < 0:
                    cell.peek_fail += 1
                    break
            final = paired_difference(now[r], ones, before[r], ones, CONFIDENCE)
            cell.fixed_fail += final is not None and final.high is not None and final.high < 0
    return cell


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, default=400, help="simulated pull requests per cell (default 400)")
    parser.add_argument("--quick", action="store_true", help="60 PRs per cell: a smoke test, not figures")
    parser.add_argument("--batch", type=int, default=20, help="cases per batch: a look after each (default 20)")
    parser.add_argument("--n", type=int, default=400, choices=SIZES, help="the design size of the last line")
    parser.add_argument("--flip", type=float, default=0.03, help="judge's verdict flip probability per run")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    prs = 60 if args.quick else args.prs
    if prs < 1:
        parser.error(f"argument --prs: {prs} is below 1")
    if args.batch < 1:
        parser.error(f"argument --batch: {args.batch} is below 1")
    started = time.perf_counter()
    print(f"{prs} simulated PRs per cell; gate M.delta>=0 at {CONFIDENCE:g} on a rate (main {MAIN_RATE}, judge "
          f"flips a verdict with p={args.flip}); a look after every {args.batch} cases")
    print("fail %: the gate failed the PR; seq: confidence sequence, stops once decided; peek: fixed-n interval "
          "looked at after every batch; fixed: looked at once, at n; cases %: cases judged by seq, of n")
    head = "".join(f"{f'{round(d * 100)}-pt drop' if d else 'unchanged':>30}" for d in DROPS)
    print(f"{'n':>5}{head}")
    print(f"{'':>5}" + "   seq  peek fixed  seq cases %" * len(DROPS))
    cells = {(n, drop): simulate(n, drop, prs, args.batch, args.flip, args.seed + 10 * i + j)
             for i, n in enumerate(SIZES) for j, drop in enumerate(DROPS)}
    for n in SIZES:
        row = ""
        for drop in DROPS:
            c = cells[n, drop]
            row += (f"{100 * c.seq_fail / c.runs:>6.1f}{100 * c.peek_fail / c.runs:>6.1f}"
                    f"{100 * c.fixed_fail / c.runs:>6.1f}{100 * np.mean(c.seq_cases) / n:>12.1f}")
        print(f"{n:>5}{row}")
    unchanged, dropped = cells[args.n, 0.0], cells[args.n, 0.15]
    false_seq = 100 * unchanged.seq_fail / unchanged.runs
    false_peek = 100 * unchanged.peek_fail / unchanged.runs
    saved = 100 * (1 - np.mean(dropped.seq_cases) / args.n)
    power_seq, power_fixed = 100 * dropped.seq_fail / dropped.runs, 100 * dropped.fixed_fail / dropped.runs
    met = false_seq <= 5 and saved >= 40 and power_seq >= power_fixed - 5
    print(f"targets at n={args.n}: false failures <= 5%, >= 40% fewer calls at a 15-point drop, power within 5 "
          f"points of fixed n: {'met' if met else 'NOT met'} ({time.perf_counter() - started:.0f} s)")
    print(f"sequential: false failures {false_seq:.1f}% (fixed-n peeking {false_peek:.1f}%), calls saved "
          f"{saved:.0f}% at a 15-point drop, power {power_seq:.0f}% (fixed n {power_fixed:.0f}%)")


if __name__ == "__main__":
    main()
