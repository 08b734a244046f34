"""Throughput of the planning phase beside the bare SDK: N calls of latency L, C in flight.

Starts a local fake OpenAI-compatible server that sleeps L seconds per request and measures, in
one run and against the same server:
- `bare SDK`: one Python process with `openai.AsyncOpenAI` and an `asyncio.Semaphore(C)`, start-up
  included: the floor any tool built on the SDK pays;
- llmjury at each `-n`: a one-pipeline eval of N cases run by pytest with the default `record`
  cache mode (a fresh cache file per run, so every call is paid).
- `pytest alone` at each `-n` (with `--floor`): the same N tests with no call and no llmjury (`-p
  no:llmjury`), plus the bare SDK's figures: a pytest-driven run whose calls and tests run one
  after the other.
- `pytest+SDK` at each `-n` (with `--floor`): the same N tests, llmjury off, with the bare SDK's
  code in a conftest that starts each process's share of the calls (C/workers in flight) on a
  thread when collection ends; a test waits for its own answer when its process made the call and
  passes at once otherwise. No cache, no retries, no hand-off between workers: a lower bound for
  any design that overlaps the calls with pytest's test loop.
Each row prints its wall time, its ratio to the bare row, and the CPU seconds its processes used
(user + system, the server's excluded): on a machine shared with other work the wall times wander,
the CPU seconds much less. `--repeat k` runs every row k times, interleaved, and keeps each row's
fastest run (the slope below takes each row's least CPU at each size). `ideal` is N*L/C.

Every row also runs at a second, smaller size (`--small`, a tenth of N by default): `cpu/call` is
the slope between the two sizes, the CPU seconds each further call costs, and `start-up` what is
left at N=0, paid once per run whatever N is (interpreters, imports, xdist's workers, the session
end). A suite of N calls costs about start-up + N x cpu/call; the per-call ratio is the one a large
suite converges to.

Each llmjury row ends with a line holding it to its targets: wall time <= 1.15x the bare SDK's at
-n 0 and <= 1.25x at -n 2, CPU per call <= 1.3x. With `--floor`, where the `pytest alone` row
already costs more per call than that (pytest-xdist's own per-test work on a slow machine), the
line says so: no plugin running a test per call can be under it there; and where llmjury misses the
CPU target and the `pytest+SDK` row costs more than the target too, whether llmjury is under or above
that row.

Every pytest run loads pytest's own plugins, xdist, and llmjury in its rows, and no other plugin
installed on the machine (PYTEST_DISABLE_PLUGIN_AUTOLOAD, plugins named with `-p`): an environment
with llmjury installed has no others, while this one has the test extra's (hypothesis, syrupy...),
which cost every pytest process start-up and session-end time. `--all-plugins` loads them all.

Every row runs with bytecode caching on, as an installed package has its `.pyc` files (here under
a `pycache` prefix in the bench's temporary folder), after one untimed warm-up of each row on a
5-case suite: a machine that sets PYTHONDONTWRITEBYTECODE would otherwise compile llmjury's modules
and rewrite pytest plugins' asserts again in every process, which no installed copy does.

    python bench/throughput.py --cases 1000 --latency 0.2 --concurrency 64
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from llmjury.testing import FakeOpenAI

#: Calls between the two sizes below which the per-call slope is mostly start-up's noise.
SLOPE_CALLS = 500

SUITE = textwrap.dedent("""
    import llmjury
    from llmjury import Case, JudgeConfig, Outcome, Verdict
    from llmjury.chat import chat

    CASES = [Case(id=f"case-{{i:05d}}", family="bench") for i in range({cases})]

    async def judge(case, jury):
        completion = await jury.complete("judge", "bench", chat(("user", case.id)))
        return Outcome([Verdict(case_id=case.id, family="bench", judge=JudgeConfig(provider=completion.provider))])

    @llmjury.pipeline(judge)
    @llmjury.parametrize(CASES)
    def test_case(outcome):
        assert outcome.verdict.valid
""")

BARE = textwrap.dedent("""
    import asyncio, sys
    import openai

    async def main(base_url, cases, concurrency):
        client = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
        gate = asyncio.Semaphore(concurrency)

        async def one(i):
            async with gate:
                response = await client.chat.completions.create(
                    model="bench", messages=[{"role": "user", "content": f"case-{i:05d}"}])
                return response.choices[0].message.content

        answers = await asyncio.gather(*(one(i) for i in range(cases)))
        assert len(answers) == cases
        await client.close()

    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
""")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one subprocess run, with bytecode cached under the bench's folder."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(cwd.parent / "pycache")
    cpu, started = children_cpu(), time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise SystemExit(f"bench: {' '.join(command[1:4])} ... in {cwd} exited {done.returncode}:\n{tail}")
    return time.perf_counter() - started, children_cpu() - cpu


def at_least(low: float, kind: type[int] | type[float]) -> Callable[[str], float]:
    """An argparse type: a number of `kind`, refused below `low` with a message naming both."""
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a{'n integer' if kind is int else ' number'}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{text} is below {low}")
        return value
    return parse


def worker_counts(text: str) -> list[str]:
    """`--workers`: pytest-xdist's -n values, comma separated (a count, or auto)."""
    counts = [w.strip() for w in text.split(",")]
    wrong = [w for w in counts if w != "auto" and not w.isdigit()]
    if wrong or not counts:
        raise argparse.ArgumentTypeError(f"{', '.join(wrong) or text!r}: each -n value is a count (0, 2...) or auto")
    return counts


def pytest_command(*args: str, llmjury: bool) -> list[str]:
    """pytest with xdist, and llmjury or not; the plugins are named, as autoload may be off."""
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:deepeval", "-p", "xdist",
            "-p", "llmjury" if llmjury else "no:llmjury", *args]


def llmjury_command(folder: Path, base_url: str, workers: str, concurrency: int, run: int) -> list[str]:
    """The llmjury row's pytest run: `test_bench.py` alone, not the other rows' suites beside it."""
    return pytest_command("-n", workers, "--llm-cache", "record",
                          "--llm-cache-path", str(folder / f"cache-{run}.sqlite"),
                          "--llm-concurrency", str(concurrency), "--llm-reports", str(folder / "reports"),
                          "--llm-judge", f"openai:bench;base_url={base_url}", "-o", "markers=bench: bench",
                          "test_bench.py", llmjury=True)


PLAIN = textwrap.dedent("""
    import pytest

    @pytest.mark.parametrize("case", [f"case-{{i:05d}}" for i in range({cases})])
    {test}
""")


OVERLAPPED = textwrap.dedent("""
    import asyncio
    import threading

    import openai
    import pytest

    CALLS = {{}}

    def pytest_collection_finish(session):
        worker = getattr(session.config, "workerinput", None)  # set in an xdist worker
        workers = worker["workercount"] if worker else 1
        index = int(worker["workerid"][2:]) if worker else 0
        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, daemon=True).start()
        client = openai.AsyncOpenAI(base_url={base_url!r}, api_key="bench", max_retries=0)
        gate = asyncio.Semaphore(max(1, {concurrency} // workers))

        async def one(i):
            async with gate:
                response = await client.chat.completions.create(
                    model="bench", messages=[{{"role": "user", "content": f"case-{{i:05d}}"}}])
                return response.choices[0].message.content

        for i in range({cases}):
            if i % workers == index:
                CALLS[f"case-{{i:05d}}"] = asyncio.run_coroutine_threadsafe(one(i), loop)

    def pytest_sessionfinish(session):
        for call in CALLS.values():
            call.result()

    @pytest.fixture
    def answer(case):
        call = CALLS.get(case)
        return call.result() if call is not None else "answered by another worker"
""")


def overlapped_command(folder: Path, base_url: str, cases: int, concurrency: int, workers: str) -> list[str]:
    """The pytest+SDK row's run: the bare SDK's calls started from a conftest (written here, as it
    names the row's server), beside the same N tests."""
    (folder / "overlapped" / "conftest.py").write_text(
        OVERLAPPED.format(base_url=base_url, cases=cases, concurrency=concurrency))
    return pytest_command("-n", workers, "overlapped", llmjury=False)


def plain_command(workers: str) -> list[str]:
    """N tests that make no call, under the same pytest and plugins, llmjury switched off."""
    return pytest_command("-n", workers, "plain", llmjury=False)


def write_suites(place: Path, cases: int) -> None:
    """Each row's suite of `cases` tests, in folders of their own under `place`."""
    place.mkdir(parents=True, exist_ok=True)
    (place / "test_bench.py").write_text(SUITE.format(cases=cases))
    for name, test in (("plain", "def test_case(case):\n    assert case"),
                       ("overlapped", "def test_case(case, answer):\n    assert answer")):
        (place / name).mkdir(exist_ok=True)
        (place / name / f"test_{name}.py").write_text(PLAIN.format(cases=cases, test=test))


def run_bare(folder: Path, base_url: str, cases: int, concurrency: int) -> tuple[float, float]:
    script = folder / "bare_sdk.py"
    script.write_text(BARE)
    return timed([sys.executable, str(script), base_url, str(cases), str(concurrency)], folder)


class Row(NamedTuple):
    """One line of the table: what runs (`bare SDK`, `pytest alone`, `pytest+SDK`, `llmjury`), at
    which `-n` (none for the bare SDK)."""

    kind: str
    workers: str = ""

    def __str__(self) -> str:
        return f"{self.kind} -n {self.workers}" if self.workers else self.kind


BARE_ROW = Row("bare SDK")


def run_row(row: Row, folder: Path, cases: int, latency: float, concurrency: int, run: int,
            bare: tuple[float, float]) -> tuple[float, float, int]:
    """One row's wall and CPU seconds and the server's peak in flight, for `cases` calls in `folder`.

    `bare` is the bare SDK's (wall, cpu) at the same size: the `pytest alone` rows add it."""
    with FakeOpenAI(latency=latency) as server:
        if row == BARE_ROW:
            wall, cpu = run_bare(folder, server.base_url, cases, concurrency)
        elif row.kind == "pytest alone":
            wall, cpu = timed(plain_command(row.workers), folder)
            wall, cpu = wall + bare[0], cpu + bare[1]
        elif row.kind == "pytest+SDK":
            wall, cpu = timed(overlapped_command(folder, server.base_url, cases, concurrency, row.workers), folder)
        else:
            wall, cpu = timed(llmjury_command(folder, server.base_url, row.workers, concurrency, run), folder)
    return wall, cpu, server.max_in_flight


def per_call(cpu_large: float, cpu_small: float, large: int, small: int) -> float:
    """CPU seconds each further call costs: the slope between two sizes, which start-up (interpreter,
    imports, xdist's workers) leaves out, as it is paid once whatever N is."""
    return (cpu_large - cpu_small) / (large - small)


#: llmjury's wall time over the bare SDK's, by -n (another -n is held to -n 2's), and its CPU per call.
WALL_TARGETS = {"0": 1.15, "2": 1.25}
CPU_TARGET = 1.3


def against_targets(row: Row, wall: float, cpu: float, floor: float, overlapped: float = 0.0) -> str:
    """An llmjury row against its targets; with the pytest-alone row (`floor`, 0 when not run): when
    pytest itself, running a test per call, costs more per call than the CPU target, no plugin of it
    can meet that target there, and the line says so. With the pytest+SDK row (`overlapped`, 0 when
    not run) above the target too, the line says whether llmjury costs more or less per call than
    that bare design overlapping the same calls with the same tests."""
    wall_target = WALL_TARGETS.get(row.workers, WALL_TARGETS["2"])
    line = (f"{row}: wall {wall:.2f}x ({'met' if wall <= wall_target else 'MISSED'} <= {wall_target:g}x), "
            f"cpu/call {cpu:.2f}x ({'met' if cpu <= CPU_TARGET else 'MISSED'} <= {CPU_TARGET:g}x)")
    if floor > CPU_TARGET:
        line += (f"; pytest alone at -n {row.workers} (no call, no llmjury) already costs {floor:.2f}x the bare "
                 f"SDK per call: the {CPU_TARGET:g}x target is below pytest's own per-test cost on this machine")
    if cpu > CPU_TARGET and overlapped > CPU_TARGET:
        line += (f"; pytest+SDK at -n {row.workers} (the bare SDK's calls beside the same tests, nothing else) "
                 f"costs {overlapped:.2f}x per call: llmjury's is {'under' if cpu <= overlapped else 'above'} it")
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=at_least(2, int), default=1000)
    parser.add_argument("--small", type=at_least(1, int), default=None,
                        help="the second size for the per-call CPU slope (default: a tenth of --cases)")
    parser.add_argument("--latency", type=at_least(0, float), default=0.2, help="seconds per answer")
    parser.add_argument("--concurrency", type=at_least(1, int), default=64)
    parser.add_argument("--workers", type=worker_counts, default="0,2", help="-n values, comma separated")
    parser.add_argument("--repeat", type=at_least(1, int), default=1, help="runs per row; each row keeps its fastest")
    parser.add_argument("--floor", action="store_true",
                        help="add the pytest-alone rows: bare SDK plus pytest running N tests without calls")
    parser.add_argument("--all-plugins", action="store_true",
                        help="load every pytest plugin installed here, not only xdist and llmjury")
    args = parser.parse_args()
    small = args.small if args.small is not None else max(1, args.cases // 10)
    if small >= args.cases:
        parser.error(f"--small {small} must be below --cases {args.cases}")
    if not args.all_plugins:
        os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # inherited by every row's processes
    kinds = ("pytest alone", "pytest+SDK", "llmjury") if args.floor else ("llmjury",)
    rows = [BARE_ROW, *(Row(kind, w) for w in args.workers for kind in kinds)]
    best: dict[Row, tuple[float, float, int]] = {}  # each row's fastest run at N
    least_cpu: dict[tuple[Row, int], float] = {}  # each row's least CPU at each size, for the slope
    with tempfile.TemporaryDirectory() as tmp:
        folders = {size: Path(tmp) / f"bench-{size}" for size in (args.cases, small)}
        warm = Path(tmp) / "warm"
        for size, folder in folders.items():
            write_suites(folder, size)
        write_suites(warm, 5)
        ideal = args.cases * args.latency / args.concurrency
        print(f"N={args.cases} calls, L={args.latency}s, C={args.concurrency}: ideal N*L/C = {ideal:.2f}s; "
              f"per-call CPU from the slope between N={small} and N={args.cases}")
        with FakeOpenAI() as server:
            run_bare(warm, server.base_url, 5, args.concurrency)
            for run, workers in enumerate(args.workers):
                timed(llmjury_command(warm, server.base_url, workers, args.concurrency, run), warm)
                if args.floor:
                    timed(plain_command(workers), warm)
                    timed(overlapped_command(warm, server.base_url, 5, args.concurrency, workers), warm)
        bare_at: dict[int, tuple[float, float]] = {}
        for repeat in range(args.repeat):
            for size, folder in folders.items():
                for run, row in enumerate(rows):
                    wall, cpu, peak = run_row(row, folder, size, args.latency, args.concurrency,
                                              repeat * len(rows) + run, bare_at.get(size, (0.0, 0.0)))
                    if row == BARE_ROW:
                        bare_at[size] = min(bare_at.get(size, (wall, cpu)), (wall, cpu))
                    least_cpu[row, size] = min(least_cpu.get((row, size), cpu), cpu)
                    if size == args.cases and (row not in best or wall < best[row][0]):
                        best[row] = (wall, cpu, peak)
        print(f"{'run':<19} {'wall':>8} {'vs bare':>8} {'cpu':>8} {'vs bare':>8} {'cpu/call':>9} {'vs bare':>8}"
              f" {'start-up':>9}  peak in flight")
        bare_wall, bare_cpu, _ = best[BARE_ROW]
        slope = {row: per_call(least_cpu[row, args.cases], least_cpu[row, small], args.cases, small) for row in rows}
        for row in rows:
            wall, cpu, peak = best[row]
            shown = "-" if row.kind == "pytest alone" else peak
            fixed = least_cpu[row, small] - small * slope[row]
            print(f"{row!s:<19} {wall:>7.2f}s {wall / bare_wall:>7.2f}x {cpu:>7.2f}s {cpu / bare_cpu:>7.2f}x "
                  f"{slope[row] * 1000:>6.2f}ms {slope[row] / slope[BARE_ROW]:>7.2f}x {fixed:>8.2f}s  {shown}")
        for row in rows:
            if row.kind == "llmjury":
                print(against_targets(row, best[row][0] / bare_wall, slope[row] / slope[BARE_ROW],
                                      slope.get(Row("pytest alone", row.workers), 0.0) / slope[BARE_ROW],
                                      slope.get(Row("pytest+SDK", row.workers), 0.0) / slope[BARE_ROW]))
        if args.cases - small < SLOPE_CALLS:
            print(f"cpu/call from {args.cases - small} calls between the two sizes: start-up's own spread "
                  f"(tenths of a second) swamps it below about {SLOPE_CALLS}; run with --cases 1000 or more")


if __name__ == "__main__":
    main()
