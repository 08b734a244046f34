"""bench/peak.py: a command's peak memory is its own, not its parent's at the fork."""

from __future__ import annotations

import sys
from pathlib import Path

from script_module import script_module

PEAK = Path(__file__).resolve().parents[1] / "bench" / "peak.py"


def test_a_command_started_by_a_large_process_reports_its_own_peak_cpu_and_exit_code():
    """Before: wait4 from the bench's process gave `python -c pass` the bench's size (313 MB beside
    a 300 MB parent), so `llmjury report`'s peak in bench/aggregation.py was the bench's."""
    peak = script_module(PEAK, "bench_peak", registered=True)  # its dataclass looks its module up
    held = bytearray(200 * 1024 * 1024)
    held[:: 4096] = b"\1" * len(held[:: 4096])  # resident, not just reserved
    usage = peak.Measured([sys.executable, "-c", "raise SystemExit(3)"]).usage()
    assert usage.exit_code == 3 and 0 < usage.cpu_s < 5
    assert usage.peak_mb < 100 < len(held) / 2**20
