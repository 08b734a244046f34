from __future__ import annotations

import json

import pytest

from llmjury.datasets.files import read_csv, read_jsonl, read_records, read_text
from llmjury.errors import DatasetError


def test_blank_lines_are_skipped_and_numbers_are_line_positions(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2}\n')
    assert list(read_jsonl(path)) == [(0, {"a": 1}), (2, {"a": 2})]


def test_a_bad_line_names_file_and_line(tmp_path):
    """The line as an editor counts it: it said `[item 4]` for line 5, and a user opened the wrong one."""
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n{oops\n')
    with pytest.raises(DatasetError, match=r"x\.jsonl: line 3: not JSON \(Expecting property name enclosed in "
                                           r"double quotes, column 2\)"):
        list(read_jsonl(path))


def test_a_missing_file_is_a_dataset_error(tmp_path):
    with pytest.raises(DatasetError, match=r"nope\.jsonl: no such file"):
        list(read_jsonl(tmp_path / "nope.jsonl"))


def test_an_empty_file_is_named(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n  \n")
    with pytest.raises(DatasetError, match=r"empty\.jsonl: empty file"):
        read_text(path)


def test_a_non_utf8_file_names_file_byte_and_line(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes("prompt,answer\ncaf\xe9,ok\n".encode("latin-1"))
    with pytest.raises(DatasetError, match=r"latin\.csv: not UTF-8 text \(byte 17, line 2\)"):
        read_text(path)


def test_records_from_jsonl_json_list_and_csv_alike(tmp_path):
    rows = [{"prompt": "p1", "answer": "a"}, {"prompt": "p2", "answer": "b"}]
    (tmp_path / "r.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    (tmp_path / "r.json").write_text(json.dumps(rows))
    (tmp_path / "r.csv").write_text("prompt;answer\np1;a\np2;b\n")
    for name in ("r.jsonl", "r.json", "r.csv"):
        assert [r for _, r in read_records(tmp_path / name)] == rows, name


def test_a_csv_row_with_extra_fields_is_named(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("a,b\n1,2,3\n")
    with pytest.raises(DatasetError, match=r"bad\.csv \[item 0\]: more fields"):
        read_csv(path)


def test_a_json_list_of_non_objects_is_named(tmp_path):
    path = tmp_path / "list.json"
    path.write_text("[1, 2]")
    with pytest.raises(DatasetError, match=r"list\.json \[item 0\]: expected an object"):
        read_records(path)


def test_a_quote_left_open_in_a_csv_file_is_an_error_not_the_rest_of_the_file_in_one_field(tmp_path):
    """Before, the rows after an unclosed quote were read as one field of the row that opened it (a user trial)."""
    path = tmp_path / "pairs.csv"
    path.write_text('id,question,answer\n1,"What is it,x\n2,q,a\n3,q,a\n')
    with pytest.raises(DatasetError, match=r"pairs\.csv: line \d+: not CSV \(unexpected end of data; a quote left "
                                           r"open\?\)"):
        read_csv(path)
