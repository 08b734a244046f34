"""`summary.json` is `RunSummary`'s serialisation: written, read back and refused by version, with the
offline suite's figures the same as the untyped summary's were (`data/offline_summary_before.json.gz`)."""

from __future__ import annotations

import copy
import gzip
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from summaries import summary_of

from llmjury.errors import ConfigError
from llmjury.model import SUMMARY_VERSION, RunSummary, read_summary
from llmjury.results.gates import Gate

REPO = Path(__file__).resolve().parents[1]
BEFORE = Path(__file__).parent / "data" / "offline_summary_before.json.gz"
#: What differs between two runs of the same suite: when and how it ran, and what the cache served.
RUN_DEPENDENT = ("id", "started", "finished", "args", "workers", "adaptations")


def figures(summary: dict[str, Any]) -> dict[str, Any]:
    """A summary.json less its run-dependent fields (times, ids, arguments, usage) and the fields this
    change added (`version`, `status`): the aggregates two runs of the offline suite must share."""
    kept = copy.deepcopy(summary)
    for key in ("usage", "version", "status"):
        kept.pop(key, None)
    for key in RUN_DEPENDENT:
        kept["run"].pop(key, None)
    kept.get("socratic", {}).get("seed003", {}).get("summary", {}).pop("evaluation_completed", None)  # a clock
    return kept


def as_recorded(now: Any, recorded: Any) -> Any:
    """`now` cut to the keys the record has, at every depth: a figure added since is not a change, while
    a figure lost or changed still differs from the record."""
    if isinstance(now, dict) and isinstance(recorded, dict):
        return {key: as_recorded(now[key], recorded[key]) if key in recorded else now[key]
                for key in now if key in recorded}
    return now


def socratic_tree() -> dict[str, Any]:
    from llmjury.families import discover
    from llmjury.pricing import PriceTable
    from llmjury.results.aggregate import summarize

    runs = [{"ours_position": p, "decision": "a", "preferred": "ours", "juror": "offline", "error": None,
             "attempts": 1} for p in "AB"]
    records = [{"case_id": f"c{i}", "family": "socratic", "kind": "pairwise",
                "judge": {"provider": "offline:heuristic", "prompt": "socratic/judge.j2@x", "runs": 2},
                "result": {"winner": "ours", "confidence": "unanimous", "counted_runs": 2, "runs": runs,
                           "source": "simulated", "dataset": "simulated", "subject": "os", "ours_chars": 10,
                           "baseline_chars": 20},
                "valid": True, "error": None, "raw": [], "attributes": {}} for i in range(4)]
    return summarize(records, {"id": "r1"}, {"offline:heuristic": {"calls": 4.0}}, PriceTable.load(),
                     discover()).tree()


def test_a_written_summary_reads_back_as_the_same_model(tmp_path):
    from llmjury.families import discover
    from llmjury.reporting.reports import write_run

    summary = RunSummary.model_validate(socratic_tree())
    gates = [Gate.parse("socratic.win_rate>=0.1").check(summary)]
    run_dir = write_run(tmp_path, summary, [], gates, discover())
    text = (run_dir / "summary.json").read_text(encoding="utf-8")
    again = read_summary(text, "summary.json")
    assert again == summary.model_copy(update={"gates": gates})
    assert json.loads(text)["version"] == SUMMARY_VERSION and json.loads(text)["status"] == {"state": "complete",
                                                                                             "cause": None}
    assert "socratic" in json.loads(text) and "families" not in json.loads(text)  # sections stay where gates read
    assert again.families["socratic"].figures["win_rate"]["value"] == 1.0


def test_a_summary_of_an_unknown_version_is_refused_naming_the_file():
    tree = {**socratic_tree(), "version": SUMMARY_VERSION + 1}
    with pytest.raises(ConfigError, match=rf"^old/summary.json: summary version {SUMMARY_VERSION + 1} is not one "
                                          rf"this llmjury reads \(it reads version {SUMMARY_VERSION}\)"):
        read_summary(json.dumps(tree), "old/summary.json")


def test_a_summary_written_before_the_version_field_reads_as_version_one():
    tree = socratic_tree()
    del tree["version"], tree["status"]
    assert read_summary(json.dumps(tree), "summary.json").version == 1


def test_a_baseline_and_llmjury_report_refuse_an_unknown_version(tmp_path, capsys):
    from llmjury.cli import main
    from llmjury.runfiles import VERDICTS, write_gzip
    from llmjury.saved import load_run

    run = tmp_path / "run"
    run.mkdir()
    write_gzip(run / VERDICTS, json.dumps({"case_id": "c", "family": "socratic", "judge": {"provider": "x"}}) + "\n")
    (run / "summary.json").write_text(json.dumps({**socratic_tree(), "version": 99}), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"^--llm-baseline .*summary\.json: summary version 99 is not one"):
        load_run(run, "--llm-baseline")
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "out")]) == 4
    assert "summary.json: summary version 99 is not one this llmjury reads" in capsys.readouterr().err


def test_a_summary_of_the_wrong_shape_names_the_field():
    with pytest.raises(ConfigError, match=r"^s.json: not a run summary \(run: Input should be"):
        read_summary('{"run": 3}', "s.json")


def test_a_stopped_run_is_partial_with_its_cause():
    tree = {**socratic_tree(), "complete": False}
    tree["run"]["stopped"] = {"by": "SIGTERM", "tests_finished": 1, "tests_collected": 4}
    assert RunSummary.model_validate(tree).tree()["status"] == {"state": "partial", "cause": "SIGTERM"}


def test_a_metric_value_that_is_not_a_number_fails_its_gate_instead_of_stopping_the_session_end():
    summary = summary_of({"socratic": {"win_rate": {"value": "n/a", "low": None, "high": None, "n": 0,
                                                    "method": "wilson"}}})
    result = Gate.parse("socratic.win_rate>=0.5").check(summary)
    assert (result.status, result.reason) == ("fail", " (the metric has no value: nothing it counts was scored)")


def test_a_figure_lost_or_changed_since_the_record_differs_from_it_and_one_added_does_not():
    recorded = {"arena": {"win_rate": {"value": 0.5, "n": 4}}}
    assert as_recorded({"arena": {"win_rate": {"value": 0.5, "n": 4}, "decisions_read": {"text": 8}}},
                       recorded) == recorded
    assert as_recorded({"arena": {"win_rate": {"value": 0.6, "n": 4}}}, recorded) != recorded
    assert as_recorded({"arena": {"win_rate": {"n": 4}}}, recorded) != recorded


def test_the_recorded_offline_summary_validates_as_a_run_summary():
    before = json.loads(gzip.decompress(BEFORE.read_bytes()))
    summary = RunSummary.model_validate({**before, "run": {**before["run"], "id": "recorded"}})
    assert sorted(summary.families) == ["arena", "custom", "geval", "qa_quality", "socratic"]
    assert as_recorded(figures(summary.tree()), before) == before  # the model loses no figure


@pytest.mark.e2e  # runs the offline suite (about 5,000 tests) at -n 2: 20-120 s
def test_the_offline_suite_s_summary_validates_and_its_figures_are_those_recorded_before_the_model(tmp_path):
    """The offline suite's summary.json is a RunSummary, and every figure in it equals the record of
    the same suite's summary written by the untyped summary code (tests/data/offline_summary_before.json.gz),
    recorded again for 0.2.0, whose figures moved on purpose: identical socratic subsets counted once, Elo's
    point and interval from one estimator, correlations' BCa intervals, position consistency per case,
    reader versions, the judge configuration's criteria, BCa's resamples equal to the point within rounding
    counted as ties (binary human scores give many), G-Eval fractions read (the recorded gpt-3.5 answers' 2.5s),
    qa_quality's structured answers counted as read from their schema, not as text."""
    args = [sys.executable, "-m", "pytest", "evals", "-n", "2", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
            "--llm-reports", str(tmp_path / "reports"), "--llm-cache-path", str(tmp_path / "cache.sqlite")]
    done = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    text = (tmp_path / "reports" / "latest" / "summary.json").read_text(encoding="utf-8")
    summary = read_summary(text, "summary.json")
    assert summary.status.state == "complete" and summary.version == SUMMARY_VERSION
    recorded = json.loads(gzip.decompress(BEFORE.read_bytes()))
    assert differences(as_recorded(figures(json.loads(text)), recorded), recorded) == []


def differences(now: Any, recorded: Any, path: str = "") -> list[str]:
    """The paths where `now` differs from `recorded`; numbers equal within 1e-9 of each other are the
    same figure (numpy builds sum in different orders, and the last bits of a rating or a
    correlation differ between machines)."""
    if isinstance(now, dict) and isinstance(recorded, dict):
        if now.keys() != recorded.keys():
            return [f"{path}: keys {sorted(now.keys() ^ recorded.keys())}"]
        return [d for key in now for d in differences(now[key], recorded[key], f"{path}.{key}")]
    if isinstance(now, list) and isinstance(recorded, list):
        if len(now) != len(recorded):
            return [f"{path}: {len(now)} items, recorded {len(recorded)}"]
        pairs = enumerate(zip(now, recorded, strict=True))
        return [d for i, (a, b) in pairs for d in differences(a, b, f"{path}[{i}]")]
    numbers = (int, float)
    if isinstance(now, numbers) and isinstance(recorded, numbers) and not isinstance(now, bool) \
            and not isinstance(recorded, bool):
        return [] if math.isclose(now, recorded, rel_tol=1e-9, abs_tol=1e-12) else [f"{path}: {now} != {recorded}"]
    return [] if now == recorded else [f"{path}: {now!r} != {recorded!r}"]


def test_figures_that_differ_only_in_their_last_bits_are_the_same_and_others_are_not():
    recorded = {"elo": {"a": 1070.479133590725, "n": 3}, "rows": [0.3805994723630092, "x"]}
    assert differences({"elo": {"a": 1070.4791335907253, "n": 3}, "rows": [0.38059947236300923, "x"]}, recorded) == []
    assert differences({"elo": {"a": 1070.48, "n": 3}, "rows": [0.3805994723630092, "y"]}, recorded) == [
        ".elo.a: 1070.48 != 1070.479133590725", ".rows[1]: 'y' != 'x'"]
