from __future__ import annotations

import json

import pytest

from llmjury.errors import DatasetError
from llmjury.families.qa_quality.semeval import agreement_with_labels, semeval_cases


def test_sample_loads_as_one_answer_pairs_with_labels():
    cases = semeval_cases()
    assert len(cases) == 300 and {c.label for c in cases} == {"Good", "PotentiallyUseful", "Bad"}
    assert len(cases[0].pair["answers"]) == 1 and "semeval" in cases[0].marks()


def test_unknown_label_names_the_row(tmp_path):
    row = {"question_id": "Q1", "question_subject": "s", "question_body": "b", "comment_id": "Q1_C1",
           "comment_text": "c", "label": "Great"}
    (tmp_path / "x.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(DatasetError, match=r"x\.jsonl \[item 0\]: unknown label 'Great'"):
        semeval_cases(tmp_path / "x.jsonl")


def test_agreement_counts_remove_against_bad():
    def record(score, grade, label):
        return {"valid": True, "result": {"avg_score": score, "grade": grade}, "attributes": {"human_label": label}}

    records = [record(4.5, "high", "Good"), record(3.0, "medium", "PotentiallyUseful"), record(1.5, "remove", "Bad"),
               record(1.7, "remove", "Good"), record(2.5, "low", "Bad")]
    out = agreement_with_labels(records)
    assert out["remove_precision_for_bad"]["value"] == 0.5 and out["remove_recall_of_bad"]["value"] == 0.5
    assert out["spearman_avg_score_vs_label"]["value"] > 0
    assert out["grade_by_label"]["remove"] == {"Bad": 1, "PotentiallyUseful": 0, "Good": 1}
