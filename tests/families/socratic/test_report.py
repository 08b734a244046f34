"""Seed 003's output, from saved runs or from a session's verdicts."""

from __future__ import annotations

import json

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
    assert main(["socratic-aggregate", *files, "--output-dir", str(tmp_path / "out"), "--ours", "chat"]) == 0
    written = json.loads((tmp_path / "out" / "robust_evaluation.json").read_text())
    assert written["summary"]["num_evaluation_runs"] == 4
    assert written["aggregated_results"]["s1"]["confidence"] == "majority"
    assert written["summary"]["ours_win_rate"] == 1.0
