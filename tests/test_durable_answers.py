"""Durable when paid: a run killed with `kill -9` mid-way, then run again on the same store, pays again
only for the calls the killed run had in flight, on SQLite and PostgreSQL. The server kills the
first run itself as it takes its KILL_AT-th request, so the kill lands at the same point every time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections import Counter
from typing import Any

import pytest

from llmjury.running.claim_waits import CLAIM_WINDOW
from llmjury.store.location import StoreLocation
from llmjury.store.postgres import DSN_VARIABLE
from llmjury.testing import FakeOpenAI

pytestmark = pytest.mark.e2e  # pytest sessions in processes of their own, one killed

CASES = 120
KILL_AT = 50
CONCURRENCY = 4
SUITE = f"""
import llmjury
from llmjury import Case, JudgeConfig, Outcome, Verdict
from llmjury.chat import chat


async def judge(case, jury):
    completion = await jury.complete("judge", "toy", chat(("user", "hello " + case.id[-3:])))
    return Outcome([Verdict(case_id=case.id, family="toy", judge=JudgeConfig(provider=completion.provider))])


@llmjury.pipeline(judge)
@llmjury.parametrize([Case(id=f"item-{{i:03d}}", family="toy") for i in range({CASES})])
def test_toy(outcome):
    assert len(outcome.verdicts) == 1
"""


class KillingServer(FakeOpenAI):
    """Answers quickly, and `kill -9`s the process group of `victim` as it takes its KILL_AT-th request."""

    def __init__(self) -> None:
        super().__init__(latency=0.01)
        self.victim: subprocess.Popen[bytes] | None = None
        self._kill = threading.Lock()

    def respond(self, method: str, path: str, body: dict[str, Any], raw: bytes,
                headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        with self._kill:
            if self.victim is not None and len(self.requests) >= KILL_AT:
                os.killpg(self.victim.pid, signal.SIGKILL)
                self.victim = None
        return super().respond(method, path, body, raw, headers)


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_run_killed_mid_way_pays_again_only_its_calls_in_flight(pytester, store_location: StoreLocation,
                                                                   workers):
    pytester.makeini("[pytest]\naddopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider\n")
    pytester.makepyfile(test_toy_suite=SUITE)
    env = {**os.environ, "PYTEST_ADDOPTS": os.environ.get("PYTEST_ADDOPTS", "")}
    store = ["--llm-cache-path", str(store_location.path)]
    if store_location.kind == "postgres":
        store += ["--llm-store", "postgres"]
        env[DSN_VARIABLE] = store_location.dsn
    with KillingServer() as server:
        command = [sys.executable, "-m", "pytest", "-q", "-n", workers, "--llm-concurrency", str(CONCURRENCY),
                   "--llm-judge", f"openai:priced;base_url={server.base_url}", *store]
        with server._kill:
            server.victim = subprocess.Popen(command, cwd=pytester.path, env=env, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.STDOUT, start_new_session=True)
        first = server.victim
        first.wait(timeout=300)
        assert first.returncode == -signal.SIGKILL, "the first run ended before the server killed it"
        # Every request the killed run sent: those the server took after the 50th, in flight at the kill,
        # count too (they arrive while the kill lands; before, only the first 50 counted, a race).
        paid_before = {b["messages"][-1]["content"] for b in server.requests}
        rerun = subprocess.run(command, cwd=pytester.path, env=env, capture_output=True, timeout=300)
        assert rerun.returncode == 0, rerun.stdout.decode(errors="replace")[-3000:]
        asked = Counter(b["messages"][-1]["content"] for b in server.requests)
    assert set(asked) == {f"hello {i:03d}" for i in range(CASES)}
    paid_again = {prompt for prompt, count in asked.items() if count > 1}
    assert paid_again <= paid_before
    # Calls in flight at the kill: each process claims and calls at most its window (its share of
    # the concurrency, CLAIM_WINDOW times over) before the answers it has are committed.
    assert len(paid_again) <= CLAIM_WINDOW * CONCURRENCY, sorted(paid_again)
