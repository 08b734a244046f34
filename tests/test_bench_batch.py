"""bench/batch.py runs every step on the lines it is given and prints each provider's total beside its target."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.mark.e2e  # bench/batch.py in a process of its own
def test_the_batch_bench_prints_each_step_and_a_total_per_provider_beside_the_target():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(BENCH.parent / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "batch.py", "--lines", "120", "--target", "60"], cwd=BENCH, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "120 tiny judge requests, llmjury's own time (target 60 s per provider)"
    assert any("openai: write 1 JSONL file(s)" in line for line in lines)
    submitted = [line.split()[:6] for line in lines if "to the fake" in line]
    assert submitted == [["openai:", "submit", "1", "batch(es)", "to", "the"],
                         ["gemini:", "submit", "1", "batch(es)", "to", "the"]]
    assert [line.split()[0] for line in lines[-2:]] == ["openai", "gemini"]
    assert all("(target 60 s)" in line for line in lines[-2:])
