"""The run store on SQLite beside PostgreSQL, in one run: what each costs the call path.

    python bench/store.py                  # 100,000 samples, 4 processes claiming 100,000 keys
    python bench/store.py --backends sqlite --samples 2000 --claim-keys 5000

Both backends go through llmjury's own `SampleStore` (llmjury.running.cache), as a run does:
- put, amortized: `--samples` puts queued on the batching writer, total time / count; beside it a
  put awaited before the next (one commit each), the cost batching saves;
- cache-hit get p50/p95: `--reads` single `SampleStore.get`s of stored samples, each timed;
- claims per second per process: `--processes` processes race to claim the same `--claim-keys`
  keys, in planned batches of `--batch` (one `SampleStore.claim` each, walked in the same order, so
  every batch is contended); each key must be claimed exactly once overall (checked: the bench
  exits 1 otherwise); target 5,000 keys/s per process;
- cached replay: every one of the `--samples` stored samples looked up and parsed as a replayed run
  does: its cases' lookups asked at once and read together, per turn of the engine's loop
  (llmjury.running.reads); target: PostgreSQL within 2x of SQLite;
- durable when paid: answers put while `--backlog` claims are queued on the same writer, each timed
  from its put to its commit (p95 and worst); target: within 1 s, so a `kill -9` loses only the
  calls in flight;
- a waiting process: statements a second it sends to the store while it waits for `--waited` keys
  another process holds (llmjury.running.claim_waits), counted through the Database layer; target:
  at most 5. Beside it, how soon it reads an answer the holder puts (p50 and worst of 20, one key at
  a time): on SQLite it looks on a timer; PostgreSQL announces the claim's end (LISTEN/NOTIFY).

PostgreSQL is the server in LLMJURY_TEST_POSTGRES_DSN or LLMJURY_STORE_DSN when set, else a
throwaway one started here (llmjury.testing.postgres: initdb into a temporary folder, a private socket)
and stopped at the end; each measurement gets an empty schema of its own. Where none can be had,
the PostgreSQL column says why. Timings depend on the machine: the load average is printed first.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import multiprocessing
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import wait
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.synchronize import Barrier
from pathlib import Path

import numpy as np

from llmjury.chat import Sample, Usage
from llmjury.running import claim_waits
from llmjury.running.cache import SampleStore
from llmjury.running.claim_waits import ClaimWaits
from llmjury.running.reads import CoalescedReads
from llmjury.store.database import Database, Row
from llmjury.store.location import StoreLocation
from llmjury.store.postgres import DSN_VARIABLE
from llmjury.testing.postgres import TEST_DSN, start, stop

CLAIMS_TARGET = 5000.0  # keys/s per process
COMMIT_TARGET_MS = 1000.0  # an answer's put to its commit, under a backlog
WAITING_TARGET = 5.0  # statements a second of a waiting process
REPLAY_TARGET = 2.0  # PostgreSQL's replay time over SQLite's
BACKENDS = ("sqlite", "postgres")


@dataclass
class Figures:
    """One backend's column; None where it was not measured, with `missing` saying why."""

    put_ms: float | None = None
    put_each_ms: float | None = None
    get_p50_us: float | None = None
    get_p95_us: float | None = None
    claims_per_s: list[float] | None = None
    claim_problems: list[str] | None = None
    replay_s: float | None = None
    commit_p95_ms: float | None = None
    commit_max_ms: float | None = None
    waiting_per_s: float | None = None
    seen_p50_ms: float | None = None
    seen_max_ms: float | None = None
    missing: str = ""


@contextmanager
def postgres(wanted: bool) -> Iterator[tuple[str, str]]:
    """A PostgreSQL connection string and where it came from, or ("", why there is none)."""
    if not wanted:
        yield "", "not asked for (--backends)"
        return
    if importlib.util.find_spec("psycopg") is None:
        yield "", "psycopg is not installed (pip install 'llmjury[postgres]')"
        return
    for variable in (TEST_DSN, DSN_VARIABLE):
        if os.environ.get(variable):
            yield os.environ[variable], f"the server in {variable}"
            return
    folder = Path(tempfile.mkdtemp(prefix="llmjury-bench-pg-"))
    try:
        try:
            dsn = start(folder)
        except Exception as exc:  # initdb missing, or refused: the column says why
            yield "", f"no PostgreSQL server could be started here ({exc})"
            return
        try:
            yield dsn, "a throwaway server on a local socket"
        finally:
            stop(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def empty_store(backend: str, folder: Path, dsn: str, name: str) -> Iterator[StoreLocation]:
    """An empty store: a new SQLite file, or a new schema on the server, dropped afterwards (the
    server may be a teammate's)."""
    if backend == "sqlite":
        yield StoreLocation("sqlite", folder / f"{name}.sqlite")
        return
    import psycopg

    schema = f"llmjury_bench_{name}_{secrets.token_hex(4)}"
    with psycopg.connect(dsn, autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {schema}")
    try:
        yield StoreLocation("postgres", folder / f"{name}.sqlite", f"{dsn} options='-csearch_path={schema}'")
    finally:
        with psycopg.connect(dsn, autocommit=True) as db:
            db.execute(f"DROP SCHEMA {schema} CASCADE")


def sample(index: int) -> Sample:
    """A judge's answer of a typical size (a few hundred characters with its usage)."""
    text = f"Verdict for case {index}: the answer is correct and complete. " * 6
    return Sample(text=text, finish_reason="stop", usage=Usage(prompt_tokens=420, completion_tokens=96),
                  latency_s=0.2)


def keys(count: int, prefix: str) -> list[str]:
    return [f"{prefix}-{index:08d}" for index in range(count)]


def put_all(store: SampleStore, stored: Sequence[str], samples: Sequence[Sample]) -> float:
    """Seconds to queue every put on the batching writer and see each committed."""
    started = time.perf_counter()
    futures = [store.put(key, "openai:bench", "judge", "{}", answer, "bench")
               for key, answer in zip(stored, samples, strict=True)]
    wait(futures)
    for future in futures:
        future.result()
    return time.perf_counter() - started


def put_each(store: SampleStore, count: int) -> float:
    """Seconds for `count` puts, each awaited before the next: one commit per put."""
    started = time.perf_counter()
    for index in range(count):
        store.put(f"each-{index:08d}", "openai:bench", "judge", "{}", sample(index), "bench").result()
    return time.perf_counter() - started


def get_times(store: SampleStore, stored: Sequence[str], reads: int) -> np.ndarray:
    """Microseconds of each of `reads` cache-hit gets, of keys drawn at random from the stored ones."""
    drawn = np.random.default_rng(0).choice(len(stored), size=reads)
    took = np.empty(reads)
    for index, at in enumerate(drawn):
        started = time.perf_counter_ns()
        found = store.get(stored[at])
        took[index] = (time.perf_counter_ns() - started) / 1000
        assert found is not None, stored[at]
    return took


def replay(store: SampleStore, stored: Sequence[str]) -> float:
    """Seconds to read every stored sample back as a replayed run does: every lookup asked at once on
    an event loop, read together per turn (the engine's CoalescedReads), each sample parsed."""

    async def every() -> list[Sample | None]:
        reads = CoalescedReads(store)
        rows = await asyncio.gather(*(reads.row(key) for key in stored))
        return [store.sample_of(key, row) for key, row in zip(stored, rows, strict=True)]

    started = time.perf_counter()
    samples = asyncio.run(every())
    took = time.perf_counter() - started
    assert all(found is not None for found in samples)
    return took


def commit_delays(store: SampleStore, backlog: int, answers: int) -> np.ndarray:
    """Milliseconds from each answer's put to its commit, the answers put while `backlog` single-key
    claims (a planned run's) are queued on the same writer ahead of them."""
    claims = [store.claim([f"backlog-{index:08d}"], "bench-planner", run_id="bench") for index in range(backlog)]
    took = np.empty(answers)
    for index in range(answers):
        started = time.perf_counter()
        store.put(f"answer-{index:08d}", "openai:bench", "judge", "{}", sample(index), "bench").result()
        took[index] = (time.perf_counter() - started) * 1000
    wait(claims)
    return took


class Counting:
    """A Database that counts the statements sent through it."""

    def __init__(self, db: Database, counter: list[float]) -> None:
        self._db, self._counter = db, counter

    def execute(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        self._counter.append(time.perf_counter())
        return self._db.execute(sql, params)

    def __getattr__(self, name: str) -> object:
        return getattr(self._db, name)


def waiting_rate(where: StoreLocation, waited: int, seconds: float = 3.0) -> float:
    """Statements a second a process sends while it waits for `waited` keys another process holds."""
    holder = SampleStore(where)
    held = keys(waited, "held")
    holder.claim(held, "bench-holder", run_id="bench").result()
    waiting = SampleStore(where)
    sent: list[float] = []
    waiting._db = Counting(waiting._db, sent)  # type: ignore[assignment]  # its reads only: waiting writes nothing

    async def wait_a_while() -> None:
        waits = ClaimWaits(waiting, "bench")
        tasks = [asyncio.ensure_future(waits.settled(key)) for key in held]
        await asyncio.sleep(seconds)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(wait_a_while())
    waiting.close()
    holder.close()
    return len(sent) / seconds


def seen_delays(where: StoreLocation, count: int = 20) -> np.ndarray:
    """Milliseconds from a holder's put of an answer to a waiting process reading it, a key at a time,
    each put made once the waiter has settled into waiting (listening, on PostgreSQL)."""
    holder, waiting = SampleStore(where), SampleStore(where)
    held = keys(count, "seen")
    holder.claim(held, "bench-holder", run_id="bench").result()

    def put(key: str) -> float:
        started = time.perf_counter()
        holder.put(key, "openai:bench", "judge", "{}", sample(0), "bench").result()
        return started

    async def one_by_one() -> list[float]:
        waits, took, phases = ClaimWaits(waiting, "bench"), [], np.random.default_rng(0)
        for key in held:
            waited = asyncio.ensure_future(waits.settled(key))
            # The looks a new wait makes are over, and the put falls anywhere between two timed looks.
            await asyncio.sleep(claim_waits.POLL_S * (4 + phases.uniform()))
            started = await asyncio.to_thread(put, key)
            await waited
            took.append((time.perf_counter() - started) * 1000)
        return took

    try:
        return np.array(asyncio.run(one_by_one()))
    finally:
        waiting.close()
        holder.close()


def claimant(where: StoreLocation, all_keys: list[str], batch: int, index: int, start: Barrier, end: Barrier,
             results: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    """One racing process: claim every batch in turn, report the keys it won and its keys/s, and stay
    alive until all have finished (a gone holder's claims are taken over, which is right in a run
    but not what this race measures)."""
    store = SampleStore(where)
    batches = [all_keys[at:at + batch] for at in range(0, len(all_keys), batch)]
    won: list[str] = []
    start.wait()
    started = time.perf_counter()
    for keys_of_batch in batches:
        found = store.claim(keys_of_batch, f"bench-{index}", run_id="bench").result()
        won.extend(key for key in keys_of_batch if key not in found.held)
    took = time.perf_counter() - started
    results.put((index, len(all_keys) / took, won))
    end.wait()
    store.close()


def race(where: StoreLocation, all_keys: list[str], processes: int, batch: int) -> tuple[list[float], list[str]]:
    """Each process's keys/s, and what is wrong with who won which key (nothing when each key went
    to exactly one process)."""
    context = multiprocessing.get_context("spawn")
    start, end = context.Barrier(processes + 1), context.Barrier(processes)
    results = context.Queue()
    workers = [context.Process(target=claimant, args=(where, all_keys, batch, index, start, end, results))
               for index in range(processes)]
    for worker in workers:
        worker.start()
    start.wait()
    reported = sorted(results.get(timeout=1800) for _ in workers)
    for worker in workers:
        worker.join()
    failed = [f"claimant {i} exited {w.exitcode}" for i, w in enumerate(workers) if w.exitcode != 0]
    return [rate for _, rate, _ in reported], failed + exactly_once(all_keys, [won for _, _, won in reported])


def exactly_once(all_keys: Sequence[str], won: Sequence[Sequence[str]]) -> list[str]:
    """What breaks 'every key claimed by exactly one process': keys won twice, or by no one."""
    counts: dict[str, int] = dict.fromkeys(all_keys, 0)
    for keys_won in won:
        for key in keys_won:
            counts[key] = counts.get(key, 0) + 1
    twice = [key for key, count in counts.items() if count > 1]
    never = [key for key, count in counts.items() if count == 0]
    problems = []
    if twice:
        problems.append(f"{len(twice)} keys claimed more than once (first {twice[0]})")
    if never:
        problems.append(f"{len(never)} keys claimed by no process (first {never[0]})")
    return problems


def measure(backend: str, folder: Path, dsn: str, args: argparse.Namespace) -> Figures:
    figures = Figures()
    stored, samples = keys(args.samples, "sample"), [sample(index) for index in range(args.samples)]
    with empty_store(backend, folder, dsn, "samples") as where:
        store = SampleStore(where)
        try:
            figures.put_ms = put_all(store, stored, samples) / args.samples * 1000
            figures.put_each_ms = put_each(store, args.each) / args.each * 1000
            took = get_times(store, stored, args.reads)
            figures.get_p50_us, figures.get_p95_us = (float(v) for v in np.percentile(took, [50, 95]))
            figures.replay_s = replay(store, stored)
            delays = commit_delays(store, args.backlog, 200)
            figures.commit_p95_ms, figures.commit_max_ms = float(np.percentile(delays, 95)), float(delays.max())
        finally:
            store.close()
    with empty_store(backend, folder, dsn, "waiting") as where:
        figures.waiting_per_s = waiting_rate(where, args.waited)
    with empty_store(backend, folder, dsn, "seen") as where:
        seen = seen_delays(where)
        figures.seen_p50_ms, figures.seen_max_ms = float(np.percentile(seen, 50)), float(seen.max())
    with empty_store(backend, folder, dsn, "claims") as where:
        figures.claims_per_s, figures.claim_problems = race(where, keys(args.claim_keys, "claim"), args.processes,
                                                            args.batch)
    return figures


def cell(value: float | None, show: Callable[[float], str], missing: str = "-") -> str:
    return missing if value is None else show(value)


def table(columns: dict[str, Figures], args: argparse.Namespace) -> list[str]:
    """The figures side by side, each row with its target or reference."""
    sqlite, pg = columns["sqlite"], columns["postgres"]
    ratio = (pg.replay_s / sqlite.replay_s) if pg.replay_s is not None and sqlite.replay_s else None
    verdict = "" if ratio is None else (" met" if ratio <= REPLAY_TARGET else " MISSED")

    def claims(f: Figures) -> float | None:
        return min(f.claims_per_s) if f.claims_per_s else None

    def once(f: Figures) -> str:
        if f.claim_problems is None:
            return "-"
        return "yes" if not f.claim_problems else "NO: " + "; ".join(f.claim_problems)

    met = [claims(f) >= CLAIMS_TARGET for f in (sqlite, pg) if claims(f) is not None]  # type: ignore[operator]
    rows = [
        (f"put, amortized ({args.samples} queued)", cell(sqlite.put_ms, "{:.3f} ms".format),
         cell(pg.put_ms, "{:.3f} ms".format), "reference: put awaited each, below"),
        (f"put, awaited each ({args.each})", cell(sqlite.put_each_ms, "{:.3f} ms".format),
         cell(pg.put_each_ms, "{:.3f} ms".format), "one commit per put"),
        (f"cache-hit get p50 ({args.reads} gets)", cell(sqlite.get_p50_us, "{:.0f} us".format),
         cell(pg.get_p50_us, "{:.0f} us".format), ""),
        ("cache-hit get p95", cell(sqlite.get_p95_us, "{:.0f} us".format),
         cell(pg.get_p95_us, "{:.0f} us".format), ""),
        (f"claims/s per process, slowest of {args.processes}", cell(claims(sqlite), "{:,.0f}".format),
         cell(claims(pg), "{:,.0f}".format),
         f">= {CLAIMS_TARGET:,.0f}" + ("" if not met else " met" if all(met) else " MISSED")),
        (f"  fastest ({args.claim_keys} keys, batches of {args.batch})",
         cell(max(sqlite.claims_per_s) if sqlite.claims_per_s else None, "{:,.0f}".format),
         cell(max(pg.claims_per_s) if pg.claims_per_s else None, "{:,.0f}".format), ""),
        ("  each key claimed exactly once", once(sqlite), once(pg), "yes"),
        (f"cached replay ({args.samples} lookups)", cell(sqlite.replay_s, "{:.2f} s".format),
         cell(pg.replay_s, "{:.2f} s".format),
         f"postgresql <= {REPLAY_TARGET:g}x sqlite" + ("" if ratio is None else f": {ratio:.2f}x{verdict}")),
        (f"answer put to commit p95 ({args.backlog} claims queued)", cell(sqlite.commit_p95_ms, "{:.1f} ms".format),
         cell(pg.commit_p95_ms, "{:.1f} ms".format), f"<= {COMMIT_TARGET_MS:.0f} ms" + within(
             [sqlite.commit_p95_ms, pg.commit_p95_ms], COMMIT_TARGET_MS)),
        ("  worst of 200", cell(sqlite.commit_max_ms, "{:.1f} ms".format), cell(pg.commit_max_ms, "{:.1f} ms".format),
         "the machine's load shows here first"),
        (f"waiting process: statements/s ({args.waited} keys)", cell(sqlite.waiting_per_s, "{:.1f}".format),
         cell(pg.waiting_per_s, "{:.1f}".format), f"<= {WAITING_TARGET:g}" + within(
             [sqlite.waiting_per_s, pg.waiting_per_s], WAITING_TARGET)
         + f" (a look every {claim_waits.POLL_S} s; {claim_waits.QUIET_POLL_S} s when announced)"),
        ("  reads a put answer, p50 (20 keys)", cell(sqlite.seen_p50_ms, "{:.1f} ms".format),
         cell(pg.seen_p50_ms, "{:.1f} ms".format), f"reference: a look every {claim_waits.POLL_S} s"),
        ("  worst of 20", cell(sqlite.seen_max_ms, "{:.1f} ms".format), cell(pg.seen_max_ms, "{:.1f} ms".format),
         "postgresql: announced (LISTEN/NOTIFY)"),
    ]
    width = max(len(row[0]) for row in rows) + 2
    lines = [f"{'':<{width}}{'sqlite':>16}{'postgresql':>16}   target / reference"]
    lines += [f"{name:<{width}}{a:>16}{b:>16}   {note}" for name, a, b, note in rows]
    for backend, figures in columns.items():
        if figures.missing:
            lines.append(f"{backend}: not measured: {figures.missing}")
    return lines


def within(values: Sequence[float | None], target: float) -> str:
    measured = [value for value in values if value is not None]
    return "" if not measured else " met" if max(measured) <= target else " MISSED"


def positive(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is below 1")
    return value


def backends(text: str) -> list[str]:
    chosen = [name.strip() for name in text.split(",")]
    wrong = [name for name in chosen if name not in BACKENDS]
    if wrong:
        raise argparse.ArgumentTypeError(f"{', '.join(wrong)}: each backend is one of {', '.join(BACKENDS)}")
    return chosen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=positive, default=100_000, help="samples put, then replayed")
    parser.add_argument("--each", type=positive, default=500, help="puts awaited one by one")
    parser.add_argument("--reads", type=positive, default=10_000, help="timed cache-hit gets")
    parser.add_argument("--claim-keys", type=positive, default=100_000, help="keys the processes race for")
    parser.add_argument("--processes", type=positive, default=4, help="claiming processes")
    parser.add_argument("--batch", type=positive, default=500, help="keys per claim")
    parser.add_argument("--backlog", type=positive, default=20_000, help="claims queued ahead of the answers")
    parser.add_argument("--waited", type=positive, default=2_000, help="keys a waiting process waits for")
    parser.add_argument("--backends", type=backends, default=list(BACKENDS), help="sqlite,postgres")
    args = parser.parse_args()
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"load average {load} on {os.cpu_count()} CPUs")
    columns = {name: Figures(missing="" if name in args.backends else "not asked for (--backends)")
               for name in BACKENDS}
    with tempfile.TemporaryDirectory() as tmp, postgres("postgres" in args.backends) as (dsn, where):
        folder = Path(tmp)
        if "sqlite" in args.backends:
            columns["sqlite"] = measure("sqlite", folder, "", args)
        if "postgres" in args.backends:
            if dsn:
                print(f"postgresql: {where}")
                columns["postgres"] = measure("postgres", folder, dsn, args)
            else:
                columns["postgres"] = Figures(missing=where)
    for line in table(columns, args):
        print(line)
    return 1 if any(f.claim_problems for f in columns.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
