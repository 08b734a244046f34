"""A run stopped half way, under a concurrency limit against a server that answers one request at a
time, keeps about half of its cases whole: calls of cases already started go before new cases
(`llmjury.running.limits.PrioritySlots`), so the stop leaves whole cases, not every case half judged."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

import pytest
from test_interrupts import PYTEST_WITH_CTRL_C, REPORT_TIMEOUT_S, summary_files, wait_for

from llmjury.interrupts import CAUSES
from llmjury.runfiles import read_verdicts
from llmjury.testing import FakeOpenAI

CASES, CALLS = 8, 4
TOTAL = CASES * CALLS
#: A pairwise judge asked in both orders with two samples each: four calls, one after another, then
#: one verdict. The prompt names the case, so the server's log says which cases were started.
PAIRWISE = f"""
import llmjury
from llmjury import Case, JudgeConfig, Outcome, Verdict
from llmjury.chat import chat


async def judge(case, jury):
    for order in ("ab", "ba"):
        for sample in range(2):
            await jury.complete("judge", "pairs", chat(("user", f"{{case.id}} {{order}} {{sample}}")))
    return Outcome([Verdict(case_id=case.id, family="pairs", judge=JudgeConfig(provider="openai:m"))])


@llmjury.pipeline(judge)
@llmjury.parametrize([Case(id=f"pair-{{i}}", family="pairs") for i in range({CASES})])
def test_pair(outcome):
    assert len(outcome.verdicts) == 1
"""
INI = """
[pytest]
addopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider -p no:randomly
"""


class StopHalfWay:
    """The fake server's answers: the first `answered` requests get one, and the next one signals
    the run (SIGINT, as Ctrl-C) and is never answered. The server is serial, so this request is
    served only once the last answer is sent: exactly `answered` calls end, whatever the timing."""

    def __init__(self, answered: int) -> None:
        self.answered = answered
        self.pid: int | None = None
        self.asked: list[str] = []
        self.stopped = threading.Event()
        self.release = threading.Event()

    def __call__(self, body: dict, index: int) -> str:
        self.asked.append(body["messages"][-1]["content"])
        if len(self.asked) <= self.answered:
            return "reply"
        if not self.stopped.is_set():
            assert self.pid is not None, "a call before the run had started"
            self.stopped.set()
            os.kill(self.pid, signal.SIGINT)
        self.release.wait(timeout=120)  # held until the test ends: the run is being stopped
        return "reply"


@pytest.mark.e2e  # a pytest process of its own, stopped by a signal
@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_run_stopped_half_way_keeps_about_half_its_cases_whole(pytester: pytest.Pytester, workers: str) -> None:
    """At `--llm-concurrency 1`. The limit is run-wide, split across xdist workers with each share
    rounded up (`Settings.share`: a worker needs a slot to make progress), so under `-n 2` each worker
    has ceil(1 / 2) = 1 slot: two calls in flight for the run, one per worker, each worker ordering the
    cases of its own share (the planner's hash partition, not necessarily 4 and 4)."""
    pytester.makeini(INI)
    pytester.makepyfile(test_pairs_suite=PAIRWISE)
    server = StopHalfWay(answered=TOTAL // 2)
    slots = 1 if workers == "0" else 2
    with FakeOpenAI(server, serial=True) as fake:  # one answer at a time, as llama.cpp's server
        command = [sys.executable, "-c", PYTEST_WITH_CTRL_C, "-n", workers, "--llm-progress", "off",
                   "--llm-concurrency", "1", "--llm-judge", f"openai:m;base_url={fake.base_url}"]
        with subprocess.Popen(command, cwd=pytester.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) as run:
            server.pid = run.pid
            try:
                assert server.stopped.wait(timeout=120), "the run never made half its calls"
                assert wait_for(lambda: bool(summary_files(pytester.path)), REPORT_TIMEOUT_S)
                output = run.communicate(timeout=120)[0]
            finally:
                server.release.set()
                run.kill()
    (path,) = {found.resolve() for found in summary_files(pytester.path)}  # reports/latest links to it
    summary = json.loads(path.read_text())
    assert summary["complete"] is False, output
    assert summary["run"]["stopped"]["by"] == CAUSES[signal.SIGINT]

    records = read_verdicts(path.parent)
    assert all(record["valid"] for record in records), records
    whole = {record["case_id"] for record in records}
    started = {prompt.split()[0] for prompt in server.asked[:TOTAL // 2]}
    half_judged = started - whole
    assert whole <= started
    # Exactly half the calls were answered: 16, four cases' worth. Calls in half-judged cases are
    # calls no whole case got, so whole = 4 - (calls in half-judged cases) / 4; with at most one case
    # half judged per slot (1 to 3 calls each), that is 4 whole at one slot, and 3 or 4 at two (the
    # two half-judged cases' calls then add up to 4). 5 whole would need more calls than were answered.
    # A whole case whose verdict the stop caught before it was handed on counts as half judged: the
    # bounds hold for it too (its 4 calls leave the other slot's case none).
    answered = f"whole: {sorted(whole)}; answered in order: {', '.join(server.asked[:TOTAL // 2])}"
    assert len(half_judged) <= slots, answered
    assert CASES // 2 - (slots * (CALLS - 1)) // CALLS <= len(whole) <= CASES // 2, answered
