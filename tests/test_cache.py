"""The sample store under concurrent writers and sudden death."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llmjury.chat import Sample
from llmjury.providers.base import ProviderSpec
from llmjury.running.cache import ENDED, Claimed, SampleStore, shards
from llmjury.running.ledger import usage_by_provider
from llmjury.store.location import StoreLocation


def sqlite_at(path: Path) -> StoreLocation:
    return StoreLocation("sqlite", path)


def _writer(location: StoreLocation, worker: int, count: int) -> None:
    store = SampleStore(location)
    for i in range(count):
        # Half the keys are shared between workers: the same request answered twice.
        key = f"shared-{i}" if i % 2 else f"w{worker}-{i}"
        store.put(key, "openai:m", "t", "{}", Sample(text=f"{worker}:{i}"), "run").result()
    store.close()


def test_concurrent_processes_lose_and_duplicate_nothing(store_location):
    SampleStore(store_location).close()
    procs = [multiprocessing.Process(target=_writer, args=(store_location, w, 200)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    assert all(p.exitcode == 0 for p in procs)
    store = SampleStore(store_location)
    assert len(store) == 4 * 100 + 100  # own keys + one row per shared key
    assert store.get("shared-1").text.endswith(":1")


KILLED_WRITER = """
import sys, pathlib
from llmjury.running.cache import SampleStore
from llmjury.store.location import StoreLocation
from llmjury.chat import Sample
store = SampleStore(StoreLocation(sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]))
i = 0
while True:
    store.put(f"k{i}", "openai:m", "t", "{}", Sample(text="x" * 2000 + str(i)), "run").result()
    if i == 50:
        print("ready", flush=True)
    i += 1
"""


def test_kill_mid_write_leaves_only_whole_entries(store_location):
    where = store_location
    proc = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, where.kind, str(where.path), where.dsn],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    os.kill(proc.pid, signal.SIGKILL)  # killed while it writes on: wherever the kill lands
    proc.wait()
    if where.kind == "sqlite":
        assert sqlite3.connect(where.path).execute("PRAGMA integrity_check").fetchone() == ("ok",)
    store = SampleStore(where)
    count = len(store)
    assert count > 50
    for i in range(count):  # every committed entry parses back whole
        assert store.get(f"k{i}").text == "x" * 2000 + str(i)


def test_export_and_recordings_round_trip(tmp_path, store_location):
    store = SampleStore(store_location)
    store.put("k1", "openai:m", "judge.j2@abc", '{"n": 1}', Sample(text="one"), "run-a").result()
    store.put("k2", "openai:m", "judge.j2@abc", '{"n": 1}', Sample(text="two"), "run-b").result()
    assert store.export(tmp_path / "rec" / "shard.jsonl", run_id="run-a") == 1
    replayed = SampleStore(sqlite_at(tmp_path / "b.sqlite"), shards(tmp_path / "rec"))
    assert replayed.get("k1").text == "one"
    assert replayed.get("k2") is None


def test_refresh_lookup_only_accepts_this_runs_entries(store_location):
    store = SampleStore(store_location)
    store.put("k", "openai:m", "t", "{}", Sample(text="old"), "run-old").result()
    assert store.get("k", written_by="run-new") is None
    assert store.get("k").text == "old"


@pytest.mark.parametrize("runs", [("run-x", "run-x"), ("run-x", "run-y")], ids=["one run", "two runs"])
def test_identical_requests_from_two_processes_are_paid_once(make_engine, store_location, runs):
    """Two engines (two xdist workers of one run, or two runs: CI shards, teammates) ask for the same
    sample at once: one fetches, the other waits for its answer in the shared store, whichever
    claims first."""
    import threading

    from llmjury.chat import chat
    from llmjury.testing import FakeOpenAI

    with FakeOpenAI(lambda body, i: "the answer", latency=0.3) as server:
        spec = ProviderSpec.parse(f"openai:judge;base_url={server.base_url}")
        engines = [make_engine(store=store_location, run_id=run) for run in runs]
        request = chat(("user", "the same question"), seed=1).with_n(2)
        results = [None, None]

        def ask(i):
            results[i] = engines[i].run(engines[i].complete(spec, request))

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert [r.texts for r in results] == [["the answer", "the answer"]] * 2
    assert len(server.requests) == 1
    assert sorted(results[0].cached + results[1].cached) == [False, False, True, True]


def test_a_live_lease_of_another_run_holds_and_a_run_out_one_is_taken_over(store_location):
    """Two runs on one store pay once: a live lease holds against any run; once its heartbeat stops
    and the lease runs out, the next claimant takes the key over and is told whose it was."""
    store = SampleStore(store_location, lease_s=0.5)
    assert store.claim(["k"], "old-run:1", run_id="old-run").result() == Claimed()
    assert store.claim(["k", "j"], "old-run:2", run_id="old-run").result().held == {"k": "old-run:1"}
    assert store.claim(["k"], "new-run:1", run_id="new-run").result().held == {"k": "old-run:1"}
    store.started(["k"], "old-run:1").result()  # its call went out; "j"'s never did
    store.close()  # the owners' heartbeat stops: their leases run out
    later = SampleStore(store_location, lease_s=0.5)
    deadline = time.monotonic() + 30
    # Both leases run out ("j"'s was taken a moment after "k"'s), by the database's clock.
    while (later.holder("k") is not None or later.holder("j") is not None) and time.monotonic() < deadline:
        time.sleep(0.05)
    taken = later.claim(["k", "j"], "new-run:1", run_id="new-run").result()
    assert taken == Claimed({}, {"k": "old-run:1"})  # only a started call may have been paid
    later.release(["k"], "new-run:1").result()
    assert later.holder("k") is None
    later.close()


def test_a_heartbeat_keeps_a_lease_past_its_length(store_location):
    """A call that takes longer than the lease keeps its claim: the owner's heartbeat renews it."""
    holder = SampleStore(store_location, lease_s=0.6)
    other = SampleStore(store_location, lease_s=0.6)
    assert holder.claim(["k"], "run-a:1", run_id="run-a").result() == Claimed()
    # Three lease lengths, watched by the database's clock through the other store.
    (start,) = other._db.execute(f"SELECT {other._db.now}")[0]
    while other._db.execute(f"SELECT {other._db.now}")[0][0] - start < 1.8:
        assert other.holder("k") == "run-a:1"
        time.sleep(0.05)
    assert other.claim(["k"], "run-b:1", run_id="run-b").result().held == {"k": "run-a:1"}
    holder.close()
    other.close()


def test_a_claim_on_a_key_already_answered_or_ended_names_it_ended(store_location):
    """An answer or a settled failure committed by one process of the run is not claimed again by
    another (which looked the key up just before the commit). An answer serves any run that may
    replay; a failure, and an answer for a run that must ask afresh, only its own run."""
    store = SampleStore(store_location)
    store.put("answered", "openai:m", "t", "{}", Sample(text="a"), "run-a").result()
    store.settle({"failed": "bad request"}, "run-a:1", "run-a").result()
    assert store.claim(["answered", "failed", "new"], "run-a:2", run_id="run-a").result().held == \
        {"answered": ENDED, "failed": ENDED}
    assert store.claim(["answered", "failed"], "run-b:1", run_id="run-b").result().held == {"answered": ENDED}
    assert store.claim(["answered"], "run-c:1", run_id="run-c", any_run=False).result().held == {}
    store.close()


CLAIMS_AND_EXITS = """
import sys, pathlib
from llmjury.running.cache import SampleStore
from llmjury.store.location import StoreLocation
location = StoreLocation(sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3])
store = SampleStore(location)
store.claim(["k"], "run-x:crashed", run_id="run-x").result()
store.started(["k"], "run-x:crashed").result()
"""


def test_a_claim_whose_process_is_gone_does_not_block_its_run(store_location):
    """A worker that crashed mid-fetch leaves its claim behind: the processes of this machine take
    the key over at once instead of waiting out the lease, and count it as taken over."""
    where = store_location
    subprocess.run([sys.executable, "-c", CLAIMS_AND_EXITS, where.kind, str(where.path), where.dsn], check=True)
    store = SampleStore(where)
    assert store.holder("k") is None
    assert store.claim(["k"], "run-x:alive", run_id="run-x").result() == Claimed({}, {"k": "run-x:crashed"})
    assert store.holder("k") == "run-x:alive"  # a live process's claim still holds
    assert store.claim(["k"], "run-x:other", run_id="run-x").result().held == {"k": "run-x:alive"}
    store.close()


def test_a_cache_from_before_leases_opens(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as old:
        old.execute("CREATE TABLE claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL, "
                    "pid INTEGER NOT NULL, host TEXT NOT NULL)")
        old.execute("INSERT INTO claims VALUES ('k', 'run-x:old', 1e12, 1, 'elsewhere')")
    store = SampleStore(sqlite_at(path))
    assert store.claim(["k"], "run-x:new", run_id="run-x").result() == Claimed()
    store.close()


def test_a_store_of_a_newer_version_is_refused_naming_it(store_location):
    from llmjury.errors import ConfigError

    store = SampleStore(store_location)
    store._db.execute("UPDATE llmjury_meta SET value = '99' WHERE name = 'schema_version'")
    store.close()
    with pytest.raises(ConfigError, match=r"version 99, this llmjury writes version 1"):
        SampleStore(store_location)


def test_identical_requests_wait_for_no_crashed_worker(make_engine, store_location):
    """An engine of the same run asks for a sample a crashed worker had claimed: it fetches it
    itself, and the usage counts the sample as paid again."""
    from llmjury.chat import chat
    from llmjury.testing import FakeOpenAI

    where = store_location
    request = chat(("user", "the question"))
    with FakeOpenAI(lambda body, i: "the answer") as server:
        spec = ProviderSpec.parse(f"openai:judge;base_url={server.base_url}")
        crashed = CLAIMS_AND_EXITS.replace('["k"]', f'["{request.sample_key("openai:judge", 0)}"]')
        subprocess.run([sys.executable, "-c", crashed, where.kind, str(where.path), where.dsn], check=True)
        engine = make_engine(store=where, run_id="run-x")
        future = engine.submit(engine.complete(spec, request))
        assert future.result(timeout=300).texts == ["the answer"]  # a guard: it never waits out the lease
    assert len(server.requests) == 1
    assert usage_by_provider(engine.ledger)["openai:judge"]["repaid_samples"] == 1


def test_a_schema_named_by_the_search_path_is_made_on_first_use(postgres_dsn, tmp_path):
    """`options=-csearch_path=NAME` keeps a team's runs apart: a schema that does not exist yet is
    made, not a crash with PostgreSQL's 'no schema has been selected to create in'."""
    import secrets

    name = f"team_{secrets.token_hex(4)}"
    dsn = f"{postgres_dsn} options='-csearch_path={name}'"
    store = SampleStore(StoreLocation("postgres", tmp_path / "unused", dsn))
    store.put("k", "openai:m", "t", "{}", Sample(text="kept"), "run").result()
    assert store.get("k").text == "kept"
    assert store._db.execute("SELECT current_schema()") == [(name,)]
    store.close()


@pytest.mark.parametrize(("written", "made"), [("TeamX", "teamx"), ('"TeamX"', "TeamX"), ("newteam,public", "newteam")])
def test_the_schema_made_is_the_one_postgresql_reads_from_the_search_path(postgres_dsn, tmp_path, written, made):
    """PostgreSQL lower-cases an unquoted name (a schema made as written, `TeamX`, was never found),
    and takes the first entry even where a later one exists (the tables went into `public`)."""
    import secrets

    suffix = secrets.token_hex(3)
    path = written.replace("TeamX", f"TeamX{suffix}").replace("newteam", f"newteam{suffix}")
    dsn = f"{postgres_dsn} options='-csearch_path={path}'"
    store = SampleStore(StoreLocation("postgres", tmp_path / "unused", dsn))
    assert store._db.execute("SELECT current_schema()") == [(made.replace("TeamX", f"TeamX{suffix}")
                                                            .replace("teamx", f"teamx{suffix}")
                                                            .replace("newteam", f"newteam{suffix}"),)]
    store.close()


def test_a_search_path_with_no_schema_to_make_is_a_usage_error_naming_the_store(postgres_dsn, tmp_path):
    from llmjury.errors import ConfigError

    with pytest.raises(ConfigError, match=r'PostgreSQL store .*: its search_path \("\$user"\) names no schema'):
        SampleStore(StoreLocation("postgres", tmp_path / "unused", f"{postgres_dsn} options='-csearch_path=\"$user\"'"))
