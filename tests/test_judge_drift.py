"""The judge's drift and the bridge, on the polite project against a fake OpenAI server: a judge that
flips 10% of its decisions behind an unchanged name is caught by the canary's gate even though the
cache replays its old answers to the run itself; an unchanged judge passes; a drift gate with no
baseline stops at start-up; and `--llm-bridge` re-judges main's stored answers with a new judge so
a pull request with that judge is compared pair for pair."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from llmjury.results.exit_status import GATE_FAILED_EXIT
from llmjury.saved import load_run
from llmjury.testing.fake_openai import FakeOpenAI

PROJECT = Path(__file__).parent / "projects" / "polite"
CASES = ["-n", "0", "--llm-option", "polite.cases=30"]
DRIFT_GATE = ["--llm-gate", "judge.drift.flip_rate.low<=0.02"]


class Judge:
    """The fake judge: says whether a reply is polite; `flip` inverts its decision on every tenth question."""

    def __init__(self) -> None:
        self.flip = False
        self.candidate_calls = 0

    def __call__(self, body: dict[str, Any], index: int) -> str:
        text = body["messages"][-1]["content"]
        if body["model"] == "cand":
            self.candidate_calls += 1
            return f"About {text}: please, {self.candidate_calls}"
        polite = "please" in text.lower()
        if self.flip and int(re.search(r"question (\d+)", text)[1]) % 10 == 0:
            polite = not polite
        return "yes" if polite else "no"


@pytest.fixture
def served(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Any:
    for path in PROJECT.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            target = pytester.path / path.relative_to(PROJECT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    judge = Judge()
    with FakeOpenAI(judge) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        yield pytester, judge


def summary(pytester: pytest.Pytester, reports: str) -> dict[str, Any]:
    return json.loads((pytester.path / reports / "latest" / "summary.json").read_text())


def baseline(pytester: pytest.Pytester, *args: str) -> None:
    pytester.runpytest_inprocess(*CASES, "--llm-judge", "openai:judge", "--llm-reports", "main",
                                 *args).assert_outcomes(passed=30)


def test_ten_percent_judge_flips_on_the_canary_fail_the_drift_gate_and_say_the_judge_moved(served):
    pytester, judge = served
    baseline(pytester)
    judge.flip = True  # the provider changed the model behind the same name
    result = pytester.runpytest_inprocess(*CASES, "--llm-judge", "openai:judge", "--llm-baseline", "main/latest",
                                          "--llm-canary", "30", *DRIFT_GATE)
    assert result.ret == GATE_FAILED_EXIT
    result.stdout.fnmatch_lines(["*FAIL*judge.drift.flip_rate.low<=0.02: value 0.1 *",
                                 "*judge drift: 0.1 * of 30 canary decisions flipped since the baseline; "
                                 "the judge moved*"])
    drift = summary(pytester, "reports")["judge"]["drift"]
    assert (drift["asked"], drift["answered"], drift["moved"]) == (30, 30, True)
    assert sorted(f["baseline"] + ">" + f["now"] for f in drift["flipped"]) == ["yes>no"] * 3
    # the run's own verdicts replayed the old answers: without the canary nothing would show
    assert summary(pytester, "reports")["comparison"]["families"]["polite"]["polite_rate"]["delta"]["value"] == 0


def test_an_unchanged_judge_passes_the_drift_gate(served):
    pytester, _ = served
    baseline(pytester)
    result = pytester.runpytest_inprocess(*CASES, "--llm-judge", "openai:judge", "--llm-baseline", "main/latest",
                                          *DRIFT_GATE)
    assert result.ret == 0
    drift = summary(pytester, "reports")["judge"]["drift"]
    assert (drift["canary"], drift["asked"], drift["flip_rate"]["value"], drift["moved"]) == (20, 20, 0, False)


def test_a_drift_gate_without_a_baseline_or_canary_stops_at_start_up(served):
    pytester, _ = served
    result = pytester.runpytest_inprocess(*CASES, *DRIFT_GATE)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*gate 'judge.drift.flip_rate.low<=0.02'*canary*no --llm-baseline is given*"])
    result = pytester.runpytest_inprocess(*CASES, "--llm-canary", "-1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--llm-canary -1: must be at least 0*"])


def test_the_bridge_rejudges_mains_stored_answers_so_a_new_judge_is_compared_pair_for_pair(served):
    """The bridge runs on main's code before the pull request's run: the candidate is not asked, the
    new judge judges main's stored answers, and the pull request's run is compared with the bridge."""
    pytester, judge = served
    candidate = ["--llm-role", "candidate=openai:cand"]
    baseline(pytester, *candidate)
    main_calls = judge.candidate_calls
    bridge = pytester.runpytest_inprocess(*CASES, *candidate, "--llm-judge", "openai:new-judge", "--llm-bridge",
                                          "--llm-reports", "bridge")
    bridge.assert_outcomes(passed=30)
    assert judge.candidate_calls == main_calls  # the system under test was not asked again

    def answers(folder: str) -> dict[str, str]:
        return {r["case_id"]: r["attributes"]["answer"] for r in _records(pytester, folder)}

    assert answers("bridge") == answers("main")  # main's stored answers, judged by the new judge
    assert {r["judge"]["provider"] for r in _records(pytester, "bridge")} == {"openai:new-judge"}
    for reports, against, compared in (("pr", "main/latest", False), ("pr2", "bridge/latest", True)):
        pytester.runpytest_inprocess(*CASES, *candidate, "--llm-judge", "openai:new-judge", "--llm-baseline",
                                     against, "--llm-reports", reports).assert_outcomes(passed=30)
        assert summary(pytester, reports)["comparison"]["compared"] is compared  # judges differ from main's


def _records(pytester: pytest.Pytester, folder: str) -> list[dict[str, Any]]:
    return load_run(pytester.path / folder / "latest", folder).records


def test_a_canary_that_cannot_be_asked_leaves_the_report_whole_and_says_why(tmp_path):
    from llmjury.model import RunInfo, RunSummary
    from llmjury.results.drift import drift_lines
    from llmjury.running.settings import Settings
    from llmjury.saved import SavedRun
    from llmjury.session.drift import JudgeCanary

    record = {"case_id": "q00", "family": "polite", "judge": {"provider": "openai:judge", "prompt": "polite/judge@1"}}
    canary = JudgeCanary(Settings(cache_path=tmp_path), SavedRun(tmp_path, [record], None), 20)  # a folder, no file
    summary = canary.added(RunSummary(run=RunInfo(id="now")), runner=None)  # type: ignore[arg-type]
    assert summary.run.id == "now" and "error" in summary.judge["drift"]
    assert drift_lines(summary.judge)[0].startswith("judge drift: the canary could not be asked (")


@pytest.mark.parametrize(("stored", "named"), [("core/compare.j2@993d826eca88", "core/compare.j2@993d826eca88"),
                                               ("polite/judge", "polite/judge@1")])
def test_the_canary_finds_the_baselines_requests_whether_stored_with_their_version_or_without(tmp_path, stored, named):
    """A template's requests (jury.compare, score, geval and the families') are stored as `name@version`,
    as their verdicts name them: looking them up by the bare name found none, and every drift gate
    failed with n = 0 on an unchanged judge (a user trial)."""
    from llmjury.chat import Sample
    from llmjury.judgement.canary import judge_requests
    from llmjury.running.cache import store_samples
    from llmjury.store.location import StoreLocation
    from llmjury.store.schema import ensure_schema

    location = StoreLocation("sqlite", tmp_path / "cache.sqlite")
    db = location.open()
    ensure_schema(db)
    db.begin()
    answer_b, answer_a = Sample(text="### B").model_dump_json(), Sample(text="### A").model_dump_json()
    store_samples(db, [("k1", "openai:judge", stored, "{}", answer_b, "base", 0.0),
                       ("k2", "openai:judge", "other/task@1", "{}", answer_a, "base", 0.0)])
    db.commit()
    db.close()
    records = [{"case_id": "q00", "family": "custom", "judge": {"provider": "openai:judge", "prompt": named}}]
    found = judge_requests(location, records, "base")
    assert [(r.key, r.task, r.decision) for r in found] == [("k1", stored, "### b")]
