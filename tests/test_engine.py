"""Caching by sample index, record modes, de-duplication and limits in the engine."""

from __future__ import annotations

import asyncio

import pytest

from llmjury.chat import chat
from llmjury.errors import CacheMissError, NoLogprobsError
from llmjury.providers.base import ProviderSpec
from llmjury.running.cache import CacheMode, SampleStore
from llmjury.running.limits import RateLimit
from llmjury.store.location import StoreLocation


def spec(server) -> ProviderSpec:
    return ProviderSpec.parse(f"openai:gpt-4o-mini;base_url={server.base_url}")


def test_more_samples_later_fetch_only_the_missing_ones(openai_server, make_engine):
    engine = make_engine()
    three = engine.run(engine.complete(spec(openai_server), chat(("user", "q"), n=3)))
    five = engine.run(engine.complete(spec(openai_server), chat(("user", "q"), n=5)))
    assert five.texts[:3] == three.texts
    assert [r.get("n", 1) for r in openai_server.requests] == [3, 2]
    # Samples this run paid for are re-read, not cache hits; another run would find all five cached.
    assert five.cached == [False] * 5 and engine.ledger["openai:gpt-4o-mini"].cached_samples == 0
    later = make_engine(run_id="run-2")
    assert later.run(later.complete(spec(openai_server), chat(("user", "q"), n=5))).cached == [True] * 5


def test_replay_miss_names_the_prompt_and_how_to_record(openai_server, make_engine):
    engine = make_engine(mode=CacheMode.REPLAY)
    request = chat(("user", "q")).model_copy(update={"task": "socratic/judge.j2@abc123"})
    with pytest.raises(CacheMissError, match=r"socratic/judge.j2@abc123.*--llm-cache record"):
        engine.run(engine.complete(spec(openai_server), request))
    assert openai_server.requests == []


def test_replay_serves_what_record_stored(openai_server, make_engine, tmp_path):
    first = make_engine(cache=tmp_path / "c.sqlite")
    first.run(first.complete(spec(openai_server), chat(("user", "q"))))
    replay = make_engine(mode=CacheMode.REPLAY, cache=tmp_path / "c.sqlite", run_id="run-2")
    assert replay.run(replay.complete(spec(openai_server), chat(("user", "q")))).cached == [True]
    assert len(openai_server.requests) == 1


def test_refresh_calls_once_per_run_then_reuses(openai_server, make_engine, tmp_path):
    make = lambda run: make_engine(mode=CacheMode.REFRESH, cache=tmp_path / "c.sqlite", run_id=run)  # noqa: E731
    a = make("run-a")
    a.run(a.complete(spec(openai_server), chat(("user", "q"))))
    b1, b2 = make("run-b"), make("run-b")  # two workers of one run
    b1.run(b1.complete(spec(openai_server), chat(("user", "q"))))
    assert b2.run(b2.complete(spec(openai_server), chat(("user", "q")))).cached == [True]
    assert len(openai_server.requests) == 2


def test_a_stopping_run_reads_its_cache_but_makes_no_new_call(openai_server, make_engine):
    engine = make_engine()
    engine.run(engine.complete(spec(openai_server), chat(("user", "asked before"))))
    engine.halt.stop(NoLogprobsError("no logprobs: the server sends none"))
    assert engine.run(engine.complete(spec(openai_server), chat(("user", "asked before")))).text == "reply 0"
    with pytest.raises(NoLogprobsError, match="no logprobs: the server sends none"):
        engine.run(engine.complete(spec(openai_server), chat(("user", "not asked yet"))))
    assert len(openai_server.requests) == 1


def test_identical_requests_in_flight_share_one_call(openai_server, make_engine):
    openai_server.latency = 0.2
    engine = make_engine(mode=CacheMode.OFF)

    async def both():
        return await asyncio.gather(*(engine.complete(spec(openai_server), chat(("user", "q"))) for _ in range(5)))

    results = engine.run(both())
    assert {r.text for r in results} == {"reply 0"}
    assert len(openai_server.requests) == 1


def test_concurrency_limit_caps_calls_in_flight(openai_server, make_engine):
    openai_server.latency = 0.1
    engine = make_engine(rate_limits={"openai:gpt-4o-mini": RateLimit(concurrency=3)})

    async def many():
        return await asyncio.gather(*(engine.complete(spec(openai_server), chat(("user", f"q{i}")))
                                      for i in range(12)))

    engine.run(many())
    assert openai_server.max_in_flight == 3


def test_rate_limit_line_parses_and_rejects_unknown_fields():
    name, limit = RateLimit.parse("openai:gpt-4o rpm=60 tpm=1000", 8)
    assert name == "openai:gpt-4o" and limit == RateLimit(concurrency=8, rpm=60.0, tpm=1000.0)
    with pytest.raises(Exception, match="unknown field 'rps'"):
        RateLimit.parse("openai:gpt-4o rps=1", 8)


def test_closing_an_engine_closes_its_event_loop(make_engine):
    engine = make_engine()
    engine.close()
    assert engine._loop.is_closed()
    engine.close()  # a second close (the fixture's) is harmless


ASKS_TWO_SAMPLES = """
import sys, pathlib
from llmjury.running.cache import SampleStore
from llmjury.chat import chat
from llmjury.running.engine import Engine
from llmjury.providers.base import ProviderSpec
from llmjury.running.settings import Settings
from llmjury.store.location import StoreLocation
engine = Engine(Settings(), SampleStore(StoreLocation("sqlite", pathlib.Path(sys.argv[1]))), "run-killed")
small = ProviderSpec.parse(f"openai:small;base_url={sys.argv[2]}")
engine.run(engine.complete(small, chat(("user", "q"), seed=3).with_n(2)))
"""


def test_an_answer_is_in_the_cache_as_soon_as_it_arrives_and_survives_a_kill(tmp_path):
    """A server that answers one choice whatever `n` asks: sample 0 arrives, then the call for sample 1
    hangs. The first answer must already be committed (another connection reads it), and a kill -9 of
    the asking process while it waits must not lose it."""
    import sqlite3
    import subprocess
    import sys
    import threading

    from llmjury.testing import FakeOpenAI, ServerBehaviour

    second_asked, release = threading.Event(), threading.Event()

    def reply(body, index):
        if "n" not in body:  # the follow-up call for sample 1
            second_asked.set()
            release.wait()
        return f"answer seeded {body.get('seed')}"

    cache = tmp_path / "cache.sqlite"
    with FakeOpenAI(reply, behaviour=ServerBehaviour(honours_n=False)) as server:
        asker = subprocess.Popen([sys.executable, "-c", ASKS_TWO_SAMPLES, str(cache), server.base_url])
        try:
            assert second_asked.wait(timeout=120), "the asking process never asked for sample 1"
            key = chat(("user", "q"), seed=3).sample_key("openai:small", 0)
            with sqlite3.connect(cache) as other:
                stored = other.execute("SELECT sample FROM samples WHERE key = ?", (key,)).fetchone()
            assert stored is not None and "answer seeded 3" in stored[0]
            asker.kill()
            asker.wait()
        finally:
            release.set()
            asker.kill()
    survivor = SampleStore(StoreLocation("sqlite", cache))
    assert survivor.get(key).text == "answer seeded 3"
    assert survivor.get(chat(("user", "q"), seed=3).sample_key("openai:small", 1)) is None
    survivor.close()


def test_a_failed_later_call_keeps_the_answers_that_arrived_before_it(make_engine):
    from llmjury.errors import PermanentProviderError
    from llmjury.testing import FakeOpenAI, Fault, ServerBehaviour

    with FakeOpenAI(lambda body, i: f"answer seeded {body.get('seed')}",
                    behaviour=ServerBehaviour(honours_n=False)) as server:
        server.faults.append(Fault(status=400, message="no", matches=lambda body: "n" not in body))
        engine = make_engine()
        spec = ProviderSpec.parse(f"openai:small;base_url={server.base_url}")
        with pytest.raises(PermanentProviderError):
            engine.run(engine.complete(spec, chat(("user", "q"), seed=3).with_n(2)))
        again = make_engine(run_id="run-2")
        assert again.run(again.complete(spec, chat(("user", "q"), seed=3))).cached == [True]
        assert len(server.requests) == 2


def test_lookups_asked_in_one_turn_of_the_loop_reach_the_store_as_one_statement(make_engine, openai_server):
    """A replayed run asks for every case's answer at once: on PostgreSQL one round trip each made a
    replay four to seven times SQLite's; they are read together, once per turn of the loop."""
    import asyncio

    from llmjury.testing import FakeOpenAI  # noqa: F401  (the fixture's server)

    spec = ProviderSpec.parse(f"openai:m;base_url={openai_server.base_url}")
    requests = [chat(("user", f"question {i}")) for i in range(200)]
    first = make_engine(run_id="run-1")

    async def ask_all(engine):
        return await asyncio.gather(*(engine.complete(spec, r) for r in requests))

    first.run(ask_all(first))
    first.close()
    again = make_engine(run_id="run-2")
    statements = []
    real_rows = again.store.rows
    again.store.rows = lambda keys: statements.append(len(keys)) or real_rows(keys)
    replayed = again.run(ask_all(again))
    assert all(r.cached == [True] for r in replayed) and len(openai_server.requests) == 200
    assert statements == [200]
