"""llmjury's ratings beside FastChat's on the same battles: time, speed-up and agreement per task.

    pip install -e '.[bench]'         # fschat 0.2.36 (FastChat's PyPI release) and what its import needs
    python bench/ratings.py           # 10^6 battles among 30 models
    python bench/ratings.py --battles 100000 --bt-reference-rounds 100

The four tasks and FastChat's function for each (fastchat/serve/monitor/elo_analysis.py; the
release has no rating_systems.py, so these are its closest counterparts):

    online Elo                compute_elo                                  (pandas row loop)
    Bradley-Terry             compute_elo_mle_with_tie                     (scikit-learn LogisticRegression)
    BT bootstrap, 100 rounds  get_bootstrap_result(compute_elo_mle_with_tie)
    Elo bootstrap, 10 rounds  get_bootstrap_result(compute_elo)

FastChat's bootstrap is a plain loop over rounds, so by default its BT bootstrap runs a few rounds
and is scaled to the full count (said on its row); `--bt-reference-rounds 100` runs them all.
Like is timed with like: each side's first call in the process (cold) and the best of `--repeat`
calls after it (warm) stand side by side, and the speed-up compares warm with warm. The compiled
Elo pass is loaded once before any timing (its cost, paid once per process, is printed).
`--run PATH` takes the battles of a saved run's largest arena leaderboard instead of synthetic
ones. Agreement: Elo within 1e-6 of
FastChat on the same battles in the same order (bootstrap: on llmjury's first resample); Bradley-
Terry within 0.1 rating points after centring both (bootstrap: FastChat's fit of llmjury's first
resampled count matrix). FastChat's logistic regression stops at scikit-learn's default tolerance
(1e-4), which leaves its own ratings about 0.1 points from its optimum on 10^6 battles; agreement is
therefore checked against the same FastChat function run to convergence (a tighter tolerance, set
for that check only, never for a timed run), and the gap to the fit as shipped is printed beside it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import sys
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from llmjury.families.arena.ratings import (
    COMPILED_ELO_UPDATES,
    Battles,
    bootstrap_bradley_terry,
    bootstrap_elo,
    bradley_terry,
    elo_passes,
    online_elo,
    resampled_wins,
    win_counts,
)

ELO_TOLERANCE, BT_TOLERANCE = 1e-6, 0.1


def unshadow_coverage() -> None:
    """Take this script's folder off the import path before numba loads: bench/coverage.py shares
    its name with coverage.py, which numba probes for when it is imported."""
    here = Path(__file__).resolve().parent
    sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != here]


def fastchat() -> types.ModuleType:
    """FastChat's elo_analysis module, imported from the installed release.

    `fastchat.model`'s package init loads torch and transformers for model serving; the rating
    code needs only `fastchat.model.model_registry`, so the package is entered without its init.
    """
    spec = importlib.util.find_spec("fastchat")
    if spec is None or spec.origin is None:
        raise SystemExit("bench/ratings.py needs FastChat's release: pip install -e '.[bench]'")
    package = types.ModuleType("fastchat.model")
    package.__path__ = [str(Path(spec.origin).parent / "model")]
    sys.modules.setdefault("fastchat.model", package)
    from fastchat.serve.monitor import elo_analysis

    return elo_analysis


@contextlib.contextmanager
def converged() -> Iterator[None]:
    """FastChat's fits with scikit-learn's LogisticRegression run to convergence (agreement checks only)."""
    from sklearn import linear_model

    shipped = linear_model.LogisticRegression

    class Converged(shipped):  # type: ignore[misc, valid-type]
        def __init__(self, **options: Any) -> None:
            super().__init__(**{**options, "tol": 1e-10, "max_iter": 10_000})

    linear_model.LogisticRegression = Converged
    try:
        yield
    finally:
        linear_model.LogisticRegression = shipped


def synthetic(n: int, models: int, seed: int) -> pd.DataFrame:
    """Battles among models of spread-out strengths, 10% ties (a third of them both bad)."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 150, size=models)
    a = rng.integers(0, models, size=n)
    b = (a + rng.integers(1, models, size=n)) % models
    p = 1 / (1 + 10 ** ((strength[b] - strength[a]) / 400))
    u = rng.random(n)
    winner = np.where(u < 0.1, np.where(u < 0.033, "tie (bothbad)", "tie"),
                      np.where(rng.random(n) < p, "model_a", "model_b"))
    names = np.array([f"model-{i:02d}" for i in range(models)])
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner})


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


@dataclass(frozen=True)
class Timing:
    """One side's cold call (the first in the process) and warm calls (the best of those after it)."""

    cold: float
    warm: float
    result: Any


def cold_and_warm(fn: Callable[[], Any], repeat: int, scale: float = 1.0) -> Timing:
    cold, result = timed(fn)
    warm = min(timed(fn)[0] for _ in range(repeat))
    return Timing(cold * scale, warm * scale, result)


def as_frame(wins: np.ndarray, models: list[str]) -> pd.DataFrame:
    """Battles with the pair-count matrix `wins` (ties half to each side), for FastChat's fit."""
    rows: list[tuple[str, str, str]] = []
    for i in range(len(models)):
        for j in range(i + 1, len(models)):
            ties = round(2 * (wins[i, j] % 1))
            rows += [(models[i], models[j], "model_a")] * int(wins[i, j]) + \
                    [(models[i], models[j], "model_b")] * int(wins[j, i]) + [(models[i], models[j], "tie")] * ties
    return pd.DataFrame(rows, columns=["model_a", "model_b", "winner"])


def gap(ours: np.ndarray, theirs: dict[str, float] | pd.Series, models: list[str], *, centred: bool) -> float:
    reference = np.array([theirs[m] for m in models])
    if centred:
        return float(np.abs((ours - ours.mean()) - (reference - reference.mean())).max())
    return float(np.abs(ours - reference).max())


def run_battles(path: Path) -> pd.DataFrame:
    """The battles of a saved run's largest arena leaderboard (judge verdicts in case-id order)."""
    from llmjury.families.arena import FAMILY
    from llmjury.families.arena.report import group_name, winner_of
    from llmjury.saved import load_run

    verdicts = [FAMILY.typed(r) for r in load_run(path, "run").records if r["family"] == "arena"]
    groups: dict[str, list[Any]] = {}
    for v in verdicts:
        if v.valid and winner_of(v) is not None and "model_a" in v.attributes:
            groups.setdefault(group_name(v), []).append(v)
    if not groups:
        raise SystemExit(f"{path}: no scored arena battles in this run")
    largest = sorted(max(groups.values(), key=len), key=lambda v: v.case_id)
    return pd.DataFrame({"model_a": [v.attributes["model_a"] for v in largest],
                         "model_b": [v.attributes["model_b"] for v in largest],
                         "winner": [winner_of(v) for v in largest]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--battles", type=int, default=1_000_000)
    parser.add_argument("--models", type=int, default=30)
    parser.add_argument("--run", type=Path, help="a saved run folder: rate its arena battles instead")
    parser.add_argument("--bt-rounds", type=int, default=100)
    parser.add_argument("--elo-rounds", type=int, default=10)
    parser.add_argument("--bt-reference-rounds", type=int, default=3,
                        help="FastChat BT bootstrap rounds actually run, scaled to --bt-rounds (default 3)")
    parser.add_argument("--repeat", type=int, default=2, help="warm calls per side and task after the cold one")
    args = parser.parse_args()

    unshadow_coverage()
    fc = fastchat()
    frame = run_battles(args.run) if args.run else synthetic(args.battles, args.models, 0)
    to_arrays, battles = timed(lambda: Battles.from_rows(frame["model_a"].tolist(), frame["model_b"].tolist(),
                                                         frame["winner"].tolist()))
    models = battles.models
    tiny = Battles(models[:2], np.array([0]), np.array([1]), np.array([1.0]))
    # a pass long enough to take the compiled path: numba's import and cached code load once here
    warm_up, _ = timed(lambda: elo_passes(tiny, [np.zeros(COMPILED_ELO_UPDATES + 1, dtype=np.int64)],
                                          updates=COMPILED_ELO_UPDATES + 1))
    source = f"the battles of {args.run}" if args.run else "synthetic battles"
    print(f"{len(battles):,} {source} among {len(models)} models; llmjury reads them into arrays in "
          f"{to_arrays:.2f} s (not counted below); compiled Elo pass loaded in {warm_up:.2f} s (once per process, "
          "not counted)")
    rows: list[tuple[str, Timing, Timing, str, str]] = []

    theirs = cold_and_warm(lambda: fc.compute_elo(frame), args.repeat)
    ours = cold_and_warm(lambda: online_elo(battles), args.repeat)
    rows.append(("online Elo", theirs, ours, "compute_elo",
                 _agree(gap(ours.result, theirs.result, models, centred=False), ELO_TOLERANCE)))

    theirs = cold_and_warm(lambda: fc.compute_elo_mle_with_tie(frame), args.repeat)
    ours = cold_and_warm(lambda: bradley_terry(win_counts(battles)), args.repeat)
    with converged():
        exact = fc.compute_elo_mle_with_tie(frame)
    rows.append(("Bradley-Terry", theirs, ours, "compute_elo_mle_with_tie",
                 _agree(gap(ours.result, exact, models, centred=True), BT_TOLERANCE,
                        gap(ours.result, theirs.result, models, centred=True))))

    ran = min(args.bt_reference_rounds, args.bt_rounds)
    theirs = cold_and_warm(lambda: fc.get_bootstrap_result(frame, fc.compute_elo_mle_with_tie, num_round=ran),
                           args.repeat, scale=args.bt_rounds / ran)
    ours = cold_and_warm(lambda: bootstrap_bradley_terry(battles, rounds=args.bt_rounds), args.repeat)
    with converged():
        first = fc.compute_elo_mle_with_tie(as_frame(resampled_wins(battles, rounds=1)[0], models))
    scaled = "" if ran == args.bt_rounds else f", {ran} rounds run and scaled"
    rows.append((f"BT bootstrap x{args.bt_rounds}", theirs, ours, f"get_bootstrap_result{scaled}",
                 _agree(gap(ours.result[0], first, models, centred=True), BT_TOLERANCE)))

    theirs = cold_and_warm(lambda: fc.get_bootstrap_result(frame, fc.compute_elo, num_round=args.elo_rounds),
                           args.repeat)
    ours = cold_and_warm(lambda: bootstrap_elo(battles, rounds=args.elo_rounds), args.repeat)
    order = np.random.default_rng(0).integers(0, len(battles), size=len(battles))  # bootstrap_elo's first round
    first = fc.compute_elo(frame.iloc[order])
    rows.append((f"Elo bootstrap x{args.elo_rounds}", theirs, ours, "get_bootstrap_result",
                 _agree(gap(ours.result[0], first, models, centred=False), ELO_TOLERANCE)))

    print(f"{'task':<20} {'cold: FastChat':>15} {'llmjury':>9} {'warm: FastChat':>15} {'llmjury':>9} "
          f"{'warm speed-up':>14}  {'agreement (max |diff|)':<44} reference")
    for task, theirs, ours, reference, agreement in rows:
        print(f"{task:<20} {theirs.cold:>14.3f}s {ours.cold:>8.3f}s {theirs.warm:>14.3f}s {ours.warm:>8.3f}s "
              f"{theirs.warm / ours.warm:>13.1f}x  {agreement:<44} {reference}")


def _agree(difference: float, tolerance: float, as_shipped: float | None = None) -> str:
    verdict = "ok" if difference <= tolerance else "DIFFERS"
    shipped = "" if as_shipped is None else f"; as shipped {as_shipped:.2g}"
    return f"{difference:.2g} ({verdict}, <= {tolerance:g}{shipped})"


if __name__ == "__main__":
    main()
