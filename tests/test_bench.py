"""bench/throughput.py's rows run what their names say: each row's pytest run collects its own N
tests and nothing of the other rows' suites beside it; each llmjury row is held to its targets."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from script_module import script_module

THROUGHPUT = Path(__file__).resolve().parents[1] / "bench" / "throughput.py"


@pytest.fixture(scope="module")
def throughput() -> ModuleType:
    return script_module(THROUGHPUT, "throughput")


def passed(command: list[str], cwd: Path) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(params=["autoload", "named plugins only"])
def plugins(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The bench runs with plugin autoload off (its default) or on (--all-plugins)."""
    if request.param == "named plugins only":
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return request.param


@pytest.mark.e2e  # bench/throughput.py's pytest run in a process of its own
def test_the_llmjury_row_runs_its_n_cases_and_none_of_the_floor_rows_tests(throughput, tmp_path, openai_server,
                                                                           plugins):
    throughput.write_suites(tmp_path, 3)
    last = passed(throughput.llmjury_command(tmp_path, openai_server.base_url, "0", 4, 0), tmp_path)
    assert last.startswith("3 passed"), last


@pytest.mark.e2e  # bench/throughput.py's pytest run in a process of its own
@pytest.mark.parametrize("workers", ["0", "2"])
def test_the_pytest_and_sdk_floor_row_answers_each_of_its_n_tests(throughput, tmp_path, openai_server, workers,
                                                                  plugins):
    throughput.write_suites(tmp_path, 3)
    last = passed(throughput.overlapped_command(tmp_path, openai_server.base_url, 3, 4, workers), tmp_path)
    assert last.startswith("3 passed"), last
    assert len(openai_server.requests) == 3  # each call made once, by the process its share fell to


@pytest.mark.parametrize(("option", "message"), [
    (["--concurrency", "0"], "argument --concurrency: 0 is below 1"),
    (["--workers", "0,x"], "argument --workers: 'x': each -n value is a count (0, 2...) or auto"),
    (["--cases", "many"], "argument --cases: 'many' is not an integer"),
    (["--cases", "100", "--small", "100"], "--small 100 must be below --cases 100"),
])
def test_a_wrong_option_is_refused_before_anything_runs(option, message):
    done = subprocess.run([sys.executable, str(THROUGHPUT), *option], capture_output=True, text=True)
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_a_row_whose_run_fails_shows_the_runs_own_error(throughput, tmp_path):
    (tmp_path / "run").mkdir()
    with pytest.raises(SystemExit, match=r"(?s)exited 3:.*no such model: bench"):
        failing = "import sys; print('no such model: bench', file=sys.stderr); sys.exit(3)"
        throughput.timed([sys.executable, "-c", failing], tmp_path / "run")


def test_a_row_is_held_to_its_targets_and_a_floor_above_the_cpu_target_is_named(throughput):
    row = throughput.Row("llmjury", "2")
    within = throughput.against_targets(row, 1.2, 1.29, 0.0)
    assert "wall 1.20x (met <= 1.25x)" in within and "cpu/call 1.29x (met <= 1.3x)" in within
    assert "pytest alone" not in within  # no floor row run, or one under the target: nothing to say
    beyond = throughput.against_targets(throughput.Row("llmjury", "0"), 1.2, 2.1, 1.62)
    assert "wall 1.20x (MISSED <= 1.15x)" in beyond and "cpu/call 2.10x (MISSED <= 1.3x)" in beyond
    assert "already costs 1.62x" in beyond
    assert "pytest alone" not in throughput.against_targets(row, 1.0, 1.0, 1.2)
    assert "pytest+SDK" not in beyond  # not run


def test_a_row_missing_its_cpu_target_is_set_beside_the_overlapped_floor(throughput):
    """Where the bare SDK's calls overlapped with the same tests cost more than the target too, the
    line says on which side of that floor llmjury is."""
    row = throughput.Row("llmjury", "0")
    assert "costs 1.80x per call: llmjury's is under it" in throughput.against_targets(row, 1.1, 1.6, 1.2, 1.8)
    assert "costs 1.50x per call: llmjury's is above it" in throughput.against_targets(row, 1.1, 1.6, 1.2, 1.5)
    assert "pytest+SDK" not in throughput.against_targets(row, 1.1, 1.2, 1.2, 1.8)  # llmjury met its target
    assert "pytest+SDK" not in throughput.against_targets(row, 1.1, 1.6, 1.2, 1.25)  # the floor is under it
