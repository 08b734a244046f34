"""Loading Q&A data: your own pairs (JSONL, JSON, CSV), SemEval's shape, the Slack export; what is
left out is counted, and data that yields no pair is an error naming the file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from llmjury.errors import ConfigError, DatasetError
from llmjury.families.qa_quality import FAMILY
from llmjury.families.qa_quality.datasets import export_cases, labelled_file, load
from llmjury.families.qa_quality.options import QAOptions
from llmjury.running.settings import Settings

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
SEMEVAL_ROW = {"question_id": "Q1", "question_subject": "Best bank", "question_body": "Which one?",
               "comment_id": "Q1_C1", "comment_text": "QNB", "label": "Good"}


def jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_pairs_file_becomes_cases_named_after_the_file(tmp_path):
    rows = [{"id": "1", "question": "What is a tensor?", "answer": "An n-dimensional array.", "course": "DL 101"},
            {"id": 2, "question": "Why normalise?", "answers": ["Stable gradients.", " ", "Faster training."]}]
    cases, report = labelled_file(jsonl(tmp_path / "bootcamp_qa.jsonl", rows), "bootcamp_qa", "auto")
    assert [c.id for c in cases] == ["bootcamp_qa-1", "bootcamp_qa-2"]
    assert cases[0].marks() == ["qa_quality", "qa_bootcamp_qa", "course_dl_101"]
    assert cases[1].pair["answers"] == [{"text": "Stable gradients."}, {"text": "Faster training."}]
    assert cases[1].pair["question"] == {"text": "Why normalise?", "timestamp": "2"}
    assert all(c.label is None for c in cases)
    assert (report.dataset, report.kept, report.dropped) == ("bootcamp_qa", 2, {})


def test_duplicates_and_empty_answers_are_counted_not_silent(tmp_path):
    rows = [{"id": "a", "question": "q1", "answer": "x"}, {"id": "a", "question": "q1 again", "answer": "y"},
            {"id": "b", "question": "q2", "answer": "  "}, {"id": "c", "question": "", "answer": "z"},
            {"id": "d", "question": "q4", "answer": "w"}]
    cases, report = labelled_file(jsonl(tmp_path / "mine.jsonl", rows), "mine", "auto")
    assert [c.id for c in cases] == ["mine-a", "mine-d"]
    assert report.dropped == {"duplicate id": 1, "empty answer": 1, "empty question": 1}
    assert report.line().endswith("2 items; left out 3 (1 duplicate id, 1 empty answer, 1 empty question)")


def test_csv_with_grade_labels_and_topic(tmp_path):
    path = tmp_path / "graded.csv"
    path.write_text("id,question,answer,topic,label\n1,How?,Like this.,git,High\n2,Why?,Because.,git,\n"
                    "3,What?,Nothing.,,remove\n", encoding="utf-8")
    cases, _ = labelled_file(path, "graded", "auto")
    assert [(c.course, c.label) for c in cases] == [("git", "high"), ("git", None), ("", "remove")]


@pytest.mark.parametrize(("content", "cause"), [
    ("", "empty file"),
    ("[]", "no records"),
    ('{"id": "1", "question": "q", "answer": ""}\n', r"no Q&A pair left \(.*1 empty answer\)"),
])
def test_a_file_that_yields_no_pair_is_an_error_naming_it(tmp_path, content, cause):
    (tmp_path / "x.jsonl").write_text(content, encoding="utf-8")
    with pytest.raises(DatasetError, match=rf"x\.jsonl: {cause}"):
        labelled_file(tmp_path / "x.jsonl", "x", "auto")


def test_empty_semeval_file_is_an_error_not_zero_cases(tmp_path):
    (tmp_path / "semeval.jsonl").write_text("\n\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"semeval\.jsonl: empty file"):
        load({"semeval": tmp_path / "semeval.jsonl"}, QAOptions())


@pytest.mark.parametrize(("rows", "message"), [
    ([{"id": "1", "question": "q", "answer": "a", "label": "Great"}], r"\[item 0\]: unknown label 'Great'"),
    ([{"id": "1", "question": "q", "answer": "a", "label": "Good"},
      {"id": "2", "question": "q", "answer": "b", "label": "low"}], r"\[item 1\]: label 'low' is from the grade"),
    ([{"id": "1", "question": "q"}], r"\[item 0\]: no 'answer' field"),
    ([{"text": "q"}], r"\[item 0\]: neither Q&A pairs \(id, question, answer\) nor SemEval pairs"),
    ([{"id": "1", "question": "q", "answers": "a"}], r"\[item 0\]: 'answers' is a str, not a list"),
])
def test_malformed_pairs_name_the_item_and_the_cause(tmp_path, rows, message):
    with pytest.raises(DatasetError, match=r"x\.jsonl " + message):
        labelled_file(jsonl(tmp_path / "x.jsonl", rows), "x", "auto")


def test_semeval_shape_is_detected_in_a_pairs_file_or_named_by_format(tmp_path):
    path = jsonl(tmp_path / "cqa2017.jsonl", [SEMEVAL_ROW, {**SEMEVAL_ROW, "comment_id": "Q1_C2",
                                                            "comment_text": "", "label": "Bad"}])
    cases, report = labelled_file(path, "cqa2017", "auto")
    assert [(c.id, c.label) for c in cases] == [("cqa2017-q1_c1", "Good")]
    assert cases[0].pair["question"]["text"] == "Best bank\nWhich one?"
    assert report.dropped == {"empty answer": 1}
    with pytest.raises(DatasetError, match=r"\[item 0\]: no 'id', 'question'"):
        labelled_file(path, "cqa2017", "pairs")


def test_unknown_semeval_label_names_the_row(tmp_path):
    path = jsonl(tmp_path / "x.jsonl", [{**SEMEVAL_ROW, "label": "Great"}])
    with pytest.raises(DatasetError, match=r"x\.jsonl \[item 0\]: unknown label 'Great'"):
        labelled_file(path, "semeval", "semeval")


def test_shipped_semeval_sample_through_the_data_root():
    paths = FAMILY.dataset_paths(QAOptions(), Settings(data_root=FIXTURES))
    assert paths == {"slack_export": FIXTURES / "qa_quality" / "slack_export",
                     "semeval": FIXTURES / "semeval_cqa" / "sample.jsonl"}
    data = load(paths, QAOptions())
    assert len(data.labelled) == 300 and {c.label for c in data.labelled} == {"Good", "PotentiallyUseful", "Bad"}
    assert data.labelled[0].id.startswith("semeval-") and "qa_semeval" in data.labelled[0].marks()
    assert len(data.pairs) == 14 and len(data.rules) == 2
    assert [r.dataset for r in data.loaded] == ["slack_export", "semeval"]


def test_without_a_data_root_only_the_given_file_is_read(tmp_path):
    path = jsonl(tmp_path / "mine.jsonl", [{"id": "1", "question": "q", "answer": "a"}])
    options = QAOptions(pairs=str(path), pairs_name="Team Wiki")
    data = load(FAMILY.dataset_paths(options, Settings()), options)
    assert [c.id for c in data.pairs] == ["team_wiki-1"] and data.labelled == [] and data.rules == []


def test_no_data_at_all_names_the_options_to_set():
    with pytest.raises(ConfigError, match=r"set --llm-option qa_quality\.pairs=FILE"):
        load(FAMILY.dataset_paths(QAOptions(), Settings()), QAOptions())


def test_a_pairs_file_may_not_take_a_shipped_dataset_name(tmp_path):
    path = jsonl(tmp_path / "semeval.jsonl", [{"id": "1", "question": "q", "answer": "a"}])
    options = QAOptions(pairs=str(path))
    with pytest.raises(ConfigError, match=r"dataset name 'semeval' is also the name of qa_quality\.semeval"):
        load(FAMILY.dataset_paths(options, Settings(data_root=FIXTURES)), options)


def test_export_thread_seen_twice_is_counted_and_kept_once(tmp_path):
    root = tmp_path / "my_export"
    shutil.copytree(FIXTURES / "qa_quality" / "slack_export", root)
    course = root / "level1_python"
    threads = json.loads((course / "generation5.json").read_text(encoding="utf-8"))
    (course / "generation5_copy.json").write_text(json.dumps(threads[:1], ensure_ascii=False), encoding="utf-8")
    pairs, rules, report = export_cases(root)
    assert len(pairs) == 14 and len({c.id for c in pairs}) == 14
    assert report.dataset == "my_export" and report.dropped["duplicate thread"] == 1
    assert {r.course: r.removed.get("duplicate", 0) for r in rules} == {"level1_python": 1, "level2_nlp": 0}


@pytest.mark.parametrize("layout", ["no folder", "no course"])
def test_an_export_without_threads_is_an_error(tmp_path, layout):
    root = tmp_path / "export"
    if layout == "no course":
        (root / "empty_course").mkdir(parents=True)
    with pytest.raises(DatasetError, match=r"export: (not a folder|no course folder)"):
        export_cases(root)
