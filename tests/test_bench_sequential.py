"""bench/sequential.py simulates pull requests through the confidence sequence, the fixed-n interval
peeked at the same points, and the fixed-n design, and ends with the figures the targets name."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

SEQUENTIAL = Path(__file__).resolve().parents[1] / "bench" / "sequential.py"
LAST = re.compile(r"^sequential: false failures ([\d.]+)% \(fixed-n peeking ([\d.]+)%\), calls saved (-?\d+)% at a "
                  r"15-point drop, power (\d+)% \(fixed n (\d+)%\)$")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SEQUENTIAL), *args], capture_output=True, text=True, timeout=600)


@pytest.mark.e2e  # bench/sequential.py's quick run in a process of its own
def test_the_quick_run_ends_with_the_targets_line_and_saves_calls_against_a_clear_drop():
    done = run("--quick")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    found = LAST.match(lines[-1])
    assert found, lines[-1]
    false_seq, false_peek, saved, power, fixed = (float(x) for x in found.groups())
    assert false_seq <= 5 and saved >= 40 and power >= fixed - 5
    assert false_seq <= false_peek  # looking after every batch costs the fixed-n interval, not the sequence
    assert lines[-2].startswith("targets at n=400: ")
    assert sum(line.strip().startswith(("200 ", "400 ", "800 ")) for line in lines) == 3


def test_a_wrong_option_is_refused():
    done = run("--prs", "0")
    assert done.returncode == 2 and "argument --prs: 0 is below 1" in done.stderr
