"""How a run's cost grows with its suite: one-call cases at 10^3 and 10^4 (10^5 with --huge), -n 0
(`--workers N`: under xdist, the peak of its largest process).

For each size it prints the run's CPU seconds, its peak memory and that per case (beyond a run of 10
cases: what the suite adds), the time to its first test result, and the size of its store (the
SQLite cache file). Beside it, the per-case memory of bare pytest running as many parametrized no-op
tests without llmjury: pytest's own floor (its items and reports), which llmjury cannot shrink; the
difference is what llmjury adds. Targets: llmjury adds at most 4 KB of memory per case; the first
result within a minute; 10^5 cases under 1 GB. Like `bench/throughput.py`, every run loads pytest's
own plugins, xdist and llmjury, and no other plugin installed on the machine
(PYTEST_DISABLE_PLUGIN_AUTOLOAD): this one has the test extra's, which keep memory per test of their
own. The calls go to a local fake OpenAI-compatible server answering at once, so the figures are
llmjury's own. Timings depend on the machine: the load average is printed first.

    python bench/growth.py               # 10^3 and 10^4 cases
    python bench/growth.py --huge        # and 10^5
    python bench/growth.py --sizes 1000  # a quick look
    python bench/growth.py --workers 2   # -n 2
    python bench/growth.py --shards 4    # and each size as 4 shards, merged

With `--shards N` each size is run again as N shards (`--llm-shard I/N`, each with a store of its
own, as on N machines) and `llmjury merge`d: the shards' CPU against the whole run's, the largest
shard's peak memory, and the merge's time and peak.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

from peak import Measured

from llmjury.testing import FakeOpenAI

PER_CASE_TARGET_KB = 4.0
FIRST_RESULT_TARGET_S = 60.0
HUGE_PEAK_TARGET_MB = 1024.0
BASELINE_CASES = 10
SUITE = textwrap.dedent("""
    import llmjury
    from llmjury import Case, JudgeConfig, Outcome, Verdict
    from llmjury.chat import chat

    CASES = [Case(id=f"case-{{i:06d}}", family="growth") for i in range({cases})]

    async def judge(case, jury):
        completion = await jury.complete("judge", "growth", chat(("user", "judge " + case.id)))
        return Outcome([Verdict(case_id=case.id, family="growth",
                                judge=JudgeConfig(provider=completion.provider))])

    @llmjury.pipeline(judge)
    @llmjury.parametrize(CASES)
    def test_case(outcome):
        assert len(outcome.verdicts) == 1
""")


BARE_SUITE = textwrap.dedent("""
    import pytest

    @pytest.mark.parametrize("i", range({cases}))
    def test_case(i):
        pass
""")
ADDOPTS = "[pytest]\naddopts = -p no:cacheprovider -p no:deepeval -p no:asyncio\n"


@dataclass
class Figures:
    cases: int
    cpu_s: float
    peak_mb: float
    first_result_s: float | None
    wall_s: float
    store_mb: float
    exit_code: int


def suite(folder: Path, cases: int) -> Path:
    """The folder of a suite of `cases` one-call cases."""
    here = folder / f"suite-{cases}"
    here.mkdir()
    (here / "pytest.ini").write_text(ADDOPTS)
    (here / "test_growth.py").write_text(SUITE.format(cases=cases))
    return here


def run(here: Path, cases: int, server: FakeOpenAI, workers: int, shard: str | None = None) -> Figures:
    """One pytest run of the suite in `here` (or of one shard of it, `I/N`, with a store and reports of
    its own), in a process of its own, measured by wait4 from a launcher (`peak`; its peak memory is
    its largest process's, xdist's workers included)."""
    name = "whole" if shard is None else "shard-" + shard.replace("/", "-of-")
    command = [sys.executable, "-m", "pytest", "-p", "xdist", "-p", "llmjury", "-q", "-n", str(workers),
               "--llm-progress", "off",
               "--llm-judge", f"openai:growth;base_url={server.base_url}", "--llm-reports", str(here / name),
               "--llm-cache-path", str(here / f"{name}.sqlite"), *(["--llm-shard", shard] if shard else [])]
    started = time.perf_counter()
    measured = Measured(command, cwd=here, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert measured.process.stdout is not None
    first: float | None = None
    while chunk := measured.process.stdout.read1(4096):  # type: ignore[attr-defined]
        if first is None and (b"." in chunk.split(b"\n")[0] or b"\n." in chunk or chunk.startswith(b".")):
            first = time.perf_counter() - started
    usage = measured.usage()
    wall = time.perf_counter() - started
    store = sum(path.stat().st_size for path in here.glob(f"{name}.sqlite*"))
    return Figures(cases, usage.cpu_s, usage.peak_mb, first, wall, store / 1e6, usage.exit_code)


def sharded(here: Path, whole: Figures, server: FakeOpenAI, workers: int, count: int) -> bool:
    """The suite run again as `count` shards, then `llmjury merge`d: the shards' CPU against the whole
    run's, the largest shard's peak, and the merge's time and peak. True when all of it succeeded."""
    shards = [run(here, whole.cases, server, workers, f"{index}/{count}") for index in range(1, count + 1)]
    folders = [str(here / f"shard-{index}-of-{count}") for index in range(1, count + 1)]
    started = time.perf_counter()
    usage = Measured([sys.executable, "-m", "llmjury.cli", "merge", *folders, "--out", str(here / "merged")],
                     cwd=here, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).usage()
    wall = time.perf_counter() - started
    cpu = sum(f.cpu_s for f in shards)
    print(f"{'':>8} {count} shards: {cpu:.1f} CPU s in all, {cpu / whole.cpu_s:.2f}x the whole run's; the largest "
          f"peaked at {max(f.peak_mb for f in shards):.0f} MB (the whole run {whole.peak_mb:.0f}); llmjury merge "
          f"{wall:.1f} s, {usage.cpu_s:.1f} CPU s, peak {usage.peak_mb:.0f} MB")
    return usage.exit_code == 0 and all(f.exit_code == 0 for f in shards)


def bare_peak_mb(folder: Path, cases: int, workers: int) -> float:
    """Peak memory of bare pytest (no llmjury) running `cases` parametrized no-op tests, its largest process's."""
    here = folder / f"bare-{cases}"
    here.mkdir()
    (here / "pytest.ini").write_text(ADDOPTS)
    (here / "test_bare.py").write_text(BARE_SUITE.format(cases=cases))
    return Measured([sys.executable, "-m", "pytest", "-p", "xdist", "-q", "-n", str(workers)], cwd=here,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).usage().peak_mb


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="numbers of cases, comma-separated")
    parser.add_argument("--huge", action="store_true", help="also 100,000 cases")
    parser.add_argument("--workers", type=int, default=0, help="xdist workers (-n); 0: one process")
    parser.add_argument("--shards", type=int, default=0,
                        help="also run each size as this many shards (--llm-shard) and merge them")
    args = parser.parse_args()
    try:
        sizes = [int(size) for size in args.sizes.split(",")] + ([100_000] if args.huge else [])
    except ValueError:
        parser.error(f"--sizes {args.sizes!r}: numbers of cases, comma-separated")
    if args.shards == 1 or args.shards < 0:
        parser.error(f"--shards {args.shards}: a number of shards above 1 (0: none)")
    if small := [size for size in sizes if size <= BASELINE_CASES]:
        parser.error(f"--sizes {small[0]}: each size must be above the {BASELINE_CASES}-case baseline")
    print(f"load average {', '.join(f'{v:.1f}' for v in os.getloadavg())} on {os.cpu_count()} CPUs")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # inherited by every run
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as server:
        folder = Path(tmp)
        base = run(suite(folder, BASELINE_CASES), BASELINE_CASES, server, args.workers)
        bare_base = bare_peak_mb(folder, BASELINE_CASES, args.workers)
        print(f"baseline ({BASELINE_CASES} cases): peak {base.peak_mb:.0f} MB, {base.cpu_s:.1f} CPU s; "
              f"bare pytest {bare_base:.0f} MB")
        print(f"{'cases':>8} {'CPU s':>8} {'CPU ms/case':>12} {'peak MB':>8} {'KB/case':>8} {'pytest KB':>10} "
              f"{'llmjury KB':>11} {'1st result':>11} {'wall s':>7} {'store MB':>9}  "
              f"targets: llmjury <= {PER_CASE_TARGET_KB:g} KB/case, "
              f"1st result <= {FIRST_RESULT_TARGET_S:g} s, 10^5 under {HUGE_PEAK_TARGET_MB:g} MB")
        failed = False
        for size in sizes:
            here = suite(folder, size)
            f = run(here, size, server, args.workers)
            per_case = (f.peak_mb - base.peak_mb) * 1024 / max(1, size - BASELINE_CASES)
            floor = (bare_peak_mb(folder, size, args.workers) - bare_base) * 1024 / max(1, size - BASELINE_CASES)
            first = "-" if f.first_result_s is None else f"{f.first_result_s:.1f} s"
            met = (per_case - floor <= PER_CASE_TARGET_KB and (f.first_result_s or 1e9) <= FIRST_RESULT_TARGET_S
                   and (size < 100_000 or f.peak_mb < HUGE_PEAK_TARGET_MB))
            failed |= f.exit_code != 0
            print(f"{size:>8} {f.cpu_s:>8.1f} {f.cpu_s / size * 1000:>12.2f} {f.peak_mb:>8.0f} {per_case:>8.1f} "
                  f"{floor:>10.1f} {per_case - floor:>11.1f} {first:>11} {f.wall_s:>7.1f} {f.store_mb:>9.1f}  "
                  f"{'met' if met else 'MISSED'}"
                  + ("" if f.exit_code == 0 else f" (pytest exited {f.exit_code})"))
            if args.shards > 1:
                failed |= not sharded(here, f, server, args.workers, args.shards)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
