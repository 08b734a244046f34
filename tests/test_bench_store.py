"""bench/store.py prints each backend's figures side by side with their targets, and checks that the
racing claimants won each key exactly once overall (exiting 1 otherwise)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from script_module import script_module

STORE_BENCH = Path(__file__).resolve().parents[1] / "bench" / "store.py"
TINY = ["--samples", "60", "--each", "5", "--reads", "20", "--claim-keys", "300", "--batch", "40",
        "--processes", "3", "--backlog", "200", "--waited", "50"]
ROWS = ("put, amortized", "put, awaited each", "cache-hit get p50", "cache-hit get p95", "claims/s per process",
        "each key claimed exactly once", "cached replay", "answer put to commit p95", "waiting process: statements/s")


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    try:
        yield script_module(STORE_BENCH, "bench_store", registered=True)
    finally:
        sys.modules.pop("bench_store", None)


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(STORE_BENCH), *args], capture_output=True, text=True, timeout=300,
                          env=env)


def row(output: str, name: str) -> str:
    found = [line for line in output.splitlines() if line.strip().startswith(name)]
    assert len(found) == 1, output
    return found[0]


def test_a_key_won_twice_or_by_no_one_is_reported(bench):
    assert bench.exactly_once(["a", "b", "c"], [["a", "b"], ["c"]]) == []
    assert bench.exactly_once(["a", "b", "c"], [["a", "b"], ["b"]]) == [
        "1 keys claimed more than once (first b)", "1 keys claimed by no process (first c)"]


@pytest.mark.e2e  # bench/store.py in a process of its own, and three claimant processes
def test_the_sqlite_column_has_every_figure_and_each_key_went_to_one_claimant():
    done = run(*TINY, "--backends", "sqlite")
    assert done.returncode == 0, done.stdout + done.stderr
    for name in ROWS:
        figures = row(done.stdout, name).split("   ")
        assert any(re.search(r"\d", part) or part.strip() == "yes" for part in figures[1:]), done.stdout
    assert re.search(r"each key claimed exactly once\s+yes\s+-", done.stdout), done.stdout
    assert ">= 5,000" in row(done.stdout, "claims/s per process")
    assert "postgres: not measured: not asked for (--backends)" in done.stdout


@pytest.mark.e2e  # bench/store.py in a process of its own, and three claimant processes
def test_the_postgres_column_is_measured_on_the_server_given(postgres_dsn):
    env = {**os.environ, "LLMJURY_TEST_POSTGRES_DSN": postgres_dsn}
    done = run(*TINY, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "postgresql: the server in LLMJURY_TEST_POSTGRES_DSN" in done.stdout
    assert re.search(r"each key claimed exactly once\s+yes\s+yes", done.stdout), done.stdout
    assert re.search(r"postgresql <= 2x sqlite: [\d.]+x (met|MISSED)", row(done.stdout, "cached replay")), done.stdout


@pytest.mark.parametrize(("option", "message"), [
    (["--backends", "sqlite,mysql"], "argument --backends: mysql: each backend is one of sqlite, postgres"),
    (["--batch", "0"], "argument --batch: 0 is below 1"),
])
def test_a_wrong_option_is_refused_before_anything_runs(option, message):
    done = run(*option)
    assert done.returncode == 2 and message in done.stderr, done.stderr
