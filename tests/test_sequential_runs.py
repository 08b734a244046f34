"""--llm-sequential end to end on the polite project: a regression stops after its first batch with
the cases left skipped as decided (counted in the summary, their calls not made), an unchanged run
judges every case, the decision is the same at -n 0 and -n 2, and a rerun continues the same record."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from llmjury.results.exit_status import GATE_FAILED_EXIT
from llmjury.saved import load_run

PROJECT = Path(__file__).parent / "projects" / "polite"
CASES = ["--llm-option", "polite.cases=120"]
GATE = ["--llm-gate", "polite.polite_rate.delta.high>=0"]


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """The polite project with a baseline run of 120 polite replies, and a prompt that drops 'please'."""
    for path in PROJECT.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            target = pytester.path / path.relative_to(PROJECT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    (pytester.path / "rude" / "polite").mkdir(parents=True)
    (pytester.path / "rude" / "polite" / "candidate.j2").write_text("You are a helpful assistant.\nBe brief.\n")
    pytester.runpytest_inprocess("-n", "0", *CASES, "--llm-reports", "main").assert_outcomes(passed=120)
    return pytester


def summary(project: pytest.Pytester, reports: str) -> dict[str, Any]:
    return json.loads((project.path / reports / "latest" / "summary.json").read_text())


def sequential(project: pytest.Pytester, *args: str, reports: str = "reports", subprocess: bool = False) -> Any:
    given = [*CASES, *GATE, "--llm-baseline", "main/latest", "--llm-sequential", "--llm-reports", reports, *args]
    if subprocess:
        return project.runpytest_subprocess(*given)
    return project.runpytest_inprocess("-n", "0", *given)


def test_a_regression_stops_after_its_first_batch_and_skips_the_rest_as_decided(project):
    result = sequential(project, "-o", "llm_prompts=rude")
    assert result.ret == GATE_FAILED_EXIT
    result.assert_outcomes(passed=20, skipped=100)
    result.stdout.fnmatch_lines(["*FAIL*polite.polite_rate.delta.high>=0*confidence sequence*n=20*",
                                 "*sequential: decided after 20 tests; 100 tests skipped as decided; 40 calls*"
                                 "about 200 calls*saved by stopping*"])
    section = summary(project, "reports")["sequential"]
    assert (section["tests_judged"], section["tests_decided"], section["decided"]) == (20, 100, True)
    assert section["cost"]["calls"] == 40  # a candidate and a judge call per judged case, none for the rest
    assert section["gates"][0]["decided"] == "fail" and section["gates"][0]["n"] == 20
    markdown = (project.path / "reports" / "latest" / "summary.md").read_text()
    assert "- sequential: decided after 20 tests; 100 tests skipped as decided; 40 calls" in markdown


def test_an_unchanged_run_is_never_decided_early_and_judges_every_case(project):
    result = sequential(project)
    assert result.ret == 0
    result.assert_outcomes(passed=120)
    result.stdout.fnmatch_lines(["*PASS*polite.polite_rate.delta.high>=0*n=120*",
                                 "*sequential: not decided early; all 120 tests judged*"])
    section = summary(project, "reports")["sequential"]
    assert (section["decided"], section["tests_decided"]) == (False, 0)


def test_a_rerun_continues_the_same_record(project):
    """The same seed gives the same order and the same first batch: a rerun replays it from the cache."""
    first = sequential(project, "-o", "llm_prompts=rude", reports="one")
    again = sequential(project, "-o", "llm_prompts=rude", reports="two")
    first.assert_outcomes(passed=20, skipped=100)
    again.assert_outcomes(passed=20, skipped=100)
    judged = [sorted({r["case_id"] for r in load_run(project.path / folder / "latest", folder).records})
              for folder in ("one", "two")]
    assert judged[0] == judged[1] and len(judged[0]) == 20


def test_a_bad_batch_size_or_scale_stops_the_run_at_start_up(project):
    result = sequential(project, "--llm-sequential-batch", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--llm-sequential-batch 0: must be at least 1*"])
    result = sequential(project, "-o", "llm_sequential_scales=polite.polite_rate=1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini llm_sequential_scales 'polite.polite_rate=1': write METRIC=LOW:HIGH*"])


@pytest.mark.e2e
def test_two_workers_stop_after_the_same_batch(project):
    result = sequential(project, "-n", "2", "-o", "llm_prompts=rude", subprocess=True)
    assert result.ret == GATE_FAILED_EXIT
    result.assert_outcomes(passed=20, skipped=100)
    assert summary(project, "reports")["sequential"]["tests_decided"] == 100


# -- plain case tests of your own, which no planner runs ahead ----------------------------------------
BOT = '''
import os


def answer(question):
    a, b = (int(word) for word in question.rstrip("?").split() if word.isdigit())
    if os.environ.get("BOT_BROKEN") and (a + b) % 3 == 0:
        return "no idea"
    return f"It is {a + b}."
'''
EVAL = '''
import llmjury
from llmjury import Case

import bot


class Question(Case):
    question: str
    reference: str


CASES = [Question(id=f"sum-{a}-{b}", family="bot", question=f"What is {a} plus {b}?", reference=str(a + b))
         for a in range(12) for b in range(10)]


@llmjury.parametrize(CASES)
def test_answer(case):
    assert case.reference in bot.answer(case.question), f"expected {case.reference}"
'''
OWN_GATE = ["--llm-gate", "custom.check.test_answer.pass_rate.delta.high>=0"]


@pytest.fixture
def own(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project whose eval is a plain `def` case test, with a baseline run of 120 passing cases."""
    pytester.makepyfile(bot=BOT, test_bot=EVAL)
    pytester.makeini("[pytest]\npythonpath = .\nllm_item_failures = record\n"
                     "addopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider\n")
    pytester.runpytest_inprocess("-n", "0", "--llm-reports", "main").assert_outcomes(passed=120)
    return pytester


def test_plain_case_tests_of_a_regression_are_skipped_as_decided_after_the_looks_that_decide(own, monkeypatch):
    monkeypatch.setenv("BOT_BROKEN", "1")
    result = own.runpytest_inprocess("-n", "0", "--llm-baseline", "main/latest", "--llm-sequential", *OWN_GATE)
    assert result.ret == GATE_FAILED_EXIT
    outcomes = result.parseoutcomes()
    assert outcomes["skipped"] >= 60  # decided after at most three batches of twenty
    assert outcomes.get("passed", 0) + outcomes.get("xfailed", 0) + outcomes["skipped"] == 120
    section = summary(own, "reports")["sequential"]
    assert section["tests_decided"] == outcomes["skipped"] and section["gates"][0]["decided"] == "fail"
    judged = section["tests_judged"]
    assert judged % 20 == 0 and judged + section["tests_decided"] == 120  # whole batches, the rest skipped


def test_plain_case_tests_of_an_unchanged_run_all_run(own):
    result = own.runpytest_inprocess("-n", "0", "--llm-baseline", "main/latest", "--llm-sequential", *OWN_GATE)
    assert result.ret == 0
    result.assert_outcomes(passed=120)


@pytest.mark.e2e
def test_plain_case_tests_stop_after_the_same_batch_on_two_workers(own, monkeypatch):
    monkeypatch.setenv("BOT_BROKEN", "1")
    alone = own.runpytest_inprocess("-n", "0", "--llm-baseline", "main/latest", "--llm-sequential", *OWN_GATE,
                                    "--llm-reports", "alone")
    two = own.runpytest_subprocess("-n", "2", "--llm-baseline", "main/latest", "--llm-sequential", *OWN_GATE,
                                   "--llm-reports", "two")
    assert two.ret == alone.ret == GATE_FAILED_EXIT
    assert two.parseoutcomes() == alone.parseoutcomes()
    assert summary(own, "two")["sequential"]["gates"] == summary(own, "alone")["sequential"]["gates"]


# -- async jury tests, run ahead by the planner ----------------------------------------------------------
JURY_EVAL = '''
import llmjury
from llmjury import Case


class Question(Case):
    question: str
    reference: str


CASES = [Question(id=f"q{i}", family="answers", question=f"What is {i} plus 1?", reference=str(i + 1))
         for i in range(100)]


@llmjury.parametrize(CASES)
async def test_answer(case, jury):
    answer = await jury.ask("candidate", case.question)
    await jury.compare(answer, case.reference, criteria="more correct and helpful")
'''


def test_jury_tests_waiting_for_their_batch_are_judged_or_skipped_as_decided(pytester):
    """A jury test takes its planned future out of the planner when it starts waiting, often before
    its batch runs: the batch still resolves it (it hung before)."""
    pytester.makepyfile(test_answers=JURY_EVAL)
    pytester.makeini("[pytest]\naddopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider\n")
    result = pytester.runpytest_inprocess("-n", "0", "--llm-sequential", "--llm-gate",
                                          "custom.compare.test_answer.win_rate>=0.5")
    assert result.ret == 0
    result.assert_outcomes(passed=20, skipped=80)  # every offline comparison is a win: decided after one batch
    section = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())["sequential"]
    assert (section["tests_judged"], section["tests_decided"], section["gates"][0]["decided"]) == (20, 80, "pass")
