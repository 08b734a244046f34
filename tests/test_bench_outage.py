"""bench/outage.py stops the run store's own PostgreSQL mid-run, and prints what each fault cost:
nothing answered twice through a restart, nothing paid in both runs around a stop."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from infrastructure import needs

from llmjury.testing.postgres import binaries

OUTAGE_BENCH = Path(__file__).resolve().parents[1] / "bench" / "outage.py"


@pytest.mark.e2e  # two pytest runs a fault, on a PostgreSQL server of its own
@needs(binaries() is not None, "PostgreSQL's initdb and pg_ctl are not installed")
def test_the_bench_rides_out_a_restart_and_pays_nothing_twice_around_a_stop():
    done = subprocess.run([sys.executable, str(OUTAGE_BENCH), "--cases", "12", "--at", "4", "--down", "2",
                           "--workers", "0"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    restart = lines[lines.index(next(line for line in lines if line.startswith("restart:"))) + 2].split()
    assert restart[:5] == ["0", "exit", "0", "12/12", "12"] and restart[5] == "0", done.stdout
    assert float(restart[-2]) >= 2  # the wait the run reports: the server was away 2 s
    stopped = lines[lines.index(next(line for line in lines if line.startswith("stop:"))) + 2].split()
    # -n, the first run (exit, complete), answered, kept, handed back, paid in both runs, the second run
    assert stopped[1:5] == ["exit", "2,", "complete", "False"], done.stdout
    answered, kept, handed, twice = (int(value) for value in stopped[5:9])
    assert answered >= 4 and kept >= 1 and handed == kept and twice == 0, done.stdout
    assert stopped[-2:] == ["exit", "0"], done.stdout


def test_a_wrong_option_is_named():
    done = subprocess.run([sys.executable, str(OUTAGE_BENCH), "--cases", "5", "--at", "9"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "--at 9: must be between 1 and --cases - 1 (4)" in done.stderr
