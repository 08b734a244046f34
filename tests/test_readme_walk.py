"""The docs' walk "From an empty repository to a gated pull request" (docs/how-to/gate-pull-requests.md),
read from the page and run as written: the workflow written by `llmjury workflow`, the files, the gate,
then main's baseline and a pull request that breaks answers (exit 10), in a folder outside this
repository."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from doc_examples import blocks as example_blocks

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.e2e  # bash, `llmjury workflow` and two pytest runs of their own


def blocks(language: str) -> list[str]:
    return example_blocks("pr-walk", language)


def test_the_readme_walk_gates_a_pull_request_that_breaks_answers(tmp_path):
    repo = tmp_path / "mybot"
    repo.mkdir()
    assert not repo.resolve().is_relative_to(REPO)
    setup, steps = blocks("bash")
    assert "llmjury workflow" in setup
    llmjury = shutil.which("llmjury")
    command = [llmjury] if llmjury else [sys.executable, "-m", "llmjury.cli"]
    subprocess.run([*command, "workflow"], cwd=repo, check=True, capture_output=True)
    assert os.access(repo / ".github" / "scripts" / "evals.sh", os.X_OK)
    for block in blocks("python") + blocks("ini"):
        name, _, body = block.partition("\n")
        path = repo / name.removeprefix("# ").strip()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    gates = yaml.safe_load(blocks("yaml")[0])["env"]["LLMJURY_GATES"]
    assert gates.strip() in steps  # the local steps gate as the workflow does
    env = {**os.environ, "LLMJURY_ARGS": "-n 2"}
    ran = subprocess.run(["bash", "-c", steps], cwd=repo, env=env, capture_output=True, text=True, check=False)
    out = ran.stdout + ran.stderr
    assert "baseline kept in baseline/" in out, out
    assert "exit 10" in out, out
    assert re.search(r"FAIL\s+custom\.check\.test_answer\.pass_rate\.delta\.high>=0", out), out
    # Unchanged again, the same gate passes.
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / "bot.py").write_text(blocks("python")[0].partition("\n")[2])
    again = subprocess.run(["bash", ".github/scripts/evals.sh", "compare"], cwd=repo, capture_output=True, text=True,
                           env={**env, "LLMJURY_GATES": gates}, check=False)
    assert again.returncode == 0, again.stdout + again.stderr
