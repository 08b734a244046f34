"""The helpers every decision parser shares: the judge's own lines, look-alikes, strict JSON."""

from __future__ import annotations

import json

import pytest

from llmjury.decision_line import DuplicateKeyError, fold, looks_alike, own_lines, strict_json


def test_own_lines_skip_quotations_and_keep_offsets():
    text = 'Teacher A wrote "### (a)".\n\n> ### (a)\n### (b)'
    lines = own_lines(text)
    assert [line.text.strip() for line in lines] == ["Teacher A wrote          .", "### (b)"]
    assert text[lines[-1].start:] == "### (b)"


def test_look_alike_letters_fold_to_latin():
    assert fold("### (а) Ｔeacher Ａ ｛｝") == "### (a) Teacher A {}"
    assert looks_alike("### (а)") and not looks_alike("### (a)")


@pytest.mark.parametrize("text", ['{"score": 2, "score": 5}', '{"a": {"score": 2, "score": 5}}',
                                  '[{"x": 1}, {"x": 1, "x": 2}]'])
def test_strict_json_refuses_a_repeated_key(text):
    with pytest.raises(DuplicateKeyError, match=r"'(score|x)'"):
        strict_json(text)


def test_strict_json_reads_what_json_reads_otherwise():
    text = '{"score": 2, "reasoning": {"score": 5}}'
    assert strict_json(text) == json.loads(text)
    with pytest.raises(json.JSONDecodeError):
        strict_json("{bad")


def test_the_deepeval_bridge_refuses_a_repeated_key():
    from llmjury.judgement.deepeval_bridge import _refuse_duplicate_keys

    with pytest.raises(DuplicateKeyError):
        _refuse_duplicate_keys('{"score": 2, "score": 5}')
    _refuse_duplicate_keys("not json")  # left to the schema's validation to name
