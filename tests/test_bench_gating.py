"""bench/gating.py runs llmjury's comparison and gates over simulated pull requests and prints, per
gate style, failure and inconclusive rates side by side."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

GATING = Path(__file__).resolve().parents[1] / "bench" / "gating.py"


def test_the_quick_run_prints_every_gate_style_for_rates_and_scores_with_the_defaults_targets():
    done = subprocess.run([sys.executable, str(GATING), "--quick"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert out.startswith("60 simulated PRs per cell")
    assert out.count("targets for M.delta.high>=0 (default)") == 2  # rates, then 1-5 scores
    assert out.count("coverage of the 95% paired interval") == 2
    rows = re.findall(r"^(M\.delta\S*(?: \(default\)|, two outcomes)?)\s+(\d+)\s+([\d. ]+)$", out, re.MULTILINE)
    assert len(rows) == 2 * 4 * 3  # two metric kinds, four gate styles, three sizes
    unchanged = {(label, n): float(figures.split()[0]) for label, n, figures in rows[:12]}
    # the old two-outcome bound gate fails most unchanged PRs at n=60; the three-outcome one none
    assert unchanged["M.delta.low>=-0.05, two outcomes", "60"] > 30
    assert unchanged["M.delta.low>=-0.05", "60"] == 0


def test_a_wrong_option_is_refused():
    done = subprocess.run([sys.executable, str(GATING), "--prs", "0"], capture_output=True, text=True)
    assert done.returncode == 2 and "argument --prs: 0 is below 1" in done.stderr
