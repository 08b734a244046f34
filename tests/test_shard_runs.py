"""Shards run by pytest and merged: the merged report holds the whole run's figures and gates, a bad
`--llm-shard` stops the run at start-up, and the offline suite's shards at `-n 2` merge into the
whole run's report (e2e)."""

from __future__ import annotations

import json
import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from llmjury.cli import main
from llmjury.results.shard_manifest import MANIFEST
from llmjury.runfiles import VERDICTS

ROOT = Path(__file__).parents[1]
PROJECT = ROOT / "tests" / "projects" / "polite"
#: The CI's check that two summaries hold the same figures (.ci/run runs it on the offline suite).
SAME_FIGURES: Any = runpy.run_path(str(ROOT / ".ci" / "same_figures.py"))
GATE = "polite.polite_rate>=0.5"

#: Tests without a case: each goes to a shard by its node id.
PLAIN = """
import pytest


@pytest.mark.parametrize("n", range(10))
def test_plain(n):
    assert n >= 0
"""


@pytest.fixture
def polite(pytester: pytest.Pytester) -> pytest.Pytester:
    """The polite project (30 cases, one test each) with ten plain tests beside it."""
    for path in PROJECT.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            target = pytester.path / path.relative_to(PROJECT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    pytester.makepyfile(evals_plain=PLAIN)
    return pytester


def run_folder(reports: Path) -> Path:
    return reports / json.loads((reports / "latest" / "summary.json").read_text())["run"]["id"]


@pytest.mark.parametrize("value", ["0/3", "4/3", "a/b", "1/0"])
def test_a_bad_shard_stops_the_run_at_start_up_naming_the_option(polite, value):
    result = polite.runpytest_inprocess("--llm-shard", value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --llm-shard '{value}': *"])


@pytest.mark.parametrize(("selection", "tests", "verdicts"), [
    ((), 40, 30),
    (("--llm-sample", "12"), 22, 12),  # the sample is drawn before the shard is cut: the same in every shard
    (("-k", "q1 or plain"), 20, 10),  # q10-q19 and the ten plain tests
])
def test_three_shards_merged_hold_the_whole_runs_figures_and_gates(polite, capsys, selection, tests, verdicts):
    whole = polite.runpytest_inprocess("-n", "0", *selection, "--llm-reports", "whole", "--llm-gate", GATE)
    whole.assert_outcomes(passed=tests)
    folders = []
    for index in (1, 2, 3):
        shard = polite.runpytest_inprocess("-n", "0", *selection, "--llm-reports", f"shard{index}",
                                           "--llm-shard", f"{index}/3")
        manifest = json.loads((run_folder(polite.path / f"shard{index}") / MANIFEST).read_text())
        shard.assert_outcomes(passed=len(manifest["node_ids"]))
        shard.stdout.fnmatch_lines([f"llmjury shard {index}/3: {len(manifest['node_ids'])} of {tests} tests; merge "
                                    f"the shards' run folders with `llmjury merge` (shard{index}/*/shard.json)",
                                    "*deselected*"])
        folders.append(polite.path / f"shard{index}")
    manifests = [json.loads((run_folder(folder) / MANIFEST).read_text()) for folder in folders]
    assert sorted(node for m in manifests for node in m["node_ids"]) == sorted(
        {node for m in manifests for node in m["node_ids"]})  # no test twice
    assert sum(len(m["node_ids"]) for m in manifests) == tests and {m["tests"] for m in manifests} == {tests}
    assert all(0 < len(m["node_ids"]) < tests for m in manifests) and len({m["fingerprint"] for m in manifests}) == 1
    capsys.readouterr()

    code = main(["merge", *map(str, reversed(folders)), "--out", "merged", "--run-id", "all", "--gate", GATE])
    assert code == whole.ret  # the gates' status, as the whole run's
    assert f"merged 3 shards: {verdicts} verdicts" in capsys.readouterr().out
    whole_summary = json.loads((run_folder(polite.path / "whole") / "summary.json").read_text())
    merged = json.loads((polite.path / "merged" / "all" / "summary.json").read_text())
    assert SAME_FIGURES["differences"](SAME_FIGURES["figures"](whole_summary), SAME_FIGURES["figures"](merged)) == []
    assert merged["gates"][0]["gate"] == GATE and merged["run"]["shards"] == 3
    assert merged["usage"]["providers"] == whole_summary["usage"]["providers"]  # each call made once, either way


def test_shards_of_different_selections_are_refused_naming_the_shard(polite, capsys):
    polite.runpytest_inprocess("-n", "0", "--llm-reports", "one", "--llm-shard", "1/2")
    polite.runpytest_inprocess("-n", "0", "-k", "not q05", "--llm-reports", "two", "--llm-shard", "2/2")
    capsys.readouterr()
    assert main(["merge", "one", "two", "--out", "merged"]) == 4
    one, two = (run_folder(Path(name)) for name in ("one", "two"))
    assert capsys.readouterr().err.startswith(f"llmjury merge: shard 2/2 ({two}): collected other tests than "
                                              f"shard 1/2 ({one}) (39 against 40, or different ones)")


def test_the_figures_check_names_each_difference():
    whole = {"run": {"families": ["f"], "offline": True}, "usage": {}, "f": {"rate": {"value": 0.5, "n": 4}},
             "gates": []}
    merged = {**whole, "usage": {"calls": 9}, "f": {"rate": {"value": 0.75, "n": 4}, "evaluation_completed": "now"}}
    assert SAME_FIGURES["differences"](SAME_FIGURES["figures"](whole), SAME_FIGURES["figures"](merged)) == [
        "f.rate.value: 0.5 (whole) != 0.75 (merged)"]


@pytest.mark.e2e
def test_the_offline_suites_shards_at_n_2_merge_into_the_whole_run_at_n_0(tmp_path):
    """A slice of the shipped offline suite (every family but the large arena), whole at `-n 0` and as
    three shards of two xdist workers each: the merged summary holds the same figures and gates."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    gates = ["--llm-gate", "socratic.unscored_rate<=0.02", "--llm-gate", "geval.unscored_rate<=0.05"]
    pick = ["evals/test_socratic.py", "evals/test_geval.py", "evals/test_qa_quality.py", "-p", "no:cacheprovider",
            "--llm-cache-path", str(tmp_path / "cache.sqlite")]

    def pytest_run(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "pytest", *pick, "-q", *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return done.stdout

    pytest_run("-n", "0", "--llm-reports", str(tmp_path / "whole"), *gates)
    for index in (1, 2, 3):
        out = pytest_run("-n", "2", "--llm-reports", str(tmp_path / f"shard{index}"), "--llm-shard", f"{index}/3")
        assert f"llmjury shard {index}/3: " in out  # said by xdist's controller, which collects nothing itself
    shards = [str(tmp_path / f"shard{index}") for index in (1, 2, 3)]
    merged = subprocess.run([sys.executable, "-m", "llmjury.cli", "merge", *shards,
                             "--out", str(tmp_path / "merged"), "--run-id", "all",
                             "--gate", "socratic.unscored_rate<=0.02", "--gate", "geval.unscored_rate<=0.05"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    same = subprocess.run([sys.executable, str(ROOT / ".ci" / "same_figures.py"),
                           str(run_folder(tmp_path / "whole") / "summary.json"),
                           str(tmp_path / "merged" / "all" / "summary.json")], capture_output=True, text=True)
    assert same.returncode == 0, same.stdout
    assert "same figures: 4 families, 2 gates" in same.stdout


#: A pipeline of the user's own whose verdicts name a family no project registers (as `bench/growth.py`'s).
OWN_PIPELINE = """
import llmjury
from llmjury import Case, JudgeConfig, Outcome, Verdict


async def judge(case, jury):
    return Outcome([Verdict(case_id=case.id, family="mine", judge=JudgeConfig(provider="mine:rule"),
                            valid=case.id != "c3")])


@llmjury.pipeline(judge)
@llmjury.parametrize([Case(id=f"c{i}", family="mine") for i in range(8)])
def test_mine(outcome):
    assert outcome.verdicts
"""


def test_shards_of_a_family_no_project_defines_merge_as_their_runs_reported_it(pytester, capsys):
    """The runs judged `mine` with the core's counts only; so does the merge, from any folder. A
    family the shards' runs defined stays refused where the merge does not know it."""
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider -p no:deepeval -p no:asyncio\n")
    pytester.makepyfile(test_mine=OWN_PIPELINE)
    gate = "mine.unscored_rate<=0.2"
    whole_run = pytester.runpytest_inprocess("-n", "0", "--llm-reports", "whole", "--llm-gate", gate)
    whole_run.assert_outcomes(passed=8)
    for index in (1, 2):
        pytester.runpytest_inprocess("-n", "0", "--llm-reports", f"shard{index}", "--llm-shard", f"{index}/2")
    capsys.readouterr()
    assert main(["merge", "shard1", "shard2", "--out", "merged", "--run-id", "all", "--gate", gate]) == whole_run.ret
    assert "merged 2 shards: 8 verdicts" in capsys.readouterr().out
    whole = json.loads((run_folder(pytester.path / "whole") / "summary.json").read_text())
    merged = json.loads((pytester.path / "merged" / "all" / "summary.json").read_text())
    assert SAME_FIGURES["differences"](SAME_FIGURES["figures"](whole), SAME_FIGURES["figures"](merged)) == []
    assert merged["mine"]["unscored"] == 1 and merged["gates"][0]["gate"] == gate
    assert main(["merge", "shard1", "shard2", "--out", "merged", "--gate", "mnie.unscored_rate<=0.2"]) == 4
    assert "unknown family 'mnie' (did you mean 'mine'?)" in capsys.readouterr().err


def test_merge_refuses_a_family_the_shards_runs_defined_but_this_folder_does_not(polite, capsys, monkeypatch):
    for index in (1, 2):
        polite.runpytest_inprocess("-n", "0", "--llm-reports", f"shard{index}", "--llm-shard", f"{index}/2")
    capsys.readouterr()
    (polite.path / "elsewhere").mkdir()
    (polite.path / "elsewhere" / "pytest.ini").write_text("[pytest]\n")
    monkeypatch.chdir(polite.path / "elsewhere")
    assert main(["merge", "../shard1", "../shard2", "--out", "merged"]) == 4
    assert "unknown family 'polite'" in capsys.readouterr().err


def test_report_reads_the_projects_own_family_from_its_ini_and_refuses_it_elsewhere(polite, capsys, monkeypatch):
    """Before: `llmjury report` knew only installed families, so a project's own family kept its
    counts and silently lost its figures (a gate on them failed as `no metric`)."""
    polite.runpytest_inprocess("-n", "0", "--llm-reports", "whole")
    whole = json.loads((run_folder(polite.path / "whole") / "summary.json").read_text())
    capsys.readouterr()
    monkeypatch.chdir(polite.path)
    assert main(["report", "whole", "--out", "again", "--run-id", "r", "--gate", GATE]) == 0
    again = json.loads((polite.path / "again" / "r" / "summary.json").read_text())
    assert again["polite"]["polite_rate"] == whole["polite"]["polite_rate"] and again["gates"][0]["status"] == "pass"
    # the run's usage kept (it was dropped), once for a run given as its folder and its verdicts file
    assert main(["report", "whole", str(run_folder(polite.path / "whole") / VERDICTS), "--out", "again",
                 "--run-id", "twice"]) == 0
    twice = json.loads((polite.path / "again" / "twice" / "summary.json").read_text())
    assert again["usage"] == twice["usage"] == whole["usage"] and whole["usage"]["providers"]
    assert again["run"]["llmjury_version"] == whole["run"]["llmjury_version"] is not None
    (polite.path / "elsewhere").mkdir()
    (polite.path / "elsewhere" / "pytest.ini").write_text("[pytest]\n")
    monkeypatch.chdir(polite.path / "elsewhere")
    assert main(["report", "../whole", "--out", "again"]) == 4
    assert "llmjury report: unknown family 'polite'" in capsys.readouterr().err
    assert sorted(p.name for p in (polite.path / "elsewhere").iterdir()) == ["pytest.ini"]  # no report written
