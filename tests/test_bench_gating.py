"""bench/gating.py runs llmjury's comparison and gates over simulated pull requests and prints, per
gate style, failure and inconclusive rates side by side, the recommended gate at the shipped level
beside the option's default 0.95."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

GATING = Path(__file__).resolve().parents[1] / "bench" / "gating.py"
ROW = re.compile(r"^(M\.delta\S* @[\d.]+(?: \(default\)|, two outcomes)?)\s+(\d+)\s+([\d. ]+)$", re.MULTILINE)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(GATING), *args], capture_output=True, text=True, timeout=300)


@pytest.mark.e2e  # bench/gating.py's quick run in a process of its own
def test_the_quick_run_prints_every_gate_style_and_the_default_gate_at_both_levels_with_its_targets():
    done = run("--quick")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert out.startswith("60 simulated PRs per cell")
    for name in ("M.delta.high>=0 @0.92 (default)", "M.delta.high>=0 @0.95"):
        assert out.count(f"targets for {name}: ") == 2  # rates, then 1-5 scores
    for level in (92, 95):
        assert out.count(f"coverage of the {level}% paired interval") == 2
    rows = ROW.findall(out)
    assert len(rows) == 2 * 5 * 3  # two metric kinds, five gate styles, three sizes
    unchanged = {(label, n): float(figures.split()[0]) for label, n, figures in rows[:15]}
    # the old two-outcome bound gate fails most unchanged PRs at n=60; the three-outcome one none
    assert unchanged["M.delta.low>=-0.05 @0.95, two outcomes", "60"] > 30
    assert unchanged["M.delta.low>=-0.05 @0.95", "60"] == 0
    fifteen = {(label, n): float(figures.split()[4]) for label, n, figures in rows[:15]}
    # a narrower interval fails at least every PR the wider one fails: the same PRs at two levels
    assert fifteen["M.delta.high>=0 @0.92 (default)", "60"] >= fifteen["M.delta.high>=0 @0.95", "60"]


@pytest.mark.e2e  # bench/gating.py's quick run in a process of its own
def test_another_level_for_the_default_gate_is_shown_beside_095():
    done = run("--quick", "--confidence", "0.9")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "targets for M.delta.high>=0 @0.9 (default): " in done.stdout
    assert "targets for M.delta.high>=0 @0.95: " in done.stdout


def test_a_wrong_option_is_refused():
    done = run("--prs", "0")
    assert done.returncode == 2 and "argument --prs: 0 is below 1" in done.stderr
    done = run("--confidence", "1")
    assert done.returncode == 2 and "argument --confidence: 1.0 is not strictly between 0.5 and 1" in done.stderr
