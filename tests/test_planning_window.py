"""Planned work starts a window at a time, in plan order: a waiting case costs memory only once it
starts, and a test whose case has not had its turn starts it at once, and it runs once."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from llmjury.cases import Case
from llmjury.judgement.jury import Jury, Outcome
from llmjury.judgement.planner import PlannedTest, Planner
from llmjury.judgement.verdicts import JudgeConfig, Verdict
from llmjury.jurors import JurySpec
from llmjury.pricing import PriceTable
from llmjury.prompts import PromptLibrary
from llmjury.running.limits import RateLimit
from llmjury.running.settings import PLANNING_WINDOW, PLANNING_WINDOW_PER_SLOT, Settings

CASES = [Case(id=f"c{i}", family="toy") for i in range(12)]


def planner_of(engine, window: int | None) -> Planner:
    return Planner(Jury(engine, engine.settings, PromptLibrary(), PriceTable.load()), window=window)


class Pipelines:
    """A pipeline that counts how many of its runs are under way at once, and how often each case ran."""

    def __init__(self) -> None:
        self.running = 0
        self.most = 0
        self.runs: Counter[str] = Counter()
        self.gate: asyncio.Event | None = None

    def hold_first(self, engine) -> None:
        """c0 waits, holding its place in the window, until `let_go`."""

        async def gate() -> asyncio.Event:
            return asyncio.Event()  # made on the engine's loop, where c0 waits on it
        self.gate = engine.run(gate())

    def let_go(self, engine) -> None:
        assert self.gate is not None
        engine._loop.call_soon_threadsafe(self.gate.set)

    async def judge(self, case: Case, jury: Jury) -> Outcome:
        self.runs[case.id] += 1
        self.running += 1
        self.most = max(self.most, self.running)
        for _ in range(5):  # give every other started pipeline its turn to start too
            await asyncio.sleep(0)
        if self.gate is not None and case.id == "c0":
            await self.gate.wait()
        self.running -= 1
        return Outcome([Verdict(case_id=case.id, family="toy", judge=JudgeConfig(provider="offline"))])


@pytest.mark.parametrize(("window", "most"), [(3, 3), (None, len(CASES))])
def test_no_more_than_the_window_runs_at_once(make_engine, window, most):
    engine = make_engine()
    planner, pipelines = planner_of(engine, window), Pipelines()
    assert planner.start([(pipelines.judge, case) for case in CASES]) == len(CASES)
    planner.settle()
    assert pipelines.most == most
    assert pipelines.runs == Counter({case.id: 1 for case in CASES})


def test_a_test_whose_case_has_not_started_starts_it_at_once_and_it_runs_once(make_engine):
    engine = make_engine()
    planner, pipelines = planner_of(engine, 1), Pipelines()
    pipelines.hold_first(engine)
    ended: list[str] = []
    planner.start([(pipelines.judge, case) for case in CASES], on_done=lambda: ended.append("one"))
    # The window's one place is taken by c0, waiting on its gate: c7's test starts its case itself.
    assert [v.case_id for v in planner.outcome(pipelines.judge, CASES[7]).verdicts] == ["c7"]
    pipelines.let_go(engine)
    planner.settle()
    assert pipelines.runs == Counter({case.id: 1 for case in CASES})
    assert len(ended) == len(CASES)  # the run's progress counts it as planned work


def test_a_case_whose_tests_reported_before_its_turn_is_not_started_again(make_engine):
    engine = make_engine()
    planner, pipelines = planner_of(engine, 1), Pipelines()
    pipelines.hold_first(engine)
    planner.start([(pipelines.judge, case) for case in CASES])
    planner.outcome(pipelines.judge, CASES[5])
    planner.release(f"{Pipelines.judge.__module__}.{Pipelines.judge.__qualname__}::c5")  # its test reported
    pipelines.let_go(engine)
    planner.settle()
    assert pipelines.runs["c5"] == 1


def test_a_test_body_whose_turn_has_not_come_starts_when_its_test_asks_and_runs_once(make_engine):
    engine = make_engine()
    planner, pipelines = planner_of(engine, 1), Pipelines()
    bodies: Counter[str] = Counter()
    ended: list[str] = []
    pipelines.hold_first(engine)

    def body(nodeid: str):
        async def run() -> None:
            bodies[nodeid] += 1
        return run

    tests = {f"t{i}": PlannedTest(body(f"t{i}"), lambda: []) for i in range(3)}
    planner.start([(pipelines.judge, CASES[0])], tests, on_done=lambda: ended.append("one"))
    asked = planner.test_result("t1")  # c0 holds the window's one place: t1 starts now, counted
    assert asked is not None and asked.result() is None and bodies == Counter({"t1": 1})
    pipelines.let_go(engine)
    planner.settle()
    assert bodies == Counter({"t0": 1, "t1": 1, "t2": 1}) and len(ended) == 4
    assert planner.test_result("t1") is None  # taken once: a rerun runs the body itself


def test_the_window_keeps_the_widest_provider_busy_and_a_batch_lane_gets_every_case():
    assert Settings().planning_window() == PLANNING_WINDOW
    wide = Settings(rate_limits={"vllm": RateLimit(concurrency=500)})
    assert wide.planning_window() == 500 * PLANNING_WINDOW_PER_SLOT
    batched = Settings(judge=JurySpec.parse("openai:gpt-4o-mini;batch=1"))
    assert batched.planning_window() is None
