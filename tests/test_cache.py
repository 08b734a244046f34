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

from llmjury.chat import Sample
from llmjury.providers.base import ProviderSpec
from llmjury.running.cache import SampleStore, shards


def _writer(path: str, worker: int, count: int) -> None:
    store = SampleStore(Path(path))
    for i in range(count):
        # Half the keys are shared between workers: the same request answered twice.
        key = f"shared-{i}" if i % 2 else f"w{worker}-{i}"
        store.put(key, "openai:m", "t", "{}", Sample(text=f"{worker}:{i}"), "run").result()
    store.close()


def test_concurrent_processes_lose_and_duplicate_nothing(tmp_path):
    path = tmp_path / "cache.sqlite"
    SampleStore(path).close()
    procs = [multiprocessing.Process(target=_writer, args=(str(path), w, 200)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    assert all(p.exitcode == 0 for p in procs)
    store = SampleStore(path)
    assert len(store) == 4 * 100 + 100  # own keys + one row per shared key
    assert store.get("shared-1").text.endswith(":1")


KILLED_WRITER = """
import sys, pathlib
from llmjury.running.cache import SampleStore
from llmjury.chat import Sample
store = SampleStore(pathlib.Path(sys.argv[1]))
i = 0
while True:
    store.put(f"k{i}", "openai:m", "t", "{}", Sample(text="x" * 2000 + str(i)), "run").result()
    if i == 50:
        print("ready", flush=True)
    i += 1
"""


def test_kill_mid_write_leaves_only_whole_entries(tmp_path):
    path = tmp_path / "cache.sqlite"
    proc = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone() == ("ok",)
    store = SampleStore(path)
    count = len(store)
    assert count > 50
    for i in range(count):  # every committed entry parses back whole
        assert store.get(f"k{i}").text == "x" * 2000 + str(i)


def test_export_and_recordings_round_trip(tmp_path):
    store = SampleStore(tmp_path / "a.sqlite")
    store.put("k1", "openai:m", "judge.j2@abc", '{"n": 1}', Sample(text="one"), "run-a").result()
    store.put("k2", "openai:m", "judge.j2@abc", '{"n": 1}', Sample(text="two"), "run-b").result()
    assert store.export(tmp_path / "rec" / "shard.jsonl", run_id="run-a") == 1
    replayed = SampleStore(tmp_path / "b.sqlite", shards(tmp_path / "rec"))
    assert replayed.get("k1").text == "one"
    assert replayed.get("k2") is None


def test_refresh_lookup_only_accepts_this_runs_entries(tmp_path):
    store = SampleStore(tmp_path / "a.sqlite")
    store.put("k", "openai:m", "t", "{}", Sample(text="old"), "run-old").result()
    assert store.get("k", written_by="run-new") is None
    assert store.get("k").text == "old"


def test_identical_requests_from_two_processes_are_paid_once(make_engine, tmp_path):
    """Two engines of one run (two xdist workers) ask for the same sample at once: one fetches, the
    other waits for its answer in the shared store, whichever claims first."""
    import threading

    from llmjury.chat import chat
    from llmjury.testing import FakeOpenAI

    cache = tmp_path / "shared.sqlite"
    with FakeOpenAI(lambda body, i: "the answer", latency=0.3) as server:
        spec = ProviderSpec.parse(f"openai:judge;base_url={server.base_url}")
        engines = [make_engine(cache=cache, run_id="run-x") for _ in range(2)]
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


def test_a_claim_of_a_killed_run_does_not_block_the_next(tmp_path):
    store = SampleStore(tmp_path / "c.sqlite")
    assert store.claim(["k"], "old-run:1", run_id="old-run", ttl=600).result() == {}
    assert store.claim(["k", "j"], "old-run:2", run_id="old-run", ttl=600).result() == {"k": "old-run:1"}
    assert store.claim(["k"], "new-run:1", run_id="new-run", ttl=600).result() == {}  # another run takes over
    store.release(["k"], "new-run:1").result()
    assert store.holder("k") is None
    store.close()



def test_a_claim_on_a_key_the_run_already_ended_names_it_ended(tmp_path):
    """An answer or a settled failure committed by one process of the run is not claimed again by
    another (which looked the key up just before the commit); a later run's claim takes it."""
    from llmjury.running.cache import ENDED

    store = SampleStore(tmp_path / "c.sqlite")
    store.put("answered", "openai:m", "t", "{}", Sample(text="a"), "run-a").result()
    store.settle({"failed": "bad request"}, "run-a:1", "run-a").result()
    assert store.claim(["answered", "failed", "new"], "run-a:2", run_id="run-a", ttl=600).result() == \
        {"answered": ENDED, "failed": ENDED}
    assert store.claim(["answered", "failed"], "run-b:1", run_id="run-b", ttl=600).result() == {}
    store.close()


CLAIMS_AND_EXITS = """
import sys, pathlib
from llmjury.running.cache import SampleStore
SampleStore(pathlib.Path(sys.argv[1])).claim(["k"], "run-x:crashed", run_id="run-x", ttl=600).result()
"""


def test_a_claim_whose_process_is_gone_does_not_block_its_run(tmp_path):
    """A worker that crashed mid-fetch leaves its claim behind: the other workers of its run take the
    key over at once instead of waiting out the claim's 600 s."""
    path = tmp_path / "c.sqlite"
    subprocess.run([sys.executable, "-c", CLAIMS_AND_EXITS, str(path)], check=True)
    store = SampleStore(path)
    assert store.holder("k") is None
    assert store.claim(["k"], "run-x:alive", run_id="run-x", ttl=600).result() == {}
    assert store.holder("k") == "run-x:alive"  # a live process's claim still holds
    assert store.claim(["k"], "run-x:other", run_id="run-x", ttl=600).result() == {"k": "run-x:alive"}
    store.close()


def test_a_cache_from_before_claims_named_their_process_opens(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as old:
        old.execute("CREATE TABLE claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL)")
        old.execute("INSERT INTO claims VALUES ('k', 'run-x:old', 1e12)")
    store = SampleStore(path)
    assert store.claim(["k"], "run-x:new", run_id="run-x", ttl=600).result() == {}
    store.close()


def test_identical_requests_wait_for_no_crashed_worker(make_engine, tmp_path):
    """An engine of the same run asks for a sample a crashed worker had claimed: it fetches it itself."""
    from llmjury.chat import chat
    from llmjury.testing import FakeOpenAI

    cache = tmp_path / "shared.sqlite"
    request = chat(("user", "the question"))
    with FakeOpenAI(lambda body, i: "the answer") as server:
        spec = ProviderSpec.parse(f"openai:judge;base_url={server.base_url}")
        crashed = CLAIMS_AND_EXITS.replace('["k"]', f'["{request.sample_key("openai:judge", 0)}"]')
        subprocess.run([sys.executable, "-c", crashed, str(cache)], check=True)
        engine = make_engine(cache=cache, run_id="run-x")
        future = engine.submit(engine.complete(spec, request))
        assert future.result(timeout=300).texts == ["the answer"]  # a guard: before, it waited out the 600 s claim
    assert len(server.requests) == 1
