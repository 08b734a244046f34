"""`llmjury workflow` writes the workflow this project runs on itself, and refuses to overwrite."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmjury.cli import main
from llmjury.scaffold import WORKFLOW_FILES

REPO = Path(__file__).resolve().parents[1]


def test_the_projects_own_steps_are_the_shipped_file_itself():
    steps = REPO / WORKFLOW_FILES["evals.sh"]
    assert steps.is_symlink() and steps.resolve() == (REPO / "src" / "llmjury" / "data" / "workflow" / "evals.sh")


def test_the_shipped_workflow_is_the_one_this_project_runs(tmp_path):
    assert main(["workflow", "--root", str(tmp_path)]) == 0
    for path in WORKFLOW_FILES.values():
        assert (tmp_path / path).read_text() == (REPO / path).read_text(), f"{path} drifted from the shipped copy"


def test_an_existing_workflow_is_kept_unless_forced(tmp_path, capsys):
    target = tmp_path / WORKFLOW_FILES["evals.yml"]
    target.parent.mkdir(parents=True)
    target.write_text("mine")
    with pytest.raises(SystemExit, match=r"llmjury workflow: .*evals.yml exists: pass --force"):
        main(["workflow", "--root", str(tmp_path)])
    assert target.read_text() == "mine"
    assert main(["workflow", "--root", str(tmp_path), "--force"]) == 0
    assert target.read_text() != "mine"
