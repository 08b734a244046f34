"""bench/compare.py, bench/ratings.py and bench/coverage.py run on a real run folder: a small
offline arena run made here (a saved run's summary is a RunSummary; bench/compare.py once read it
as a dict and crashed on every real folder)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # the run folder is a pytest run of its own; each test runs a bench script on it

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An offline arena run of 20 cases, saved as a run does."""
    where = tmp_path_factory.mktemp("run")
    done = subprocess.run([sys.executable, "-m", "pytest", "evals/test_arena.py", "-q", "-p", "no:cacheprovider",
                           "-n", "0", "--llm-sample", "20", "--llm-reports", str(where / "reports"),
                           "--llm-cache-path", str(where / "cache.sqlite")],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    reports = where / "reports"
    return reports / json.loads((reports / "latest" / "summary.json").read_text())["run"]["id"]


def bench(*args: str) -> str:
    done = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


def test_bench_compare_runs_on_a_real_run_folder(run_folder):
    out = bench("bench/compare.py", str(run_folder), str(run_folder))
    assert out.splitlines()[0].startswith("arena: ") and "jackknife" in out
    assert out.splitlines()[-1].startswith("all families: ")


def test_bench_ratings_rates_a_real_run_folders_battles_cold_beside_cold_and_warm_beside_warm(run_folder):
    pytest.importorskip("fastchat", reason="bench/ratings.py's reference is the bench extra (fschat)")
    out = bench("bench/ratings.py", "--run", str(run_folder), "--repeat", "1", "--bt-rounds", "4",
                "--bt-reference-rounds", "1", "--elo-rounds", "2")
    header = next(line for line in out.splitlines() if line.startswith("task"))
    assert "cold: FastChat" in header and "warm: FastChat" in header and "warm speed-up" in header
    assert f"the battles of {run_folder}" in out
    assert any(line.startswith("online Elo") and "(ok," in line for line in out.splitlines())


def test_bench_coverage_prints_each_kind_beside_nominal_and_the_methods_of_a_real_run(run_folder):
    out = bench("bench/coverage.py", "--sims", "60", "--sizes", "10,30", "--run", str(run_folder))
    for kind in ("rate (Wilson)", "paired delta (Newcombe)", "mean (t)", "consistency (ABA)",
                 "correlation (kendall)", "Bradley-Terry rating", "Elo rating"):
        assert any(line.startswith(kind) and "0.95" in line for line in out.splitlines()), kind
    assert "Elo interval width of the top model over 10 seeds" in out
    assert f"interval methods in {run_folder}:" in out and "bradley-terry, bootstrap" in out
