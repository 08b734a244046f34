"""Seed 001's section 9 files replayed into a report with no model call: a run's own files give
back its corpus figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmjury.cli import main
from llmjury.errors import DatasetError
from llmjury.families.qa_quality import FAMILY
from llmjury.families.qa_quality.options import QAOptions
from llmjury.families.qa_quality.report import aggregate, files

DIMENSIONS = ("completeness", "context_independence", "technical_accuracy")


def graded(i: int, course: str, scores: list[int], judge_grade: str) -> dict:
    evaluation = {d: {"score": s, "reasoning": "r"} for d, s in zip(DIMENSIONS, scores, strict=True)}
    from llmjury.families.qa_quality.evaluation import grade

    computed = grade(scores)
    return {"case_id": f"qa-{course}-g7-{i}", "family": "qa_quality", "kind": "grade",
            "judge": {"provider": "openai:gpt-4o-mini"},
            "result": {"scores": dict(zip(DIMENSIONS, scores, strict=True)), "grade": computed,
                       "judge_grade": judge_grade, "grade_disagrees": computed != judge_grade,
                       "avg_score": round(sum(scores) / 3, 3),
                       "evaluation": evaluation | {"overall_quality": judge_grade}},
            "attributes": {"dataset": "slack_export", "course": course, "raw_tokens_est": 0, "input_tokens_est": 0,
                           "pair": {"generation": "7", "date": "2024-10-15",
                                    "question": {"text": f"question {i}", "timestamp": str(i)},
                                    "answers": [{"text": f"answer {i}"}]}}}


@pytest.fixture
def run_files(tmp_path: Path) -> tuple[Path, object]:
    records = [graded(1, "nlp", [5, 4, 4], "high"), graded(2, "nlp", [1, 1, 4], "low"),
               graded(3, "nlp", [3, 3, 3], "medium"), graded(4, "python", [4, 2, 3], "medium")]
    verdicts = [FAMILY.typed(r) for r in records]
    section = aggregate(verdicts)
    folder = tmp_path / "qa_quality"
    for name, text in files(section, verdicts).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return folder, section


def test_a_runs_section_9_files_give_back_its_corpus_figures(run_files):
    folder, section = run_files
    verdicts = FAMILY.replay(folder, QAOptions(pairs_name="last_run")).verdicts
    assert sorted(v.case_id for v in verdicts) == ["qa-nlp-g7-1", "qa-nlp-g7-2", "qa-nlp-g7-3", "qa-python-g7-4"]
    again = aggregate(sorted(verdicts, key=lambda v: v.case_id))  # the order the core aggregates in
    assert again.grades == section.grades and again.remove_rate == section.remove_rate
    assert again.avg_scores == section.avg_scores and again.courses == section.courses
    assert again.judge_grade_disagreement_rate == section.judge_grade_disagreement_rate
    assert again.datasets is not None and list(again.datasets) == ["last_run"]
    assert {v.judge.provider for v in verdicts} == {"recorded:gpt-4o-mini"}


def test_replay_verb_writes_a_report_from_the_files(run_files, tmp_path, capsys):
    folder, _ = run_files
    assert main(["replay", "qa_quality", str(folder), "--out", str(tmp_path / "reports"), "--name", "again"]) == 0
    summary = json.loads((tmp_path / "reports" / "again" / "summary.json").read_text(encoding="utf-8"))
    assert summary["qa_quality"]["grades"] == {"high": 1, "medium": 2, "low": 0, "remove": 1}
    assert (tmp_path / "reports" / "again" / "qa_quality" / "nlp_removed.json").exists()


def test_a_course_file_without_its_removed_pairs_is_an_error(run_files):
    folder, _ = run_files
    (folder / "nlp_removed.json").unlink()
    with pytest.raises(DatasetError, match=r"nlp\.json: its metadata counts 1 removed pairs but nlp_removed\.json"):
        FAMILY.replay(folder, QAOptions())


def test_a_malformed_pair_names_file_and_item(tmp_path):
    document = {"course": "c", "metadata": {}, "qa_pairs": [{"question": {"text": "q", "timestamp": "1"},
                                                             "answers": [], "quality_score": {"completeness": {}}}]}
    (tmp_path / "c.json").write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"c\.json \[item 0\]: not a scored Q&A pair \(no 'score' field\)"):
        FAMILY.replay(tmp_path / "c.json", QAOptions())
