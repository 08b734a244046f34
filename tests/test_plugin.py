"""The plugin end to end, through pytester: verdicts merged across xdist, reports, gates, sampling."""

from __future__ import annotations

import gc
import json
import weakref
from collections.abc import Iterator

import pytest

from llmjury.results.exit_status import GATE_FAILED_EXIT, GATE_INCONCLUSIVE_EXIT
from llmjury.runfiles import read_verdicts

TOY = """
import llmjury
from llmjury import Case, JudgeConfig, Outcome, Verdict
from llmjury.chat import chat
from llmjury.family import Result


class Item(Case):
    text: str


class Aspect(Result):
    aspect: str


CASES = [Item(id=f"item-{i:02d}", family="toy", text=f"hello {i}") for i in range(12)]


async def judge(case, jury):
    completion = await jury.complete("judge", "toy", chat(("user", case.text)))
    valid = case.id != "item-03"
    return Outcome([
        Verdict(case_id=case.id, family="toy", judge=JudgeConfig(provider=completion.provider),
                result=Aspect(aspect=aspect), valid=valid, error=None if valid else "unparseable: test")
        for aspect in ("a", "b")
    ])


@llmjury.pipeline(judge)
@llmjury.parametrize(CASES)
def test_toy(outcome):
    assert len(outcome.verdicts) == 2
"""

INI = """
[pytest]
addopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider --strict-markers
markers =
    toy: toy family
"""


@pytest.fixture
def toy(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    pytester.makepyfile(test_toy=TOY)
    return pytester


def summary(pytester: pytest.Pytester) -> dict:
    return json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())


# -n 4 merges the way -n 2 does, at twice the start-up
@pytest.mark.parametrize("workers", ["0", pytest.param("2", marks=pytest.mark.e2e)])
def test_verdicts_are_counted_once_whatever_the_worker_count(toy, workers):
    result = toy.runpytest_inprocess("-n", workers)
    result.assert_outcomes(passed=12)
    section = summary(toy)["toy"]
    assert (section["cases"], section["verdicts"], section["unscored"]) == (12, 24, 2)
    pairs = [(r["case_id"], r["result"]["aspect"]) for r in read_verdicts(toy.path / "reports" / "latest")]
    assert len(pairs) == len(set(pairs)) == 24


@pytest.mark.e2e  # a pytest process of its own with two xdist workers
@pytest.mark.parametrize("load", [["-p", "xdist.plugin", "-p", "llmjury.plugin"], ["-p", "xdist", "-p", "llmjury"]])
def test_runs_under_xdist_loaded_by_name_with_plugin_autoload_off(toy, monkeypatch, load):
    """Hermetic setups (distribution packaging, some CI) turn plugin autoload off and name the plugins:
    xdist's docs and packagers write `xdist.plugin`, which registers under that module name."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    toy.runpytest_subprocess(*load, "-n", "2").assert_outcomes(passed=12)
    assert summary(toy)["toy"]["verdicts"] == 24


def test_runs_without_xdist_installed(toy):
    toy.runpytest_inprocess("-p", "no:xdist").assert_outcomes(passed=12)
    assert summary(toy)["toy"]["verdicts"] == 24


def test_failing_gate_exits_6_and_names_metric_value_and_threshold(toy):
    result = toy.runpytest_inprocess("--llm-gate", "toy.unscored_rate<=0.01")
    assert result.ret == GATE_FAILED_EXIT == 10
    result.stdout.fnmatch_lines(["*FAIL*toy.unscored_rate<=0.01: value 0.0833 [[]0.0232, 0.258[]] vs 0.01: *"])


def test_passing_gate_exits_0(toy):
    assert toy.runpytest_inprocess("--llm-gate", "toy.valid>=20").ret == 0


def test_gate_on_an_interval_that_straddles_is_inconclusive(toy):
    assert toy.runpytest_inprocess("--llm-gate", "toy.unscored_rate<=0.2", "--llm-gate-uncertain", "pass").ret == 0
    result = toy.runpytest_inprocess("--llm-gate", "toy.unscored_rate<=0.2")
    assert result.ret == GATE_INCONCLUSIVE_EXIT == 11
    result.stdout.fnmatch_lines(["*INCONCLUSIVE*straddles*"])
    gates = summary(toy)["gates"]
    assert gates[0]["status"] == "inconclusive"


def test_gate_on_the_lower_bound(toy):
    """Unscored rate 0.0833 [0.0232, 0.258]: a lower bound below the threshold alone is inconclusive,
    the gate fails only when even the upper bound is below it."""
    assert toy.runpytest_inprocess("--llm-gate", "toy.unscored_rate.low>=0.3").ret == GATE_FAILED_EXIT
    assert toy.runpytest_inprocess("--llm-gate", "toy.unscored_rate.low>=0.1").ret == GATE_INCONCLUSIVE_EXIT
    assert toy.runpytest_inprocess("--llm-gate", "toy.unscored_rate.low>=0.01").ret == 0


def test_malformed_gate_is_a_usage_error(toy):
    result = toy.runpytest_inprocess("--llm-gate", "toy.win_rate about 0.5")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*METRIC OP THRESHOLD*"])


def test_a_workers_share_is_its_place_among_the_runs_workers_not_its_id():
    """xdist numbers a replacement worker on (gw2, gw3... after a crash, up to gw7 and gw8 in one
    stuck run): a share read from the id (`gw7` of 2 workers) planned nothing while every test
    waited for the plan of worker 0 or 1. The controller hands each worker its place."""
    from types import SimpleNamespace

    from llmjury.session.runner import Share
    from llmjury.session.xdist_hooks import FromWorkers, XdistController

    controller = XdistController("run-1", FromWorkers())
    nodes = [SimpleNamespace(workerinput={"workerid": f"gw{n}", "workercount": 2}) for n in (7, 8, 9)]
    for node in nodes:
        controller.pytest_configure_node(node)
    shares = [Share.of(SimpleNamespace(workerinput=node.workerinput)) for node in nodes]  # type: ignore[arg-type]
    assert [(s.run_id, s.index, s.count) for s in shares] == [("run-1", 0, 2), ("run-1", 1, 2), ("run-1", 0, 2)]


def test_sample_picks_the_same_subset_under_xdist(toy):
    first = toy.runpytest_inprocess("--llm-sample", "5", "--llm-seed", "7", "-v")
    first.assert_outcomes(passed=5)
    chosen = sorted(line.split("::")[1].split(" ")[0] for line in first.outlines if "PASSED" in line)
    again = toy.runpytest_inprocess("--llm-sample", "5", "--llm-seed", "7", "-n", "2", "-v")
    again.assert_outcomes(passed=5)
    assert sorted({r["case_id"] for r in read_verdicts(toy.path / "reports" / "latest")}) == \
        sorted(c.split("[")[1].rstrip("]") for c in chosen)


def test_family_marker_selects_under_strict_markers(toy):
    result = toy.runpytest_inprocess("-m", "toy", "-k", "item-01 or item-02")
    result.assert_outcomes(passed=2)


def test_a_familys_fixed_markers_named_by_m_are_registered_before_any_case_is_collected(pytester):
    """pytest 9.2+ refuses a `-m` name no one registered under --strict-markers: `-m "arena and not
    recorded"` must work in a project whose collected cases carry no `recorded`, or none at all."""
    pytester.makeini("[pytest]\naddopts = -p no:deepeval -p no:asyncio -p no:benchmark --strict-markers\n")
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    expression = "arena and not recorded or (geval and criterion_coherence) or cut_1"
    listed = pytester.runpytest_inprocess("--markers", "-m", expression)
    names = [line.split(":")[0].removeprefix("@pytest.mark.") for line in listed.outlines
             if line.startswith("@pytest.mark.")]
    assert {"arena", "recorded", "geval", "criterion_coherence", "cut_1"} <= set(names)
    assert "socratic" not in names and "simulated" not in names, "only what -m names"
    assert len(names) == len(set(names)), "each marker is listed once"
    pytester.runpytest_inprocess("-m", expression).assert_outcomes(deselected=1)


def test_planning_runs_cases_concurrently(pytester, openai_server):
    openai_server.hold_until_in_flight(6, timeout=5)  # answered once 6 calls overlap; a test-by-test run never
    pytester.makeini(INI)
    pytester.makepyfile(test_toy=TOY)
    result = pytester.runpytest_inprocess("--llm-judge", f"openai:m;base_url={openai_server.base_url}")
    result.assert_outcomes(passed=12)
    assert openai_server.max_in_flight >= 6  # one process; a test-by-test run would keep 1 in flight
    assert len(openai_server.requests) == 12  # the tests reused the planned answers
    usage = summary(pytester)["usage"]["providers"]["openai:m"]
    assert usage["fresh_samples"] == 12


def test_verdicts_survive_the_report_json_round_trip(pytester):
    pytester.makeini(INI)
    pytester.makepyfile(test_toy=TOY)
    reprec = pytester.inline_run("-k", "item-00")
    (teardown,) = [r for r in reprec.getreports("pytest_runtest_logreport") if r.when == "teardown"]
    config = pytester.parseconfig()
    data = config.hook.pytest_report_to_serializable(config=config, report=teardown)
    restored = config.hook.pytest_report_from_serializable(config=config, data=json.loads(json.dumps(data)))
    assert restored.llmjury_verdicts == teardown.llmjury_verdicts
    assert len(restored.llmjury_verdicts) == 2


def test_gate_exit_codes_are_none_of_pytests_own():
    pytest_codes = {int(code) for code in pytest.ExitCode} | {6}  # 6: ExitCode.MAX_WARNINGS_ERROR from pytest 9.2
    assert {GATE_FAILED_EXIT, GATE_INCONCLUSIVE_EXIT}.isdisjoint(pytest_codes)


FAILING_ONCE = """
import llmjury
from llmjury import Case, JudgeConfig, Outcome, Verdict
from llmjury.chat import chat
from llmjury.errors import ProviderError


async def judge(case, jury):
    try:
        completion = await jury.complete("judge", "toy", chat(("user", case.id)))
    except ProviderError as exc:
        return Outcome([Verdict(case_id=case.id, family="toy", judge=JudgeConfig(provider="x"), valid=False,
                                error=f"call failed: {exc}")])
    return Outcome([Verdict(case_id=case.id, family="toy", judge=JudgeConfig(provider=completion.provider))])


@llmjury.pipeline(judge)
@llmjury.parametrize([Case(id=f"item-{i:02d}", family="toy") for i in range(16)])
def test_toy(outcome):
    assert len(outcome.verdicts) == 1
"""


@pytest.mark.parametrize("workers", ["0", pytest.param("2", marks=pytest.mark.e2e)])
def test_the_planning_workers_outcome_is_final_failures_included(pytester, openai_server, workers):
    """A call that fails once (and would succeed if asked again) stays a failure at any -n: the worker
    that runs a test reads the planner's outcome instead of running the pipeline again."""
    from llmjury.testing import Fault

    pytester.makeini(INI)
    pytester.makepyfile(test_toy=FAILING_ONCE)
    failing = [f"item-{i:02d}" for i in range(0, 16, 3)]
    for case_id in failing:
        openai_server.faults.append(Fault(status=400, message="refused once",
                                          matches=lambda body, c=case_id: body["messages"][-1]["content"] == c))
    result = pytester.runpytest_inprocess("-n", workers, "-p", "no:randomly",
                                           "--llm-judge", f"openai:judge;base_url={openai_server.base_url}")
    result.assert_outcomes(passed=16)
    assert summary(pytester)["toy"]["unscored"] == len(failing)
    assert len(openai_server.requests) == 16  # one call a case: no failed call was asked again


@pytest.mark.e2e  # two xdist workers
def test_a_failure_planned_by_another_worker_leads_with_its_own_message(pytester):
    """The short test summary names a failed assertion the same whichever worker planned the test:
    every test runs on one worker (`--dist loadfile`) while both plan half the bodies."""
    pytester.makeini(INI)
    pytester.makepyfile(test_answers="""
        import llmjury
        from llmjury import Case

        @llmjury.parametrize([Case(id=f"q-{i:02d}", family="answers") for i in range(8)])
        async def test_answer(case, jury):
            verdict = await jury.compare("short", "a much longer reference", criteria="better")
            assert verdict.winner == "a", f"lost {case.id}"
    """)
    result = pytester.runpytest_inprocess("-n", "2", "--dist", "loadfile", "-p", "no:randomly", "-rf",
                                          "-o", "markers=answers: answers")
    result.assert_outcomes(failed=8)
    summaries = sorted(line for line in result.outlines if line.startswith("FAILED "))
    assert len(summaries) == 8
    for i, line in enumerate(summaries):  # "- AssertionError: ..." here, "- Failed: AssertionError: ..." handed on
        assert line.endswith(f"AssertionError: lost q-{i:02d}"), line


@pytest.mark.e2e  # a pytest process of its own with two xdist workers
def test_a_worker_whose_tests_are_done_still_finishes_the_share_it_planned(pytester, openai_server):
    """Planning runs beside the test loop. Here every test runs on one worker (`--dist loadfile`, one
    file) while both plan half the cases: the other worker's tests are done at once, and it must finish its share
    before it leaves, or the worker running the tests waits for it for ever (a subprocess, so that a
    regression fails by its time limit instead of hanging the suite)."""
    pytester.makeini(INI)
    pytester.makepyfile(test_toy=FAILING_ONCE)
    result = pytester.runpytest_subprocess("-n", "2", "--dist", "loadfile", "-p", "no:randomly", "-v",
                                           "--llm-judge", f"openai:judge;base_url={openai_server.base_url}",
                                           timeout=120)
    result.assert_outcomes(passed=16)
    assert len({line.split()[0] for line in result.outlines if " PASSED " in line}) == 1  # one worker ran them all
    assert summary(pytester)["toy"]["verdicts"] == 16
    assert len(openai_server.requests) == 16  # the idle worker's share was not asked again


def test_a_run_stopped_by_its_first_failure_does_not_wait_for_cases_still_being_judged(pytester, openai_server):
    """With `-x` the run ends at item-00's failure: the call still waiting for the last case's
    answer (held by the server for up to a minute) is cancelled, not waited for."""
    import threading

    from llmjury.testing import Fault

    release, answered = threading.Event(), threading.Event()

    def reply(body: dict, index: int) -> str:
        if body["messages"][-1]["content"] == "item-15":
            release.wait(timeout=60)
            answered.set()
        return "fine"

    openai_server.reply = reply
    openai_server.faults.append(Fault(status=400, message="refused",
                                      matches=lambda body: body["messages"][-1]["content"] == "item-00"))
    pytester.makeini(INI)
    pytester.makepyfile(test_toy=FAILING_ONCE.replace("assert len(outcome.verdicts) == 1",
                                                      "assert outcome.verdicts[0].valid"))
    try:
        result = pytester.runpytest_inprocess("-x", "-p", "no:randomly",
                                              "--llm-judge", f"openai:judge;base_url={openai_server.base_url}")
        assert not answered.is_set()  # the run is over and the held answer was never awaited
    finally:
        release.set()
    result.assert_outcomes(failed=1)
    assert summary(pytester)["run"]["stopped"]["by"]


def test_a_session_gives_back_what_it_froze_out_of_the_garbage_collector(toy):
    """The session freezes what start-up built (gc.freeze) so full collections skip it, and raises the
    collector's thresholds; it gives both back as its last cleanup: an in-process run leaves no object
    of its caller uncollectable, nor its caller's collector tuned for a run."""
    import gc

    from llmjury.session.frozen import JUDGING_THRESHOLDS

    toy.makeconftest("""
        import gc
        from pathlib import Path

        def pytest_sessionfinish(session):
            Path("frozen.txt").write_text(str(gc.get_freeze_count()))
            Path("thresholds.txt").write_text(repr(gc.get_threshold()))
    """)
    before = gc.get_threshold()
    gc.set_threshold(1234, 5, 6)  # a caller's own thresholds, unlike the judging run's
    try:
        toy.inline_run().assertoutcome(passed=12)
        assert gc.get_threshold() == (1234, 5, 6)
    finally:
        gc.set_threshold(*before)
    assert int((toy.path / "frozen.txt").read_text()) > 0
    assert (toy.path / "thresholds.txt").read_text() == repr(JUDGING_THRESHOLDS)
    assert gc.get_freeze_count() == 0


def test_a_session_leaves_what_its_caller_froze_frozen(toy, callers_frozen_cycle):
    """A caller that froze objects of its own before an in-process run keeps them frozen (gc.unfreeze
    would give back every frozen object, the caller's too): the session then freezes nothing itself,
    and still gives the collector's thresholds back."""
    before = gc.get_threshold()
    toy.inline_run().assertoutcome(passed=12)
    gc.collect()
    assert callers_frozen_cycle() is not None, "unfrozen by the session"
    assert gc.get_threshold() == before


def test_a_session_without_llmjury_cases_keeps_the_collector_as_it_was(toy):
    """A pytest run that selects none of llmjury's tests neither freezes nor retunes the collector."""
    import gc

    toy.makeconftest("""
        import gc
        from pathlib import Path

        def pytest_sessionfinish(session):
            Path("collector.txt").write_text(repr((gc.get_freeze_count(), gc.get_threshold())))
    """)
    toy.makepyfile(test_plain="def test_plain():\n    assert True\n")
    toy.inline_run("test_plain.py").assertoutcome(passed=1)
    assert (toy.path / "collector.txt").read_text() == repr((0, gc.get_threshold()))



@pytest.mark.parametrize("workers", ["0", pytest.param("2", marks=pytest.mark.e2e)])
def test_every_process_of_a_run_sets_what_lives_aside_before_pytests_cleanup_collections(toy, workers, monkeypatch):
    """pytest's cleanup runs five full collections; each process of a run that judged (the xdist
    controller too, which collects no test but holds every report and verdict) sets what lives aside
    before them, in its unconfigure."""
    toy.makeconftest("""
        import gc
        import os
        from pathlib import Path

        import pytest

        @pytest.hookimpl(trylast=True)  # after llmjury's unconfigure, before pytest's cleanup
        def pytest_unconfigure(config):
            name = os.environ.get("PYTEST_XDIST_WORKER", "controller")
            Path(f"set-aside-{name}.txt").write_text(str(gc.get_freeze_count()))
    """)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # set when this test runs in a worker
    toy.runpytest_inprocess("-n", workers, "-p", "no:randomly").assert_outcomes(passed=12)
    counts = {path.name: int(path.read_text()) for path in toy.path.glob("set-aside-*.txt")}
    processes = ["controller"] + [f"gw{i}" for i in range(int(workers))]
    assert sorted(counts) == sorted(f"set-aside-{name}.txt" for name in processes)
    assert all(count > 0 for count in counts.values()), counts


@pytest.mark.e2e  # a pytest process of its own (with two xdist workers at -n 2)
@pytest.mark.parametrize("workers", ["0", "2"])
def test_what_lives_at_the_end_of_a_run_is_frozen_at_interpreter_exit(toy, workers, monkeypatch):
    """The interpreter's exit would walk every object of the run once more in a full collection: each
    process of a run (the xdist controller too, which holds every verdict) registers gc.freeze to run
    at exit, so it ends without that walk."""
    toy.makeconftest("""
        import atexit
        import gc
        import os
        from pathlib import Path

        # Registered before the session's own exit handler, so it runs after it (last in, first out).
        name = os.environ.get("PYTEST_XDIST_WORKER", "controller")
        atexit.register(lambda: Path(f"frozen-at-exit-{name}.txt").write_text(str(gc.get_freeze_count())))
    """)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # set when this test runs in a worker
    toy.runpytest_subprocess("-n", workers, "-p", "no:randomly").assert_outcomes(passed=12)
    counts = {path.name: int(path.read_text()) for path in toy.path.glob("frozen-at-exit-*.txt")}
    processes = ["controller"] + ([f"gw{i}" for i in range(int(workers))])
    assert sorted(counts) == sorted(f"frozen-at-exit-{name}.txt" for name in processes)
    assert all(count > 0 for count in counts.values()), counts



@pytest.mark.e2e  # a pytest process of its own with two xdist workers
def test_xdist_workers_import_no_template_engine_nor_statistics_they_do_not_use(toy, monkeypatch):
    """Each xdist worker is an interpreter of its own, paying every import again: templates (jinja2)
    load at the first render (the controller's report.html here, the workers' offline judges render
    none), statistics (numpy) where the report is built, in the controller."""
    toy.makeconftest("""
        import json
        import os
        import sys
        from pathlib import Path

        def pytest_unconfigure(config):
            name = os.environ.get("PYTEST_XDIST_WORKER", "controller")
            loaded = [m for m in ("jinja2", "numpy", "scipy", "pandas") if m in sys.modules]
            Path(f"modules-{name}.json").write_text(json.dumps(loaded))
    """)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # set when this test runs in a worker
    toy.runpytest_subprocess("-n", "2", "-p", "no:randomly").assert_outcomes(passed=12)
    loaded = {path.stem.split("-", 1)[1]: json.loads(path.read_text()) for path in toy.path.glob("modules-*.json")}
    assert loaded == {"controller": ["jinja2", "numpy"], "gw0": [], "gw1": []}


class Cycle:
    """Garbage only the cycle collector frees (it refers to itself)."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def callers_frozen_cycle() -> Iterator[weakref.ref[Cycle]]:
    """A weak reference to a cycle this test process froze itself, as a caller of pytest.main may:
    alive after a collection only while it stays frozen. Unfrozen after the test."""
    gc.disable()  # no collection may free it before it is frozen
    ours = weakref.ref(Cycle())
    gc.freeze()
    gc.enable()
    yield ours
    gc.unfreeze()


def test_a_run_without_llmjury_cases_leaves_the_garbage_collector_alone(pytester, callers_frozen_cycle):
    """The plugin loads in every pytest run of the environment: one with no case of its own neither
    freezes objects nor unfreezes what the process froze itself (a server that forks, say)."""
    pytester.makepyfile(test_plain="""
        import gc
        import weakref

        class Cycle:
            def __init__(self):
                self.me = self

        gc.disable()  # no collection may free it before the plugin would have frozen it
        collected_in_the_test = weakref.ref(Cycle())

        def test_plain():
            gc.enable()
            gc.collect()
            assert collected_in_the_test() is None, "frozen by the plugin"
    """)
    pytester.inline_run("-p", "no:cacheprovider").assertoutcome(passed=1)
    gc.collect()
    assert callers_frozen_cycle() is not None, "unfrozen by the plugin"
