"""Families contribute `llmjury` subcommands through the contract (`Family.commands`), so the core's
command line names no family; a project's own family (its ini's `llm_families`) may add one too."""

from __future__ import annotations

import pytest

from llmjury.cli import main

FAMILY_MODULE = '''
from llmjury.family import Command, Family, FamilyOptions, Result, Section


class Options(FamilyOptions):
    pass


class Said(Result):
    text: str


class Nothing(Section):
    pass


def arguments(parser):
    parser.add_argument("words", nargs="+")
    parser.add_argument("--code", type=int, default=0)


def run(args):
    print("said " + " ".join(args.words))
    return args.code


class Talking(Family):
    name = "talking"
    options = Options
    results = {"said": Said}
    section = Nothing

    def offline(self):
        return {}

    def aggregate(self, verdicts):
        return Nothing()

    def commands(self):
        return [Command(COMMAND, "repeat the words", arguments, run)]


FAMILY = Talking()
'''


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project whose ini registers a family adding the command named by the call (a module name of
    its own each time: the first import of a name would be reused)."""
    def make(command: str) -> None:
        module = f"talking_{command.replace('-', '_')}"
        (tmp_path / f"{module}.py").write_text(FAMILY_MODULE.replace("COMMAND", repr(command)))
        (tmp_path / "pytest.ini").write_text(f"[pytest]\nllm_families = {module}:FAMILY\n")
        monkeypatch.chdir(tmp_path)
        monkeypatch.syspath_prepend(str(tmp_path))

    return make


def test_a_projects_family_command_runs_with_its_arguments_and_exit_status(project, capsys):
    project("say")
    assert main(["say", "hello", "there", "--code", "3"]) == 3
    assert capsys.readouterr().out == "said hello there\n"
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "talking: repeat the words" in capsys.readouterr().out


def test_the_shipped_families_commands_are_listed_with_their_family(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "socratic: robust majority" in out and "qa_quality: dry run" in out


def test_a_family_command_named_like_a_core_command_stops_naming_both(project):
    project("report")
    with pytest.raises(SystemExit, match="family 'talking': its command 'report' is already a llmjury command"):
        main(["--help"])


def test_the_core_commands_work_when_the_projects_families_do_not_load(tmp_path, monkeypatch, capsys):
    (tmp_path / "pytest.ini").write_text("[pytest]\nllm_families = nowhere_to_be_found:FAMILY\n")
    monkeypatch.chdir(tmp_path)
    assert main(["workflow", "--root", str(tmp_path / "repo")]) == 0
    assert capsys.readouterr().err == ""  # a core command loads no family
    with pytest.raises(SystemExit):
        main(["--help"])
    captured = capsys.readouterr()
    assert "workflow" in captured.out
    assert "family commands unavailable" in captured.err and "nowhere_to_be_found:FAMILY" in captured.err
