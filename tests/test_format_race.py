"""No run dies with INTERNALERROR while failures are formatted on two threads at once: 50 runs at
`-n 2` of bench/format_race.py's suite (one definition, imported from there), all of whose planned
async tests fail with a deep traceback while the engine thread formats errors too."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from script_module import script_module

FORMAT_RACE = Path(__file__).resolve().parents[1] / "bench" / "format_race.py"
RUNS = 50
#: Failing tests a run: enough that both threads format at once, few enough that a run stays cheap.
CASES = 24


def format_race() -> ModuleType:
    return script_module(FORMAT_RACE, "format_race")


@pytest.mark.e2e  # 50 pytest runs of two xdist workers each
def test_fifty_runs_that_fail_every_test_at_n2_never_stop_with_internalerror(tmp_path):
    bench = format_race()
    bench.write_suite(tmp_path, CASES)
    for run in range(RUNS):
        output = bench.run_suite(tmp_path)
        assert "INTERNALERROR" not in output, f"run {run}:\n{output[-4000:]}"
        assert f"{CASES} failed" in output.splitlines()[-1], f"run {run}:\n{output[-4000:]}"
