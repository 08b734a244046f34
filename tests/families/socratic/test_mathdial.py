"""Real MathDial dialogues cut at student turns, and the files that must stop a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmjury.errors import DatasetError
from llmjury.families.socratic.datasets.mathdial import parse_conversation, subsets
from llmjury.families.socratic.dialogue import STUDENT

SHIPPED = Path(__file__).resolve().parents[3] / "fixtures" / "mathdial" / "test.jsonl"


def test_turns_lose_move_labels_and_cuts_end_on_the_student():
    turns = parse_conversation("Teacher: (probing)Why 9?|EOM|Student: Because 12 - 3.|EOM|Teacher: (telling)Add.")
    assert turns[0] == ("Teacher", "Why 9?", "probing") and turns[2][2] == "telling"
    cases, report = subsets(SHIPPED, count=20, seed=1)
    assert len(cases) == 20 and all(c.turns[-1][0] == STUDENT for c in cases)
    assert [c.id for c in cases] == [c.id for c in subsets(SHIPPED, count=20, seed=1)[0]]
    assert report.kept + sum(report.dropped.values()) == 599 and report.dataset == "mathdial"


@pytest.mark.parametrize("content", ["", "\n  \n"])
def test_an_empty_file_is_an_error_naming_it_not_zero_cases(tmp_path, content):
    path = tmp_path / "mine.jsonl"
    path.write_text(content)
    with pytest.raises(DatasetError, match=r"mine\.jsonl: empty file"):
        subsets(path)


def test_a_file_without_student_turns_is_an_error(tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({"qid": 1, "conversation": "Teacher: hello|EOM|Teacher: anyone?"}) + "\n")
    with pytest.raises(DatasetError, match=r"mine\.jsonl: no MathDial dialogue with a student turn"):
        subsets(path)


def test_a_row_without_a_conversation_names_the_item(tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({"qid": 1, "conversation": "Student: 1|EOM|Teacher: ok"}) + "\n" + json.dumps({"q": 2}))
    with pytest.raises(DatasetError, match=r"mine\.jsonl \[item 1\]: not a MathDial dialogue"):
        subsets(path)


def test_the_dataset_name_labels_case_ids_and_markers(tmp_path):
    path = tmp_path / "tutoring.jsonl"
    path.write_text(json.dumps({"qid": 7, "conversation": "Teacher: hi|EOM|Student: 1+1=3|EOM|Student: no, 2"}))
    cases, report = subsets(path, name="my tutoring", count=5)
    assert [c.id for c in cases] == ["my_tutoring-000-q7-cut1", "my_tutoring-000-q7-cut2"]
    assert cases[0].marks() == ["socratic", "mathdial", "my_tutoring"] and report.kept == 1
