"""The workflow's baseline search (.github/scripts/find_baseline.py) against a fake `gh`: the merge
base's run first, then the newest that kept a baseline, skipping cancelled runs and expired
artifacts, and `lookup.json` saying why whenever nothing was found."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from script_module import script_module

from llmjury.baseline_lookup import read_lookup

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / ".github" / "scripts" / "find_baseline.py"


def load() -> Any:
    return script_module(SCRIPT, "find_baseline")


@pytest.fixture
def github(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """`gh` answered from a dict: runs, artifacts per run id, downloads that fail; calls are logged."""
    state: dict[str, Any] = {"runs": [], "artifacts": {}, "fail": set(), "calls": []}
    finder = load()

    def gh(*args: str) -> str:
        state["calls"].append(args)
        if args[:2] == ("run", "list"):
            return json.dumps(state["runs"])
        if args[0] == "api":
            return json.dumps({"artifacts": state["artifacts"].get(int(args[1].split("/")[-2]), [])})
        if args[:2] == ("run", "download"):
            if int(args[2]) in state["fail"]:
                raise finder.GhError("gh run download: no valid artifacts found to download")
            folder = Path(args[args.index("--dir") + 1])
            (folder / "run").mkdir(parents=True, exist_ok=True)
            (folder / "run" / "summary.json").write_text(json.dumps({"run": {"llmjury_version": "0.2.0"}}))
            return ""
        raise AssertionError(args)

    monkeypatch.setattr(finder, "gh", gh)
    monkeypatch.chdir(tmp_path)
    for git in (["init", "-q", "-b", "main"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                                                "--allow-empty", "-m", "base"]):
        subprocess.run(["git", *git], check=True, capture_output=True)
    state["base"] = subprocess.run(["git", "rev-parse", "HEAD"], check=True, capture_output=True,
                                   text=True).stdout.strip()
    state["finder"] = finder
    return state


def run(run_id: int, sha: str, conclusion: str = "success", day: int = 20) -> dict[str, Any]:
    return {"databaseId": run_id, "headSha": sha, "status": "completed", "conclusion": conclusion,
            "createdAt": f"2026-11-{day:02d}T10:00:00Z", "event": "push", "url": f"https://x/runs/{run_id}"}


def artifact(run_id: int, expired: bool = False) -> dict[str, Any]:
    return {"name": f"llmjury-baseline-{run_id}-1", "expired": expired, "created_at": "2026-11-20T10:00:00Z"}


def find(github: Any, tmp_path: Path) -> dict[str, Any]:
    assert github["finder"].main(["--dir", str(tmp_path / "baseline"), "--branch", "main", "--head", "HEAD",
                                  "--repo", "o/r"]) == 0
    lookup = read_lookup(tmp_path / "baseline")
    assert lookup is not None
    return lookup.model_dump()


def test_no_run_ever_kept_a_baseline_is_the_first_pull_request(github, tmp_path):
    github["runs"] = [run(1, "a" * 40, "failure")]
    found = find(github, tmp_path)
    assert (found["found"], found["reason"]) == (False, "first")


def test_expired_artifacts_are_said_to_have_expired(github, tmp_path):
    github["runs"], github["artifacts"] = [run(1, "a" * 40)], {1: [artifact(1, expired=True)]}
    found = find(github, tmp_path)
    assert (found["found"], found["reason"]) == (False, "expired") and "expired" in found["message"]


def test_the_merge_bases_run_is_preferred_to_a_newer_one_and_cancelled_runs_are_skipped(github, tmp_path):
    base = github["base"]
    github["runs"] = [run(3, "c" * 40, "cancelled", 22), run(2, "b" * 40, day=21), run(1, base, day=19)]
    github["artifacts"] = {2: [artifact(2)], 1: [artifact(1)]}
    found = find(github, tmp_path)
    assert (found["found"], found["run_id"], found["at_merge_base"], found["llmjury_version"]) == (True, 1, True,
                                                                                                  "0.2.0")
    assert not any(call[:2] == ("api", "repos/o/r/actions/runs/3/artifacts") for call in github["calls"])


def test_without_the_merge_bases_run_the_newest_that_kept_one_is_taken_falling_back_over_failures(github, tmp_path):
    github["runs"] = [run(3, "c" * 40, day=22), run(2, "b" * 40, day=21), run(1, "a" * 40, day=19)]
    github["artifacts"], github["fail"] = {3: [], 2: [artifact(2)], 1: [artifact(1)]}, {2}
    found = find(github, tmp_path)
    assert (found["found"], found["run_id"], found["at_merge_base"]) == (True, 1, False)


def test_a_baseline_that_could_not_be_fetched_is_unavailable_not_first(github, tmp_path):
    github["runs"], github["artifacts"], github["fail"] = [run(1, "a" * 40)], {1: [artifact(1)]}, {1}
    found = find(github, tmp_path)
    assert (found["found"], found["reason"]) == (False, "unavailable") and "could not be fetched" in found["message"]


def test_the_script_runs_on_a_bare_python_without_llmjury():
    source = SCRIPT.read_text()
    assert "import llmjury" not in source and "from llmjury" not in source
    done = subprocess.run([sys.executable, "-I", "-S", str(SCRIPT), "--help"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0 and "--branch" in done.stdout
