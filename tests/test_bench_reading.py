"""bench/reading.py's table: a row per answer shape and one for the corpus, each cell beside its
target, and the targets it misses named."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

from script_module import script_module

BENCH = Path(__file__).resolve().parents[1] / "bench" / "reading.py"


def bench_module():
    return script_module(BENCH, "bench_reading")


def test_the_table_sums_the_shapes_and_names_a_missed_target():
    bench = bench_module()
    counts = {"choice": Counter(correct=90, lost=10, correctly_unscored=5), "rating": Counter(correct=50, flipped=1)}
    lines = bench.table(counts)
    assert lines[0].split()[:2] == ["shape", "answers"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert rows["all"].split()[1:3] == ["156", "140"]  # answers, correct
    assert "1 (0)" in rows["rating"] and "10 (≤3)" in rows["choice"]
    assert bench.missed(counts) == ["flipped: 1 > 0.0", "lost: 10 > 4.5"]


def test_the_bench_runs_on_the_shipped_corpus_and_meets_its_targets():
    run = subprocess.run([sys.executable, str(BENCH)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "missed" not in run.stdout and run.stdout.splitlines()[-2].startswith("all")
