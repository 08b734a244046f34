"""Seed 003's output, from saved runs or from a session's verdicts."""

from __future__ import annotations

import json

import pytest

from llmjury.cli import main
from llmjury.families.socratic.report import robust_summary

SEED_003_KEYS = ["evaluation_completed", "num_evaluation_runs", "total_subsets", "successful_evaluations",
                 "final_verdict_distribution", "confidence_distribution", "ours_win_rate",
                 "baseline_win_rate", "tie_rate", "unanimous_agreement_rate"]


def test_robust_summary_has_exactly_the_seed_keys_and_rates():
    runs = [
        {"s1": "chat", "s2": "chat", "s3": "simple-chat", "s4": None},
        {"s1": "chat", "s2": "simple-chat", "s3": "tie", "s4": None},
        {"s1": "chat", "s2": "chat", "s3": "chat", "s4": None},
    ]
    result = robust_summary(runs, ours="chat", baseline="simple-chat")
    summary = result["summary"]
    assert list(summary) == SEED_003_KEYS
    assert summary["final_verdict_distribution"] == {"chat": 2, "tie": 1}
    assert summary["confidence_distribution"] == {"unanimous": 1, "majority": 1, "no_consensus": 1}
    assert (summary["total_subsets"], summary["successful_evaluations"]) == (4, 3)
    assert summary["ours_win_rate"] == 0.667 and summary["tie_rate"] == 0.333
    assert summary["unanimous_agreement_rate"] == 0.25  # over all subsets, as the seed's example
    assert result["aggregated_results"]["s2"] == {
        "verdicts": ["chat", "simple-chat", "chat"], "verdict_counts": {"chat": 2, "simple-chat": 1},
        "final_verdict": "chat", "confidence": "majority"}


def test_cli_aggregates_any_number_of_existing_files(tmp_path):
    for i, verdict in enumerate(["chat", "simple-chat", "chat", "chat"]):
        (tmp_path / f"eval{i}.json").write_text(json.dumps({"evaluations": {"s1": verdict}}))
    files = [str(tmp_path / f"eval{i}.json") for i in range(4)]
    assert main(["socratic-aggregate", *files, "--output-dir", str(tmp_path / "out"), "--ours", "chat",
                 "--baseline", "simple-chat"]) == 0
    written = json.loads((tmp_path / "out" / "robust_evaluation.json").read_text())
    assert written["summary"]["num_evaluation_runs"] == 4
    assert written["aggregated_results"]["s1"]["confidence"] == "majority"
    assert written["summary"]["ours_win_rate"] == 1.0


def seed_evaluations(path, verdicts: dict[str, object]) -> None:
    """A file as seed 003's evaluate_teacher_responses.py writes it (judge_evaluations_*.json)."""
    items = []
    for subset, verdict in verdicts.items():
        if verdict is None:
            items.append({"subset_id": subset, "success": False, "error": "Judge evaluation failed"})
        else:
            items.append({"subset_id": subset, "success": True, "dialogue_history": "[Student]: hi",
                          "teacher_responses": {"chat": "a", "simple-chat": "b"},
                          "judge_assignment": {"teacher_a": "chat", "teacher_b": "simple-chat"},
                          "judge_evaluation": {"success": True, "judge_response": "### (a)", "verdict": "teacher_a"},
                          "verdict": verdict})
    summary = {"evaluation_completed": "2025-06-23T16:13:58", "total_evaluations": len(items)}
    path.write_text(json.dumps({"summary": summary, "evaluations": items}))


def test_cli_reads_the_seeds_own_evaluation_files(tmp_path):
    runs = [{"s1": "chat", "s2": "equivalent", "s3": "simple-chat", "s4": None},
            {"s1": "chat", "s2": "equivalent", "s3": "unclear", "s4": None},
            {"s1": "simple-chat", "s2": "chat", "s3": "simple-chat", "s4": None}]
    files = []
    for i, run in enumerate(runs):
        files.append(str(tmp_path / f"judge_evaluations_2025062{i}_120000.json"))
        seed_evaluations(tmp_path / f"judge_evaluations_2025062{i}_120000.json", run)
    assert main(["socratic-aggregate", *files, "--output-dir", str(tmp_path / "out"),
                 "--ours", "chat", "--baseline", "simple-chat"]) == 0
    written = json.loads((tmp_path / "out" / "robust_evaluation.json").read_text())
    assert list(written["summary"]) == SEED_003_KEYS
    assert written["aggregated_results"]["s2"] == {"verdicts": ["tie", "tie", "chat"],
                                                   "verdict_counts": {"tie": 2, "chat": 1},
                                                   "final_verdict": "tie", "confidence": "majority"}
    assert written["aggregated_results"]["s3"]["verdicts"] == ["simple-chat", "simple-chat"]  # unclear not counted
    assert "s4" not in written["aggregated_results"]
    assert (written["summary"]["total_subsets"], written["summary"]["successful_evaluations"]) == (4, 3)
    assert written["summary"]["final_verdict_distribution"] == {"chat": 1, "tie": 1, "simple-chat": 1}


def test_cli_names_the_bad_file_and_item(tmp_path, capsys):
    seed_evaluations(tmp_path / "eval1.json", {"s1": "chat", "s7": "chat"})
    with pytest.raises(SystemExit, match=r"eval1\.json \[item s1\]: verdict 'chat' is neither --ours 'ours'"):
        main(["socratic-aggregate", str(tmp_path / "eval1.json"), "--output-dir", str(tmp_path / "out")])
    (tmp_path / "eval2.json").write_text(json.dumps({"evaluations": [{"verdict": "chat"}]}))
    with pytest.raises(SystemExit, match=r"eval2\.json \[item 0\]: an evaluation must be an object with a 'subset_id'"):
        main(["socratic-aggregate", str(tmp_path / "eval2.json"), "--ours", "chat"])
    (tmp_path / "eval3.json").write_bytes(b"\xff\xfe{}")
    with pytest.raises(SystemExit, match=r"eval3\.json: not UTF-8"):
        main(["socratic-aggregate", str(tmp_path / "eval3.json")])


def test_with_nothing_scored_the_rates_are_null_and_the_tables_say_n_a():
    from llmjury.families.socratic.report import tables
    from llmjury.families.socratic.results import Comparison, RobustEvaluation

    summary = robust_summary([{"s1": None, "s2": None}] * 3, ours="chat", baseline="simple-chat")
    result = RobustEvaluation.model_validate(summary).summary.model_dump()
    assert result["successful_evaluations"] == 0
    assert result["ours_win_rate"] is None and result["tie_rate"] is None  # n/a, never a 0.0 win rate
    lines = tables(Comparison.model_validate({"final_verdicts": {"ours": 0, "baseline": 0, "tie": 0},
                                              "confidence": {"unanimous": 0, "majority": 0, "no_consensus": 0}}))
    assert "| ours | 0 | n/a |" in lines and "| unanimous | 0 | n/a |" in lines
