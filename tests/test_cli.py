"""Re-aggregating saved verdicts reproduces the run's summary without calling a model."""

from __future__ import annotations

import json

from llmjury.cli import main
from llmjury.plugin import GATE_FAILED_EXIT


def test_report_reaggregates_several_verdict_files(tmp_path):
    def record(case, valid):
        return {"case_id": case, "family": "toy", "judge": {"provider": "openai:m"}, "result": {},
                "valid": valid, "error": None if valid else "refused: policy", "raw": [], "attributes": {}}

    (tmp_path / "a.jsonl").write_text("\n".join(json.dumps(record(f"c{i}", True)) for i in range(3)) + "\n")
    (tmp_path / "b.jsonl").write_text(json.dumps(record("c9", False)) + "\n")
    code = main(["report", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--out", str(tmp_path / "out"),
                 "--run-id", "again", "--gate", "toy.unscored<=0"])
    assert code == GATE_FAILED_EXIT == 10
    summary = json.loads((tmp_path / "out" / "again" / "summary.json").read_text())
    assert summary["toy"]["verdicts"] == 4 and summary["toy"]["unscored_reasons"] == {"refused": 1}
    assert summary["gates"][0]["status"] == "fail"
