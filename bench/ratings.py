"""Time to rate synthetic battles: online Elo, Bradley-Terry, and their bootstraps.

    python bench/ratings.py            # 10^4, 10^5 and 10^6 battles among 20 models
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np

from llmjury.families.arena.ratings import (
    Battles,
    bootstrap_bradley_terry,
    bootstrap_elo,
    bradley_terry,
    online_elo,
    win_counts,
)


def synthetic(n: int, models: int, seed: int) -> Battles:
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 150, size=models)
    a = rng.integers(0, models, size=n)
    b = (a + rng.integers(1, models, size=n)) % models
    p = 1 / (1 + 10 ** ((strength[b] - strength[a]) / 400))
    u = rng.random(n)
    score = np.where(u < 0.1, 0.5, np.where(rng.random(n) < p, 1.0, 0.0))
    return Battles([f"m{i}" for i in range(models)], a, b, score)


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--bt-rounds", type=int, default=200)
    parser.add_argument("--elo-rounds", type=int, default=20)
    args = parser.parse_args()
    print(f"{'battles':>9} {'elo':>8} {'bt':>8} {'bt bootstrap':>14} {'elo bootstrap':>15}")
    for n in (int(s) for s in args.sizes.split(",")):
        battles = synthetic(n, args.models, 0)
        elo = timed(partial(online_elo, battles))
        bt = timed(lambda b=battles: bradley_terry(win_counts(b)))
        bt_boot = timed(partial(bootstrap_bradley_terry, battles, rounds=args.bt_rounds))
        elo_boot = timed(partial(bootstrap_elo, battles, rounds=args.elo_rounds))
        print(f"{n:>9} {elo:>7.2f}s {bt:>7.3f}s {bt_boot:>8.2f}s ({args.bt_rounds}) "
              f"{elo_boot:>8.2f}s ({args.elo_rounds})")


if __name__ == "__main__":
    main()
