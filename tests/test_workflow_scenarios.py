"""The workflow `llmjury workflow` writes, its steps run in order as GitHub runs them on a pull request,
with a fake `gh` on PATH standing in for GitHub (its runs, their artifacts, `gh run download` from a
local folder): each scenario a team meets gives its documented outcome (docs/how-to/gate-pull-requests.md,
"What a pull request's step does")."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_workflow import CHATBOT, Chatbot

from llmjury.cli import main as llmjury
from llmjury.results.exit_status import GATE_FAILED_EXIT, GATE_NOT_COMPARED_EXIT

pytestmark = pytest.mark.e2e  # bash, the workflow's scripts and a pytest run per scenario

GATE = "custom.check.test_answer.pass_rate.delta.high>=0"
MAIN_SHA = "1" * 40

FAKE_GH = '''#!{python}
"""A fake GitHub CLI: the runs and artifacts of $FAKE_GH_STATE; `run download` copies a local folder."""
import json, os, shutil, sys
state = json.load(open(os.environ["FAKE_GH_STATE"]))
args = sys.argv[1:]
with open(os.environ["FAKE_GH_STATE"] + ".log", "a") as log:
    log.write(" ".join(args) + "\\n")
if args[:2] == ["run", "list"]:
    print(json.dumps(state["runs"]))
elif args[0] == "api" and args[1].endswith("/artifacts"):
    run_id = args[1].split("/")[-2]
    print(json.dumps({{"artifacts": state["artifacts"].get(run_id, [])}}))
elif args[:2] == ["run", "download"]:
    run_id, name, folder = args[2], args[args.index("--name") + 1], args[args.index("--dir") + 1]
    found = [a for a in state["artifacts"].get(run_id, []) if a["name"] == name]
    if not found or run_id in state.get("fail_download", []):
        sys.exit("error downloading " + name + ": no valid artifacts found to download")
    shutil.copytree(found[0]["folder"], folder, dirs_exist_ok=True)
else:
    sys.exit("fake gh: unexpected " + " ".join(args))
'''


def run(project: Path, command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, check=False)


def make_project(root: Path) -> Path:
    """The chatbot project in a git repository on `main`, with the workflow `llmjury workflow` writes."""
    project = root / "chatbot"
    shutil.copytree(CHATBOT, project, ignore=shutil.ignore_patterns("__pycache__"))
    assert llmjury(["workflow", "--root", str(project)]) == 0
    for git in (["init", "-q", "-b", "main"], ["add", "-A"],
                ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "main"]):
        subprocess.run(["git", *git], cwd=project, check=True, capture_output=True)
    return project


def workflow_env(project: Path, bot: Chatbot, extra_args: str = "") -> dict[str, str]:
    """The job's env as the workflow declares it, with the team's own gates and system under test."""
    env = {key: str(value) for key, value in yaml.safe_load(
        (project / ".github/workflows/evals.yml").read_text())["env"].items()}
    env |= {"LLMJURY_EVALS": ".", "LLMJURY_GATES": GATE,
            "LLMJURY_ARGS": f"-n 0 --llm-role candidate=http:{bot.origin}/chat {extra_args}"}
    return env


def steps_of_a_pull_request(project: Path, env: dict[str, str], tmp: Path, head: str) -> tuple[int, str, str]:
    """Run the job's steps for a `pull_request` event in order (actions that only upload are skipped, a
    failing step stops the job); returns the compare step's status, all output and the step summary."""
    workflow = yaml.safe_load((project / ".github/workflows/evals.yml").read_text())
    job = workflow["jobs"]["evals"]
    assert "github.event_name != 'push'" in job["if"]
    values = {"github.token": "fake-token", "github.event.repository.default_branch": "main",
              "github.event.pull_request.head.sha || github.sha": head, "secrets.OPENAI_API_KEY": env.pop("KEY", "")}
    page, output = tmp / "step-summary.md", tmp / "github-output"
    base = {**os.environ, **env, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(page),
            "GITHUB_OUTPUT": str(output), "GITHUB_REPOSITORY": "team/chatbot"}
    base.pop("OPENAI_BASE_URL", None)
    base.pop("OPENAI_API_KEY", None)
    printed, status = "", 0
    for step in job["steps"]:
        condition = step.get("if", "")
        if "run" not in step or condition.startswith("github.event_name == 'push'"):
            continue
        assert condition in ("", "github.event_name != 'push'", "always()"), condition
        step_env = {key: re.sub(r"\$\{\{\s*(.+?)\s*\}\}", lambda m: values[m[1]], str(value))
                    for key, value in step.get("env", {}).items()}
        done = run(project, ["bash", "-e", "-c", step["run"]], {**base, **step_env})
        printed += done.stdout + done.stderr
        if step.get("name", "").startswith("Eval suite"):
            status = done.returncode
        elif done.returncode != 0:
            raise AssertionError(f"step {step.get('name')!r} failed: {done.stdout}{done.stderr}")
    return status, printed, page.read_text() if page.exists() else ""


@pytest.fixture(scope="module")
def main_baseline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Chatbot]]:
    """Main's push run: `evals.sh baseline` with the chatbot wrong on one item; its baseline/ folder is
    the artifact later runs download."""
    root = tmp_path_factory.mktemp("main")
    project = make_project(root)
    with Chatbot() as bot:
        bot.wrong = {3}
        path = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
        env = {**os.environ, **workflow_env(project, bot), "PATH": path}
        made = run(project, ["bash", ".github/scripts/evals.sh", "baseline"], env)
        assert made.returncode == 0, made.stdout + made.stderr
        shutil.copytree(project / "baseline", root / "artifact")
        yield root / "artifact", bot


@pytest.fixture
def github(tmp_path: Path) -> Iterator[Any]:
    """A fake `gh` first on PATH, serving the state the test sets."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(FAKE_GH.format(python=sys.executable))
    (bin_dir / "gh").chmod(0o755)
    state_file = tmp_path / "gh-state.json"

    def serve(runs: list[dict[str, Any]], artifacts: dict[int, list[dict[str, Any]]],
              fail_download: tuple[int, ...] = ()) -> None:
        state_file.write_text(json.dumps({"runs": runs, "artifacts": {str(k): v for k, v in artifacts.items()},
                                          "fail_download": [str(i) for i in fail_download]}))

    with pytest.MonkeyPatch.context() as patch:  # then the python running these tests, as setup-python's
        patch.setenv("PATH", os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ["PATH"]]))
        patch.setenv("FAKE_GH_STATE", str(state_file))
        yield serve


def main_run(run_id: int, sha: str, conclusion: str = "success",
             created: str = "2026-11-20T10:00:00Z") -> dict[str, Any]:
    return {"databaseId": run_id, "headSha": sha, "status": "completed", "conclusion": conclusion,
            "createdAt": created, "event": "push", "url": f"https://github.com/team/chatbot/actions/runs/{run_id}"}


def artifact(run_id: int, folder: Path, expired: bool = False) -> dict[str, Any]:
    return {"name": f"llmjury-baseline-{run_id}-1", "expired": expired, "created_at": "2026-11-20T10:05:00Z",
            "folder": str(folder)}


def head_of(project: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=project, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_the_first_pull_request_passes_with_a_notice_and_says_it_was_not_compared(tmp_path, main_baseline, github):
    _, bot = main_baseline
    project = make_project(tmp_path)
    github([], {})
    status, out, page = steps_of_a_pull_request(project, workflow_env(project, bot), tmp_path, head_of(project))
    assert status == 0, out
    assert "::notice title=llmjury::not compared with a baseline: main has never kept a baseline" in out
    assert "**Not compared** (first)" in page
    summary_md = (project / "reports/latest/summary.md").read_text()
    assert "No gate was set" not in summary_md
    assert f"| **NOT COMPARED** | `{GATE}` |" in summary_md


def test_an_expired_baseline_fails_saying_so(tmp_path, main_baseline, github):
    artifact_dir, bot = main_baseline
    project = make_project(tmp_path)
    github([main_run(7, head_of(project))], {7: [artifact(7, artifact_dir, expired=True)]})
    status, out, page = steps_of_a_pull_request(project, workflow_env(project, bot), tmp_path, head_of(project))
    assert status == GATE_NOT_COMPARED_EXIT, out
    assert "::error title=llmjury::not compared with a baseline: every baseline main kept has expired" in out
    assert "**Not compared** (expired)" in page


def test_a_cancelled_main_run_is_skipped_for_the_merge_bases_run_and_the_summary_names_it(tmp_path, main_baseline,
                                                                                          github):
    artifact_dir, bot = main_baseline
    project = make_project(tmp_path)
    base = head_of(project)
    github([main_run(9, MAIN_SHA, "cancelled", "2026-11-21T10:00:00Z"),  # the newest: cancelled, kept nothing
            main_run(8, "2" * 40, created="2026-11-20T12:00:00Z"), main_run(7, base, created="2026-11-19T10:00:00Z")],
           {8: [artifact(8, artifact_dir)], 7: [artifact(7, artifact_dir)]})
    status, out, page = steps_of_a_pull_request(project, workflow_env(project, bot), tmp_path, base)
    assert status == 0, out
    assert f"**Baseline**: commit {base[:12]} (the merge base), run 7" in page
    lookup = json.loads((project / "baseline/lookup.json").read_text())
    assert lookup["run_id"] == 7 and lookup["at_merge_base"] and lookup["llmjury_version"]
    comparison = json.loads((project / "reports/latest/summary.json").read_text())["comparison"]
    assert comparison["compared"] and comparison["origin"].startswith(f"commit {base[:12]}")


def test_a_fork_pull_request_without_the_judges_key_says_so_and_fails(tmp_path, main_baseline, github):
    artifact_dir, bot = main_baseline
    project = make_project(tmp_path)
    github([main_run(7, head_of(project))], {7: [artifact(7, artifact_dir)]})
    env = workflow_env(project, bot, "--llm-judge openai:gpt-4o-mini")
    status, out, page = steps_of_a_pull_request(project, env, tmp_path, head_of(project))
    assert status == GATE_NOT_COMPARED_EXIT, out
    assert "::error title=llmjury::not compared with a baseline: no key for openai: OPENAI_API_KEY is not set " \
           "(a fork pull request gets no secrets)" in out
    assert "judges differ" not in out and "**Not compared** (no_key)" in page


@pytest.mark.parametrize(("wrong", "expected"), [({3}, 0), ({3, 5, 7, 9, 11}, GATE_FAILED_EXIT)],
                         ids=["unchanged", "regression"])
def test_an_unchanged_pull_request_passes_and_a_regression_fails(tmp_path, main_baseline, github, wrong, expected):
    artifact_dir, bot = main_baseline
    project = make_project(tmp_path)
    github([main_run(7, head_of(project))], {7: [artifact(7, artifact_dir)]})
    bot.wrong = wrong
    try:
        status, out, page = steps_of_a_pull_request(project, workflow_env(project, bot), tmp_path, head_of(project))
    finally:
        bot.wrong = {3}
    assert status == expected, out
    if expected:
        assert "::error title=llmjury::a gate failed" in out and f"| **FAIL** | `{GATE}` |" in page
    else:
        assert f"| **PASS** | `{GATE}` |" in page


def test_a_pull_request_that_drops_cases_is_never_passed(tmp_path, main_baseline, github):
    artifact_dir, bot = main_baseline
    project = make_project(tmp_path)
    evals = project / "evals_chatbot.py"
    evals.write_text(evals.read_text().replace("for i in range(20)", "for i in range(12)"))  # drops 8 of 20
    github([main_run(7, head_of(project))], {7: [artifact(7, artifact_dir)]})
    status, out, page = steps_of_a_pull_request(project, workflow_env(project, bot), tmp_path, head_of(project))
    assert status == GATE_NOT_COMPARED_EXIT, out
    assert "this run dropped 8 and changed 0 of the baseline's 20 cases (40%, more than 10%)" in out
    assert f"| **INCONCLUSIVE** | `{GATE}` |" in page and "**Not compared** (cases_changed)" in page
