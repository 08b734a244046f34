"""bench/growth.py refuses sizes it cannot measure before it starts any run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

GROWTH = Path(__file__).resolve().parents[1] / "bench" / "growth.py"


@pytest.mark.parametrize(("option", "message"), [
    (["--sizes", "1000,many"], "--sizes '1000,many': numbers of cases, comma-separated"),
    (["--sizes", "5"], "--sizes 5: each size must be above the 10-case baseline"),
    (["--shards", "1"], "--shards 1: a number of shards above 1 (0: none)"),
])
def test_a_wrong_size_is_refused_before_anything_runs(option, message):
    done = subprocess.run([sys.executable, str(GROWTH), *option], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "load average" not in done.stdout  # no run started
