"""Two pytest sessions on one run store, as two teammates or two CI runners: different run ids,
different hosts (one runs in a UTS namespace of its own, named `other-host`), one SQLite file or
one PostgreSQL schema, and one counting fake server. A sample is paid once while both are live; a
session killed with `kill -9` half way is taken over once its leases run out, re-paying at most
what it had in flight; and two sessions of one run group hold one budget between them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from infrastructure import unavailable
from priced_toy import CALL_USD, INI, PRICES

from llmjury.store.location import StoreLocation
from llmjury.store.postgres import DSN_VARIABLE
from llmjury.store.schema import ensure_schema
from llmjury.testing import FakeOpenAI

CASES = 16
#: The run-wide concurrency of each session where it matters (`--llm-concurrency`).
SLOTS = 4
#: Each session's concurrency under the shared budget.
SLOTS_EACH = 2
#: One judge call a case, priced at $4 (see priced_toy); SESSION tells the two sessions' prompts
#: apart where they judge different cases (the budget test), and is empty where they judge the same.
SUITE = f"""
import os

import llmjury
from llmjury import Case, JudgeConfig, Outcome, Verdict
from llmjury.chat import chat
from llmjury.errors import ProviderError

SESSION = os.environ.get("SHARED_STORE_SESSION", "")


async def judge(case, jury):
    try:
        completion = await jury.complete("judge", "toy", chat(("user", "hello " + SESSION + case.id[-2:])))
    except ProviderError as exc:
        return Outcome([Verdict(case_id=case.id, family="toy", judge=JudgeConfig(provider="openai:priced"),
                                valid=False, error=f"call failed: {{exc}}")])
    return Outcome([Verdict(case_id=case.id, family="toy", judge=JudgeConfig(provider=completion.provider))])


@llmjury.pipeline(judge)
@llmjury.parametrize([Case(id=f"item-{{i:02d}}", family="toy") for i in range({CASES})])
def test_toy(outcome):
    assert len(outcome.verdicts) == 1
"""
OTHER_HOST = "other-host"
#: How long a wait on the sessions may take before the test gives up and says what it waited for.
PATIENCE_S = 120.0


class SessionsServer(FakeOpenAI):
    """A slow fake OpenAI that tells its callers apart by the path of their base URL (`/a/v1`,
    `/b/v1`), and holds every answer until `gate` opens."""

    def __init__(self, latency: float) -> None:
        super().__init__(latency=latency)
        self.gate = threading.Event()

    def route(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if not self.gate.wait(PATIENCE_S):
            return 503, {"error": {"message": "the test never opened the gate", "type": "server_error"}}
        return super().route(path, body, headers)

    def base_url_for(self, session: str) -> str:
        return f"{self.origin}/{session}/v1"

    def asked_by(self, session: str) -> list[str]:
        """The bodies `session` sent, as text: one sample each (n=1), so a body names its sample."""
        with self._lock:
            pairs = list(zip(self.paths, self.requests, strict=True))
        return [json.dumps(body, sort_keys=True) for path, body in pairs if session_of(path) == session]

    def sessions(self) -> Counter[str]:
        with self._lock:
            return Counter(session_of(path) for path in self.paths)


def session_of(path: str) -> str:
    return path.strip("/").split("/")[0]


@dataclass
class Session:
    """One pytest session in a process group of its own (its xdist workers with it)."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path
    reports: Path

    def finish(self) -> int:
        return self.process.wait(PATIENCE_S)

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def summary(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.reports / "latest" / "summary.json").read_text())
        return data

    def kill(self) -> None:
        """`kill -9` the session and every process of its group."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(PATIENCE_S)


@dataclass
class Sessions:
    """Starts sessions of the suite in pytester's folder against one store and one server."""

    folder: Path
    location: StoreLocation
    server: SessionsServer
    started: list[Session] = field(default_factory=list)

    def start(self, name: str, *args: str, host: str | None = None, env: dict[str, str] | None = None) -> Session:
        store = ["--llm-cache-path", str(self.location.path)]
        variables = {**os.environ, **(env or {})}
        if self.location.kind == "postgres":
            store += ["--llm-store", "postgres"]
            variables[DSN_VARIABLE] = self.location.dsn
        reports = self.folder / f"reports-{name}"
        judge = f"openai:priced;base_url={self.server.base_url_for(name)}"
        command = [sys.executable, "-m", "pytest", "-q", "--llm-judge", judge,
                   "--llm-reports", str(reports), "--llm-progress", "lines", *store, *args]
        if host is not None:
            command = ["unshare", "--uts", "sh", "-c", f'hostname {host} && exec "$@"', "sh", *command]
        log = self.folder / f"session-{name}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(command, cwd=self.folder, env=variables, stdout=out,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        session = Session(name, process, log, reports)
        self.started.append(session)
        return session

    def live_runs(self) -> set[str]:
        """The run ids that have published their progress on the store: sessions that are planning."""
        db = self.location.open()
        try:
            ensure_schema(db)
            rows = db.execute("SELECT worker FROM tallies")
        finally:
            db.close()
        return {str(worker).split("/")[0] for (worker,) in rows}

    def claim_hosts(self) -> set[str]:
        db = self.location.open()
        try:
            return {str(host) for (host,) in db.execute("SELECT DISTINCT host FROM claims")}
        finally:
            db.close()


def until(what: str, ready: Callable[[], bool], sessions: Sessions) -> None:
    """Poll until `ready`; fail naming `what`, with the sessions' output, if it never comes."""
    deadline = time.monotonic() + PATIENCE_S
    while not ready():
        if time.monotonic() > deadline or any(s.process.poll() not in (None, 0) for s in sessions.started):
            logs = "\n".join(f"--- {s.name} (exit {s.process.poll()}):\n{s.output()}" for s in sessions.started)
            pytest.fail(f"never came: {what}\n{logs}")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def other_host() -> str:
    """A host name of its own for one session: skip, saying why, where no UTS namespace can be had."""
    try:
        probe = subprocess.run(["unshare", "--uts", "sh", "-c", f"hostname {OTHER_HOST} && hostname"],
                               capture_output=True, text=True, check=False)
    except OSError as exc:
        unavailable(f"`unshare` (util-linux) cannot be run here: {exc}")
    if probe.returncode != 0 or probe.stdout.strip() != OTHER_HOST:
        unavailable(f"`unshare --uts` cannot give a session a host name of its own here "
                    f"(exit {probe.returncode}: {probe.stderr.strip() or probe.stdout.strip()}); it needs root "
                    "or user namespaces")
    return OTHER_HOST


@pytest.fixture
def sessions(pytester: pytest.Pytester, store_location: StoreLocation) -> Iterator[Sessions]:
    pytester.makeini(INI + "llm_prices = prices.toml\n")
    pytester.makefile(".toml", prices=PRICES)
    pytester.makepyfile(test_shared_suite=SUITE)
    with SessionsServer(latency=0.3) as server:
        found = Sessions(pytester.path, store_location, server)
        try:
            yield found
        finally:
            for session in found.started:
                session.kill()
            server.gate.set()


def passed(session: Session) -> bool:
    return f"{CASES} passed" in session.output()


@pytest.mark.e2e  # two pytest sessions in processes of their own, one in a namespace of its own
def test_two_sessions_on_two_hosts_pay_once_for_every_sample(sessions, other_host):
    """`a` (on other-host) claims the cases first; its answers are held until `b` (this host, another
    run) is planning too, so `b` waits on `a`'s live leases instead of paying, and reads the answers."""
    server = sessions.server
    a = sessions.start("a", host=other_host)
    until("a's first request", lambda: server.sessions()["a"] > 0, sessions)
    b = sessions.start("b")
    until("both sessions planning on the store", lambda: len(sessions.live_runs()) == 2, sessions)
    assert {host.split('/')[0] for host in sessions.claim_hosts()} == {other_host}
    server.gate.set()
    assert (a.finish(), b.finish()) == (0, 0), a.output() + b.output()
    asked = Counter(server.asked_by("a") + server.asked_by("b"))
    assert len(asked) == CASES and set(asked.values()) == {1}, asked
    first, second = a.summary(), b.summary()
    assert first["run"]["id"] != second["run"]["id"]
    usage = second["usage"]["providers"]["openai:priced"]
    assert (usage["fresh_samples"], usage["cached_samples"], usage["repaid_samples"]) == (0, CASES, 0)
    assert passed(a) and passed(b)


@pytest.mark.e2e  # a session and its xdist workers killed with SIGKILL half way; the other takes over
def test_a_session_killed_half_way_is_taken_over_once_its_leases_run_out(sessions, other_host):
    """`a` (on other-host, two xdist workers) holds every case's claim and is killed after about half
    the calls: `b` (this host, where a pid of other-host says nothing) waits for the leases to run
    out, takes the rest over, and pays again at most the calls `a` had in flight."""
    server, lease = sessions.server, ["--llm-lease", "2", "--llm-concurrency", str(SLOTS)]
    a = sessions.start("a", "-n", "2", *lease, host=other_host)
    until("a's first request", lambda: server.sessions()["a"] > 0, sessions)
    b = sessions.start("b", *lease)
    until("both sessions planning on the store", lambda: len(sessions.live_runs()) == 2, sessions)
    server.gate.set()
    until("half the calls", lambda: server.sessions()["a"] >= CASES // 2, sessions)
    a.kill()
    assert b.finish() == 0, b.output()
    asked = Counter(server.asked_by("a") + server.asked_by("b"))
    repaid = sum(count - 1 for count in asked.values())
    assert len(asked) == CASES and max(asked.values()) <= 2, asked
    assert repaid <= SLOTS, asked
    usage = b.summary()["usage"]["providers"]["openai:priced"]
    # Exactly the calls paid twice: a claim marks its call started (committed before it is sent), and
    # only a dead owner's started calls count; it counted every key the dead session held before.
    assert usage["repaid_samples"] == repaid, (usage, asked)
    assert b.summary()["toy"]["unscored"] == 0 and passed(b)


BUDGET_USD = 20.0  # reached by the fifth call


@pytest.mark.e2e  # two pytest sessions in processes of their own
def test_two_sessions_of_one_run_group_hold_one_budget(sessions):
    """Each session judges cases of its own (different prompts), two calls at a time; both are
    paying when the answers start to flow. Together they stop once the group's spend reaches the
    budget, overshooting by at most the calls in flight across both: SLOTS_EACH * 2."""
    server, budget = sessions.server, ["--llm-budget", str(BUDGET_USD), "--llm-run-group", "team",
                                        "--llm-concurrency", str(SLOTS_EACH)]
    a = sessions.start("a", *budget, env={"SHARED_STORE_SESSION": "a"})
    b = sessions.start("b", *budget, env={"SHARED_STORE_SESSION": "b"})
    until("both sessions paying", lambda: len(server.sessions()) == 2, sessions)
    server.gate.set()
    assert (a.finish(), b.finish()) == (0, 0), a.output() + b.output()
    calls = len(server.requests)
    assert BUDGET_USD <= calls * CALL_USD <= BUDGET_USD + 2 * SLOTS_EACH * CALL_USD, server.sessions()
    assert len(set(server.asked_by("a") + server.asked_by("b"))) == calls  # nothing paid twice
    facts = [a.summary()["budget"], b.summary()["budget"]]
    assert [f["stopped"] for f in facts] == [True, True]
    assert sum(f["spent_usd"] for f in facts) == pytest.approx(calls * CALL_USD)
    db = sessions.location.open()
    try:
        assert db.execute("SELECT usd FROM spend WHERE run_group = ?", ("team",)) == [(calls * CALL_USD,)]
    finally:
        db.close()
