"""Time of a session end: aggregating a run's saved verdicts, per family, beside the 10 s target.

    python bench/aggregation.py                                  # reports/latest
    python bench/aggregation.py reports/<run> --target 10

The session end and `llmjury report` run the same code (`aggregate.family_section` for each family,
then the report files; the command a family at a time, `llmjury.reporting.by_family`); this times
each family's share of it in one process, then the whole `llmjury report` command as a user runs it
(interpreter start-up and imports included) into a scratch folder, with its peak memory, then the
session end of a small run (12 toy cases, `pytest -n 0`, the fixed cost every small run pays):
its `pytest_sessionfinish` hooks, llmjury's report among them, timed from the toy's conftest.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from peak import Measured

from llmjury.collector import held_off
from llmjury.families import discover
from llmjury.pricing import PriceTable
from llmjury.results import aggregate
from llmjury.runfiles import read_verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("verdicts", type=Path, nargs="?", default=Path("reports/latest"))
    parser.add_argument("--target", type=float, default=10.0, help="seconds allowed for the session end (default 10)")
    args = parser.parse_args()

    start = time.perf_counter()
    records = read_verdicts(args.verdicts)
    read = time.perf_counter() - start
    families, prices = discover(), PriceTable.load()
    by_family: dict[str, list[dict]] = {}
    for record in records:
        by_family.setdefault(record["family"], []).append(record)
    print(f"{len(records):,} verdicts from {args.verdicts}, read in {read:.2f} s")
    print(f"{'family':<12} {'verdicts':>9} {'aggregate':>10}")
    total = 0.0
    for name, family_records in sorted(by_family.items()):
        began = time.perf_counter()
        with held_off():  # as the session end and `llmjury report` aggregate
            aggregate.summarize(family_records, {"id": "bench"}, {}, prices, families)
        spent = time.perf_counter() - began
        total += spent
        print(f"{name:<12} {len(family_records):>9,} {spent:>9.2f}s")
    print(f"{'all':<12} {len(records):>9,} {total:>9.2f}s  (families one after another, in one process)")

    with tempfile.TemporaryDirectory() as out, tempfile.TemporaryFile() as errors:
        began = time.perf_counter()
        usage = Measured([sys.executable, "-m", "llmjury.cli", "report", str(args.verdicts), "--out", out],
                         stdout=subprocess.DEVNULL, stderr=errors).usage()  # its own peak, not this process's
        command = time.perf_counter() - began
        if usage.exit_code != 0:
            errors.seek(0)
            raise SystemExit(f"llmjury report failed ({usage.exit_code}):\n{errors.read().decode()[-2000:]}")
    verdict = "within" if command <= args.target else "OVER"
    print(f"`llmjury report` end to end (start-up, read, aggregate, write): {command:.2f} s, "
          f"{verdict} the {args.target:g} s target; its peak memory {usage.peak_mb:.0f} MB")
    print(f"session end of a 12-case toy run (pytest -n 0): {small_run_session_end():.3f} s")


TOY = """
import llmjury
from llmjury import Case, JudgeConfig, Outcome, Verdict
from llmjury.chat import chat
from llmjury.family import Result


class Item(Case):
    text: str


class Aspect(Result):
    aspect: str


async def judge(case, jury):
    completion = await jury.complete("judge", "toy", chat(("user", case.text)))
    return Outcome([Verdict(case_id=case.id, family="toy", judge=JudgeConfig(provider=completion.provider),
                            result=Aspect(aspect=aspect)) for aspect in ("a", "b")])


@llmjury.pipeline(judge)
@llmjury.parametrize([Item(id=f"item-{i:02d}", family="toy", text=f"hello {i}") for i in range(12)])
def test_toy(outcome):
    assert len(outcome.verdicts) == 2
"""

#: A wrapper around every `pytest_sessionfinish` implementation (llmjury's report, registered after
#: this conftest, runs before a plain tryfirst one of the conftest's), the terminal summary included.
TIMER = """
import time
from pathlib import Path

import pytest


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session):
    began, report = time.perf_counter(), Path("reports", "latest")
    before = report.exists()
    try:
        return (yield)
    finally:
        print(f"llmjury session end: {time.perf_counter() - began:.4f} s "
              f"(report written within: {not before and report.exists()})")
"""


def small_run_session_end() -> float:
    """The wall time of a toy run's session-finish hooks: llmjury's report, pytest's own and its
    terminal summary."""
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        (project / "test_toy.py").write_text(TOY, encoding="utf-8")
        (project / "conftest.py").write_text(TIMER, encoding="utf-8")
        (project / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider -p no:randomly\n"
                                            "markers =\n    toy: toy family\n", encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "-q", "-s"], cwd=project,
                              capture_output=True, text=True, check=False)
    found = [line for line in done.stdout.splitlines() if line.startswith("llmjury session end:")]
    if done.returncode != 0 or not found:
        raise SystemExit(f"the toy run failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    if not found[0].endswith("(report written within: True)"):
        raise SystemExit(f"the timed span missed llmjury's report: {found[0]}")
    return float(found[0].split()[3])


if __name__ == "__main__":
    main()
