"""`llmjury workflow` writes the workflow this project runs on itself, and refuses to overwrite."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from llmjury.cli import main
from llmjury.scaffold import WORKFLOW_FILES

REPO = Path(__file__).resolve().parents[1]


def test_the_projects_own_steps_are_the_shipped_file_itself():
    steps = REPO / WORKFLOW_FILES["evals.sh"]
    assert steps.is_symlink() and steps.resolve() == (REPO / "src" / "llmjury" / "data" / "workflow" / "evals.sh")


#: This project's own delta gates, as its workflow names them.
OWN_GATES = ["socratic.win_rate.delta.high>=0", "qa_quality.remove_rate.delta.low<=0",
             "arena.swap_consistency.delta.high>=0"]


def test_the_shipped_workflow_with_this_projects_gates_is_the_one_this_project_runs(tmp_path):
    assert main(["workflow", "--root", str(tmp_path), *(f"--gate={gate}" for gate in OWN_GATES)]) == 0
    for path in WORKFLOW_FILES.values():
        assert (tmp_path / path).read_text() == (REPO / path).read_text(), f"{path} drifted from the shipped copy"


def test_another_project_gets_no_gate_of_families_it_does_not_have(tmp_path):
    """Before: the workflow carried llmjury's own socratic/qa_quality/arena gates, and a project's first
    pull request failed at start-up on families it does not have."""
    assert main(["workflow", "--root", str(tmp_path)]) == 0
    env = yaml.safe_load((tmp_path / WORKFLOW_FILES["evals.yml"]).read_text())["env"]
    assert env["LLMJURY_GATES"] == ""
    gate = "custom.check.t.pass_rate.delta.high>=0"
    assert main(["workflow", "--root", str(tmp_path), "--force", "--gate", gate]) == 0
    env = yaml.safe_load((tmp_path / WORKFLOW_FILES["evals.yml"]).read_text())["env"]
    assert env["LLMJURY_GATES"] == "custom.check.t.pass_rate.delta.high>=0\n"


def test_a_gate_that_cannot_be_read_stops_the_command_and_writes_nothing(tmp_path):
    with pytest.raises(SystemExit, match=r"llmjury workflow: .*"):
        main(["workflow", "--root", str(tmp_path), "--gate", "custom.x.rate=>0.5"])
    assert not (tmp_path / ".github").exists()


def test_an_existing_workflow_is_kept_unless_forced(tmp_path, capsys):
    target = tmp_path / WORKFLOW_FILES["evals.yml"]
    target.parent.mkdir(parents=True)
    target.write_text("mine")
    with pytest.raises(SystemExit, match=r"llmjury workflow: .*evals.yml exists: pass --force"):
        main(["workflow", "--root", str(tmp_path)])
    assert target.read_text() == "mine"
    assert main(["workflow", "--root", str(tmp_path), "--force"]) == 0
    assert target.read_text() != "mine"
