from __future__ import annotations

import pytest

from llmjury.datasets.jsonl import read_jsonl
from llmjury.errors import DatasetError


def test_blank_lines_are_skipped_and_numbers_are_line_positions(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2}\n')
    assert list(read_jsonl(path)) == [(0, {"a": 1}), (2, {"a": 2})]


def test_a_bad_line_names_file_and_line(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n{oops\n')
    with pytest.raises(DatasetError, match=r"x\.jsonl \[item 1\]: not JSON"):
        list(read_jsonl(path))


def test_a_missing_file_is_a_dataset_error(tmp_path):
    with pytest.raises(DatasetError, match="cannot read"):
        list(read_jsonl(tmp_path / "nope.jsonl"))
