"""The pull-request workflow's steps, run here as a script on a one-family project: record a
baseline, change the candidate's prompt in the `llm_prompts` folder, compare (the delta gate
fails), revert, compare again (it passes)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from llmjury.exit_status import GATE_FAILED_EXIT

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / ".github" / "scripts" / "evals.sh"
WORKFLOW = REPO / ".github" / "workflows" / "evals.yml"
PROJECT = Path(__file__).parent / "projects" / "polite"
PROMPT = Path("prompts") / "polite" / "candidate.j2"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(PROJECT, tmp_path / "project", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "project"


def step(project: Path, mode: str, summary_page: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LLMJURY_EVALS": ".", "LLMJURY_ARGS": "-n 0 --llm-option polite.cases=12",
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
def test_the_compare_step_without_a_baseline_runs_uncompared_and_skips_delta_gates(project, tmp_path):
    result = step(project, "compare", tmp_path / "page.md")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no baseline in baseline/" in result.stderr
    assert "comparison" not in json.loads((project / "reports" / "latest" / "summary.json").read_text())


def test_the_workflow_keeps_main_as_the_baseline_and_compares_pull_requests_with_it():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as True
    assert triggers["push"]["branches"] == ["main"] and "pull_request" in triggers
    steps = workflow["jobs"]["evals"]["steps"]
    runs = {s.get("name"): (s.get("if"), s.get("run", ""), s.get("with", {})) for s in steps}
    assert runs["Eval suite, kept as the baseline"][:2] == ("github.event_name == 'push'",
                                                         ".github/scripts/evals.sh baseline")
    assert runs["Eval suite, compared with main"][:2] == ("github.event_name == 'pull_request'",
                                                       ".github/scripts/evals.sh compare")
    download = runs["Download main's baseline (verdicts and cache)"]
    upload = runs["Upload the baseline"]
    assert download[0] == "github.event_name == 'pull_request'"
    assert "--name llmjury-baseline --dir baseline" in download[1]
    assert upload[2] == {"name": "llmjury-baseline", "path": "baseline/", "retention-days": 90}
    for gate in workflow["env"]["LLMJURY_GATES"].split():
        assert ".delta" in gate
