"""A PostgreSQL store that goes away mid-run (a restart): the calls in flight keep their answers until
it is back, nothing paid is paid again, and a store away longer than `--llm-store-outage` stops the
wait with an error naming the store and the cause."""

from __future__ import annotations

import asyncio
import json
import pickle
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from llmjury.chat import chat
from llmjury.providers.base import ProviderSpec
from llmjury.running.ledger import usage_by_provider
from llmjury.store.location import StoreLocation
from llmjury.store.outage import Outage, StoreOutageError, ride_out
from llmjury.testing import FakeOpenAI
from llmjury.testing.postgres import fresh_schema, main, resume, stop

CALLS = 4


class HeldAnswers(FakeOpenAI):
    """Answers once told to: the test stops the store while the calls are in flight."""

    def __init__(self) -> None:
        super().__init__(lambda body, index: "answer to " + body["messages"][-1]["content"])
        self.arrived, self.release, self.answered = threading.Event(), threading.Event(), threading.Event()
        self._lock = threading.Lock()
        self.sent = 0

    def respond(self, method: str, path: str, body: dict[str, Any], raw: bytes,
                headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            if len(self.requests) >= CALLS:
                self.arrived.set()
        self.release.wait(60)
        answer = super().respond(method, path, body, raw, headers)
        with self._lock:
            self.sent += 1
            if self.sent == CALLS:
                self.answered.set()
        return answer


def spec(server: FakeOpenAI) -> ProviderSpec:
    return ProviderSpec.parse(f"openai:gpt-4o-mini;base_url={server.base_url};timeout=120")


def test_answers_in_flight_survive_a_postgres_restart_and_are_paid_once(own_postgres, make_engine, tmp_path):
    folder, dsn = own_postgres
    location = StoreLocation("postgres", tmp_path / "unused.sqlite", fresh_schema(dsn), Outage(60))
    with HeldAnswers() as server:
        engine = make_engine(store=location)

        async def asked() -> list[str]:
            done = await asyncio.gather(*(engine.complete(spec(server), chat(("user", f"q{i}"))) for i in range(CALLS)))
            return [completion.text for completion in done]

        running = engine.submit(asked())
        assert server.arrived.wait(30)  # every call is at the server, its claim committed
        stop(folder)  # the store goes away with the calls in flight
        server.release.set()
        assert server.answered.wait(30)  # paid: the answers are in the engine, their writes wait for the store
        assert not running.done()
        resume(folder)
        assert sorted(running.result(timeout=90)) == [f"answer to q{i}" for i in range(CALLS)]
    assert len(server.requests) == CALLS
    # Committed once the store was back: another run replays every answer without a call.
    with FakeOpenAI() as other:
        later = make_engine(store=location, run_id="run-2")

        async def replayed() -> list[list[bool]]:
            done = await asyncio.gather(*(later.complete(spec(other), chat(("user", f"q{i}"))) for i in range(CALLS)))
            return [completion.cached for completion in done]

        assert later.run(replayed()) == [[True]] * CALLS and other.requests == []


def test_a_store_away_past_its_outage_limit_stops_the_wait_naming_store_and_cause(own_postgres, make_engine,
                                                                                   tmp_path: Path):
    folder, dsn = own_postgres
    location = StoreLocation("postgres", tmp_path / "unused.sqlite", fresh_schema(dsn), Outage(1))
    with FakeOpenAI() as server:
        engine = make_engine(store=location)
        engine.run(engine.complete(spec(server), chat(("user", "before"))))
        stop(folder)
        with pytest.raises(StoreOutageError, match=r"PostgreSQL store \(database postgres on .*\): out of reach for "
                                                   r"more than 1 s \(--llm-store-outage\)"):
            engine.run(engine.complete(spec(server), chat(("user", "after"))))
        assert len(server.requests) == 1  # nothing was called without a store to keep its answer in


def test_answers_paid_while_the_store_stays_away_are_kept_and_handed_to_the_next_run(own_postgres, make_engine,
                                                                                      tmp_path: Path):
    """Past the outage limit the calls fail, but the answers that arrived are kept on this machine:
    the next run on the store replays every one of them, and pays for none."""
    folder, dsn = own_postgres
    schema, unsaved = fresh_schema(dsn), tmp_path / "unsaved"
    with HeldAnswers() as server:
        engine = make_engine(store=StoreLocation("postgres", tmp_path / "unused.sqlite", schema, Outage(1)),
                             unsaved=unsaved)

        async def asked() -> list[str]:
            done = await asyncio.gather(*(engine.complete(spec(server), chat(("user", f"q{i}"))) for i in range(CALLS)))
            return [completion.text for completion in done]

        running = engine.submit(asked())
        assert server.arrived.wait(30)
        stop(folder)  # for good, as far as this run can tell
        server.release.set()
        assert server.answered.wait(30)  # paid
        with pytest.raises(StoreOutageError):
            running.result(timeout=60)
        engine.land()  # as a stopping run does before it counts: the other calls' answers are kept too
        (usage,) = usage_by_provider(engine.ledger).values()  # paid: counted with their tokens, not as failures
        assert (usage["calls"], usage["fresh_samples"], usage["failures"]) == (CALLS, CALLS, 0)
        assert usage["prompt_tokens"] > 0
    kept = [json.loads(line) for path in unsaved.glob("*/*.jsonl") for line in path.read_text().splitlines()]
    assert sorted(json.loads(entry["sample"])["text"] for entry in kept) == [f"answer to q{i}" for i in range(CALLS)]
    resume(folder)
    with FakeOpenAI() as other:
        later = make_engine(store=StoreLocation("postgres", tmp_path / "unused.sqlite", schema, Outage(60)),
                            run_id="run-2", unsaved=unsaved)

        async def replayed() -> list[list[bool]]:
            done = await asyncio.gather(*(later.complete(spec(other), chat(("user", f"q{i}"))) for i in range(CALLS)))
            return [completion.cached for completion in done]

        assert later.run(replayed()) == [[True]] * CALLS and other.requests == []
    assert later.store is not None and later.store.recovered == CALLS
    assert not list(unsaved.glob("*/*.jsonl"))  # handed over, so not again


def test_calls_in_flight_when_the_run_stops_on_its_store_land_and_their_answers_are_kept(own_postgres, make_engine,
                                                                                          tmp_path: Path):
    """The run stops (the store given up on) and cancels its cases while their calls are at the
    provider: the calls are not hung up on, and the answers they paid for are kept for the next run."""
    folder, dsn = own_postgres
    unsaved = tmp_path / "unsaved"
    location = StoreLocation("postgres", tmp_path / "unused.sqlite", fresh_schema(dsn), Outage(1))
    with HeldAnswers() as server:
        engine = make_engine(store=location, unsaved=unsaved)

        async def asked() -> list[str]:
            done = await asyncio.gather(*(engine.complete(spec(server), chat(("user", f"q{i}"))) for i in range(CALLS)))
            return [completion.text for completion in done]

        running = engine.submit(asked())
        assert server.arrived.wait(30)
        stop(folder)
        with pytest.raises(StoreOutageError):  # another case meets the store gone: the run stops
            engine.run(engine.complete(spec(server), chat(("user", "one more"))))
        running.cancel()  # its cases are cancelled, their calls still at the provider
        server.release.set()
        engine.close()
        assert server.answered.is_set()  # every answer was read, none hung up on
    kept = [json.loads(line) for path in unsaved.glob("*/*.jsonl") for line in path.read_text().splitlines()]
    assert sorted(json.loads(entry["sample"])["text"] for entry in kept) == [f"answer to q{i}" for i in range(CALLS)]
    assert usage_by_provider(engine.ledger)["openai:gpt-4o-mini"]["fresh_samples"] == CALLS


def test_a_connection_back_leaves_the_store_away_while_another_still_waits():
    outage, back = Outage(30), {"a": threading.Event(), "b": threading.Event()}

    def ride(name: str) -> None:
        def work() -> str:
            if not back[name].is_set():
                raise ConnectionError("server closed the connection")
            return name

        ride_out(work, lost=lambda exc: isinstance(exc, ConnectionError), reconnect=lambda: None,
                 outage=outage, where="store")

    riders = {name: threading.Thread(target=ride, args=(name,)) for name in back}
    for rider in riders.values():
        rider.start()
    deadline = time.monotonic() + 30
    while outage.waiting < 2:
        assert time.monotonic() < deadline, "the connections never waited"
        time.sleep(0.01)
    back["a"].set()
    riders["a"].join(30)
    assert outage.away  # "b" still waits
    back["b"].set()
    riders["b"].join(30)
    assert not outage.away and outage.waiting == 0


def test_a_store_location_goes_to_another_process_with_its_outage_settings():
    """multiprocessing pickles what it hands a process (bench/store.py's claimants)."""
    outage = Outage(7)
    outage.wait(1)
    sent = pickle.loads(pickle.dumps(StoreLocation("postgres", Path("cache.sqlite"), "host=x", outage)))
    assert (sent.outage.limit_s, sent.outage.waiting) == (7, 1)
    sent.outage.wait(-1)
    assert not sent.outage.away and outage.away  # each process counts its own connections


def test_a_wait_that_ends_with_the_store_back_is_kept_for_the_report():
    outage = Outage(5)
    failures = [ConnectionError("server closed the connection")] * 2

    def work() -> str:
        if failures:
            raise failures.pop()
        return "done"

    def ride() -> str:
        return ride_out(work, lost=lambda exc: isinstance(exc, ConnectionError), reconnect=lambda: None,
                        outage=outage, where="store")

    failures, kept = [], failures
    assert ride() == "done" and outage.ridden_s == 0  # never lost: nothing to tell
    failures = kept
    assert ride() == "done" and 0 < outage.ridden_s < 5 and outage.gave_up is None


SUITE = """
import llmjury
from llmjury import Case, JudgeConfig, Outcome, Verdict
from llmjury.chat import chat


async def judge(case, jury):
    completion = await jury.complete("judge", "toy", chat(("user", "hello " + case.id[-2:])))
    return Outcome([Verdict(case_id=case.id, family="toy", judge=JudgeConfig(provider=completion.provider))])


@llmjury.pipeline(judge)
@llmjury.parametrize([Case(id=f"item-{i:02d}", family="toy") for i in range(40)])
def test_toy(outcome):
    assert len(outcome.verdicts) == 1
"""


class RestartingServer(FakeOpenAI):
    """Restarts the run's PostgreSQL (stop, then start) as it answers its `at`-th request, while the
    other calls of the run are in flight."""

    def __init__(self, folder: Path, at: int) -> None:
        super().__init__(latency=0.05)
        self.folder, self.at = folder, at
        self._restart = threading.Lock()
        self.restarted = False

    def respond(self, method: str, path: str, body: dict[str, Any], raw: bytes,
                headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        with self._restart:
            if len(self.requests) >= self.at and not self.restarted:
                stop(self.folder)
                resume(self.folder)
                self.restarted = True
        return super().respond(method, path, body, raw, headers)


@pytest.mark.e2e
@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_run_rides_out_a_postgres_restart_and_pays_each_call_once(pytester, own_postgres, monkeypatch, workers):
    folder, dsn = own_postgres
    pytester.makeini("[pytest]\naddopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider\n")
    pytester.makepyfile(test_toy_suite=SUITE)
    with RestartingServer(folder, at=10) as server:
        monkeypatch.setenv("LLMJURY_STORE_DSN", fresh_schema(dsn))
        result = pytester.runpytest_subprocess(
            "-n", workers, "--llm-store", "postgres", "--llm-store-outage", "60", "--llm-concurrency", "8",
            "--llm-judge", f"openai:priced;base_url={server.base_url};timeout=60")
        assert server.restarted
        asked = [body["messages"][-1]["content"] for body in server.requests]
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.assert_outcomes(passed=40)
    assert sorted(asked) == sorted(f"hello {i:02d}" for i in range(40))  # each paid once
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    assert summary["run"]["stopped"] is None
    assert summary["run"]["store"]["away_s"] > 0  # the wait is told of, in the report and on the terminal
    assert summary["run"]["store"]["kept_answers"] == 0
    result.stdout.fnmatch_lines(["the run store was out of reach for up to * s: the run waited for it and went on"])


class StoppingServer(FakeOpenAI):
    """Stops the run's PostgreSQL for good as it answers its `at`-th request."""

    def __init__(self, folder: Path, at: int) -> None:
        super().__init__(latency=0.05)
        self.folder, self.at = folder, at
        self._stop = threading.Lock()
        self.stopped = False

    def respond(self, method: str, path: str, body: dict[str, Any], raw: bytes,
                headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        with self._stop:
            if len(self.requests) >= self.at and not self.stopped:
                stop(self.folder)
                self.stopped = True
        return super().respond(method, path, body, raw, headers)


@pytest.mark.e2e
@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_store_away_past_the_limit_stops_the_run_with_a_report_marked_incomplete(pytester, own_postgres,
                                                                                  monkeypatch, workers):
    folder, dsn = own_postgres
    pytester.makeini("[pytest]\naddopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider\n")
    pytester.makepyfile(test_toy_suite=SUITE)
    schema = fresh_schema(dsn)
    monkeypatch.setenv("LLMJURY_STORE_DSN", schema)
    with StoppingServer(folder, at=10) as server:
        result = pytester.runpytest_subprocess(
            "-n", workers, "--llm-store", "postgres", "--llm-store-outage", "2", "--llm-concurrency", "4",
            "--llm-judge", f"openai:priced;base_url={server.base_url};timeout=60")
    output = result.stdout.str()
    assert result.ret != 0 and "INTERNALERROR" not in output, output[-3000:]
    # The run's own folder: `latest` moves only to a run that recorded a verdict, and under xdist the
    # store may be gone before any worker's verdict was handed on.
    (summary_file,) = (path for path in (pytester.path / "reports").glob("*/summary.json")
                       if path.parent.name != "latest")
    summary = json.loads(summary_file.read_text())
    assert "out of reach for more than 2 s (--llm-store-outage)" in summary["run"]["stopped"]["by"], summary["run"]
    assert summary["complete"] is False
    # Once the store is back, the next run pays for none of the answers the stopped one received.
    resume(folder)
    unsaved = [json.loads(line) for path in (pytester.path / ".llmjury" / "unsaved").glob("*/*.jsonl")
               for line in path.read_text().splitlines()]
    db = StoreLocation("postgres", pytester.path / "unused.sqlite", schema).open()
    try:
        committed = [json.loads(request) for (request,) in db.execute("SELECT request FROM samples")]
    finally:
        db.close()
    received = {request["messages"][-1]["content"]
                for request in [*committed, *(json.loads(entry["request"]) for entry in unsaved)]}
    assert unsaved and received
    assert summary["run"]["store"]["kept_answers"] == len(unsaved)  # said, with where they are
    assert summary["run"]["store"]["kept_in"].startswith(".llmjury/unsaved/")
    result.stdout.fnmatch_lines([f"{len(unsaved)} paid answer(s) could not be stored: kept in .llmjury/unsaved/* "
                                 "until the next run on this store hands them to it"])
    with FakeOpenAI() as again:
        rerun = pytester.runpytest_subprocess(
            "-n", workers, "--llm-store", "postgres", "--llm-judge", f"openai:priced;base_url={again.base_url}")
        asked = {body["messages"][-1]["content"] for body in again.requests}
    rerun.assert_outcomes(passed=40)
    rerun.stdout.fnmatch_lines([f"{len(unsaved)} answer(s) an earlier run paid for and could not store were "
                                "handed to the store"])
    assert not asked & received, sorted(asked & received)
    assert asked | received == {f"hello {i:02d}" for i in range(40)}
    assert not list((pytester.path / ".llmjury" / "unsaved").glob("*/*.jsonl"))


def test_the_throwaway_servers_command_refuses_a_mistyped_command_and_stops_nothing(tmp_path: Path, capsys):
    """`python -m llmjury.testing.postgres strat DIR` once stopped the server in DIR: any word but
    start and resume was taken for stop."""
    with pytest.raises(SystemExit) as refused:
        main(["strat", str(tmp_path)])
    assert refused.value.code == 2 and "invalid choice: 'strat'" in capsys.readouterr().err
