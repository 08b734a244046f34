"""The pull-request workflow's steps, run here as a script on a one-family project: record a
baseline, change the candidate's prompt in the `llm_prompts` folder, compare (the delta gate
fails), revert, compare again (it passes)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from llmjury.results.exit_status import GATE_FAILED_EXIT, GATE_NOT_COMPARED_EXIT
from llmjury.testing import FakeServer

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / ".github" / "scripts" / "evals.sh"
WORKFLOW = REPO / ".github" / "workflows" / "evals.yml"
PROJECT = Path(__file__).parent / "projects" / "polite"
PROMPT = Path("prompts") / "polite" / "candidate.j2"
#: The python running these tests first on PATH, as setup-python's is on a runner: the scripts' `python` has llmjury.
PATH = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(PROJECT, tmp_path / "project", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "project"


def step(project: Path, mode: str, summary_page: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": PATH, "LLMJURY_EVALS": ".", "LLMJURY_ARGS": "-n 0 --llm-option polite.cases=12",
           "LLMJURY_GATES": "polite.polite_rate.delta>=-0.02\n", "GITHUB_STEP_SUMMARY": str(summary_page)}
    return subprocess.run(["bash", str(SCRIPT), mode], cwd=project, env=env, capture_output=True, text=True,
                          check=False)


@pytest.mark.e2e  # the workflow's bash script, three pytest runs of its own
def test_the_workflow_steps_fail_a_worse_prompt_and_pass_it_reverted(project, tmp_path):
    page = tmp_path / "step-summary.md"
    recorded = step(project, "baseline", page)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    kept = project / "baseline" / "run"
    assert (kept / "verdicts.jsonl.gz").is_file() and (kept / "summary.json").is_file()

    original = (project / PROMPT).read_text()
    (project / PROMPT).write_text("You are a helpful assistant.\nBe curt.\n")
    worse = step(project, "compare", page)
    assert worse.returncode == GATE_FAILED_EXIT, worse.stdout + worse.stderr
    assert "FAIL" in worse.stdout and "polite.polite_rate.delta>=-0.02" in worse.stdout
    comparison = json.loads((project / "reports" / "latest" / "summary.json").read_text())["comparison"]
    assert comparison["baseline"].endswith("baseline/run")
    assert comparison["families"]["polite"]["polite_rate"]["delta"]["value"] == -1.0

    (project / PROMPT).write_text(original)
    reverted = step(project, "compare", page)
    assert reverted.returncode == 0, reverted.stdout + reverted.stderr
    row = json.loads((project / "reports" / "latest" / "summary.json").read_text())["comparison"]
    assert row["families"]["polite"]["polite_rate"]["delta"]["value"] == 0
    summary_md = (project / "reports" / "latest" / "summary.md").read_text()
    assert page.read_text().endswith(summary_md)  # every step appends its summary.md to the job's page
    assert page.read_text().count("# llmjury run `") == 3


@pytest.mark.e2e  # the workflow's bash script and its pytest run
def test_the_compare_step_without_a_baseline_is_not_compared_and_says_so(project, tmp_path):
    result = step(project, "compare", tmp_path / "page.md")
    assert result.returncode == 0, result.stdout + result.stderr  # nothing was looked for: nothing to miss
    assert "llmjury notice: not compared with a baseline: no baseline in baseline/ (none was fetched)" in result.stderr
    summary = json.loads((project / "reports" / "latest" / "summary.json").read_text())
    assert summary["comparison"]["not_compared"] == "absent"
    assert [g["status"] for g in summary["gates"]] == ["not compared"]
    with pytest.MonkeyPatch.context() as env:
        env.setenv("LLMJURY_NOT_COMPARED", "fail")
        strict = step(project, "compare", tmp_path / "page.md")
    assert strict.returncode == GATE_NOT_COMPARED_EXIT


def test_the_workflow_keeps_the_default_branch_as_the_baseline_and_compares_pull_requests_with_it():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as True
    assert {"push", "pull_request", "merge_group"} <= set(triggers) and triggers["push"] is None  # no branch named
    job = workflow["jobs"]["evals"]
    assert job["if"] == "github.event_name != 'push' || github.ref_name == github.event.repository.default_branch"
    steps = job["steps"]
    runs = {s.get("name"): (s.get("if"), s.get("run", ""), s.get("with", {})) for s in steps}
    assert runs["Eval suite, kept as the baseline"][:2] == ("github.event_name == 'push'",
                                                         ".github/scripts/evals.sh baseline")
    assert runs["Eval suite, compared with the baseline"][:2] == ("github.event_name != 'push'",
                                                               ".github/scripts/evals.sh compare")
    find = runs["Find the baseline (the merge base's run, else the newest that kept one)"]
    upload = runs["Upload the baseline"]
    assert find[0] == "github.event_name != 'push'" and "find_baseline.py --dir baseline" in find[1]
    assert upload[0] == "github.event_name == 'push' && !cancelled()"  # kept when a gate failed on main
    assert upload[2] == {"name": "llmjury-baseline-${{ github.run_id }}-${{ github.run_attempt }}",
                         "path": "baseline/", "retention-days": 90, "if-no-files-found": "ignore"}
    assert runs["Upload the report"][2]["name"].endswith("-${{ github.run_attempt }}")
    names = [s.get("name") for s in steps]
    assert names.index("Find the baseline (the merge base's run, else the newest that kept one)") \
        < names.index("Install (the project when it is a package; llmjury at the baseline's version)")
    python = next(s for s in steps if s.get("uses", "").startswith("actions/setup-python@"))
    assert "hashFiles('**/requirements.txt', '**/pyproject.toml')" in python["with"]["cache"]
    assert workflow["concurrency"]["cancel-in-progress"] == "${{ github.event_name != 'push' }}"
    assert workflow["env"]["LLMJURY_NOT_COMPARED"] == "auto"
    for gate in workflow["env"]["LLMJURY_GATES"].split():
        assert ".delta" in gate


CHATBOT = Path(__file__).parent / "projects" / "chatbot"


class Chatbot(FakeServer):
    """A team's system under test behind HTTP: it answers `What is i + i?`, wrongly for the `wrong` i.
    What changes between main and a pull request is its behaviour, never the request it is sent."""

    def __init__(self) -> None:
        super().__init__()
        self.wrong: set[int] = set()
        self.asked = 0

    def route(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        self.asked += 1
        i = int(body["messages"][-1]["content"].split()[2])
        return 200, {"reply": f"It is {2 * i + (i in self.wrong)}."}


def chatbot_step(project: Path, mode: str, page: Path, bot: Chatbot, gate: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": PATH, "LLMJURY_EVALS": ".", "GITHUB_STEP_SUMMARY": str(page), "LLMJURY_GATES": gate,
           "LLMJURY_ARGS": f"-n 2 --llm-role candidate=http:{bot.origin}/chat"}
    return subprocess.run(["bash", str(SCRIPT), mode], cwd=project, env=env, capture_output=True, text=True,
                          check=False)


@pytest.mark.e2e  # the workflow's bash script and three pytest runs of its own
def test_a_pull_request_that_changes_the_systems_behaviour_not_its_request_is_asked_afresh_and_fails(tmp_path):
    project = tmp_path / "chatbot"
    shutil.copytree(CHATBOT, project, ignore=shutil.ignore_patterns("__pycache__"))
    page = tmp_path / "page.md"
    gate = "custom.check.test_answer.pass_rate.delta>=-0.05"
    with Chatbot() as bot:
        bot.wrong = {3}  # main is wrong on one item: its per-item assert fails, yet its baseline is kept
        main = chatbot_step(project, "baseline", page, bot, gate)
        assert main.returncode == 0, main.stdout + main.stderr
        assert (project / "baseline" / "run" / "verdicts.jsonl.gz").is_file()
        assert "XFAIL" in main.stdout and "expected 6" in main.stdout  # the failing item is shown
        asked_on_main = bot.asked

        unchanged = chatbot_step(project, "compare", page, bot, gate)
        assert unchanged.returncode == 0, unchanged.stdout + unchanged.stderr
        assert bot.asked == 2 * asked_on_main  # the PR's system is asked, not main's answers replayed

        bot.wrong = {3, 5, 7, 9, 11, 13, 15, 17, 19}  # the PR breaks 8 more answers; its requests are the same
        worse = chatbot_step(project, "compare", page, bot, gate)
    assert worse.returncode == GATE_FAILED_EXIT, worse.stdout + worse.stderr
    summary = json.loads((project / "reports" / "latest" / "summary.json").read_text())
    row = summary["comparison"]["families"]["custom"]["check.test_answer.pass_rate"]
    assert (row["baseline"], row["current"]) == (0.95, 0.55)
    candidate = summary["usage"]["roles"]["candidate"][f"http:{bot.origin}/chat"]
    assert candidate["fresh_samples"] == 20 and candidate["replayed_samples"] == 0
    assert candidate["policy"].startswith("under test: asked afresh")
    summary_md = (project / "reports" / "latest" / "summary.md").read_text()
    assert f"| candidate | `http:{bot.origin}/chat` | 20 | 0 | under test: asked afresh" in summary_md


@pytest.mark.e2e  # the workflow's bash script and three pytest runs of its own
def test_an_inconclusive_pull_request_is_a_warning_on_a_green_step_and_a_failure_is_an_error(tmp_path):
    project = tmp_path / "chatbot"
    shutil.copytree(CHATBOT, project, ignore=shutil.ignore_patterns("__pycache__"))
    page, gate = tmp_path / "page.md", "custom.check.test_answer.pass_rate.delta>=0"
    with Chatbot() as bot:
        bot.wrong = {3}
        assert chatbot_step(project, "baseline", page, bot, gate).returncode == 0
        bot.wrong = {4}  # one item fixed, one broken: no evidence either way
        with pytest.MonkeyPatch.context() as env:
            env.setenv("GITHUB_ACTIONS", "true")
            neutral = chatbot_step(project, "compare", page, bot, gate)
            env.setenv("LLMJURY_INCONCLUSIVE", "fail")
            strict = chatbot_step(project, "compare", page, bot, gate)
            bot.wrong = set(range(10))
            failed = chatbot_step(project, "compare", page, bot, gate)
    assert neutral.returncode == 0, neutral.stdout + neutral.stderr
    assert "::warning title=llmjury::a gate is inconclusive" in neutral.stdout
    assert strict.returncode == 11
    assert failed.returncode == GATE_FAILED_EXIT and "::error title=llmjury::a gate failed" in failed.stdout


@pytest.mark.e2e  # the workflow's bash script and a pytest run of its own
def test_a_run_that_did_not_finish_is_never_kept_as_the_baseline(tmp_path):
    project = tmp_path / "chatbot"
    shutil.copytree(CHATBOT, project, ignore=shutil.ignore_patterns("__pycache__"))
    with Chatbot() as bot:
        bot.wrong = {3}
        env = {**os.environ, "PATH": PATH, "LLMJURY_EVALS": ".", "LLMJURY_ITEM_FAILURES": "fail",
               "LLMJURY_ARGS": f"-n 0 -x --llm-role candidate=http:{bot.origin}/chat"}
        stopped = subprocess.run(["bash", str(SCRIPT), "baseline"], cwd=project, env=env, capture_output=True,
                                 text=True, check=False)
    assert stopped.returncode != 0
    assert "baseline not kept: the run did not finish" in stopped.stderr
    assert not (project / "baseline").exists()
