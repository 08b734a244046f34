"""What every reader shares: the judge's own lines (normalised, quotations and code blanked),
look-alikes, strict JSON."""

from __future__ import annotations

import json

import pytest

from llmjury.reading.text import OwnWords, fold, normalise
from llmjury.reading.verdict_json import DuplicateKeyError, json_body, strict_json


def test_own_lines_skip_quotations_and_keep_offsets():
    text = 'Teacher A wrote "### (a)".\n\n> ### (a)\n### (b)'
    lines = OwnWords(text).lines
    assert [line.text.strip() for line in lines] == ["Teacher A wrote          .", "### (b)"]
    assert text[lines[-1].start:] == "### (b)"


def test_normalising_keeps_where_each_character_came_from():
    raw = "Score\u200b:\u00a0４"
    normalised = normalise(raw)
    assert normalised.text == "Score: 4"
    assert raw[normalised.offset(normalised.text.index("4"))] == "４"


@pytest.mark.parametrize(("text", "own"), [
    ("Scores:\n    Coherence: 5\n\nCoherence: 2", ["Scores:", "Coherence: 2"]),  # an indented block is code
    ("Intro.\n\n    Coherence: 5\n    Fluency: 4\nCoherence: 2", ["Intro.", "Coherence: 2"]),
    ("- item one\n    continued\n- item two", ["- item one", "continued", "- item two"]),  # a list's own line
    ("<!-- Coherence: 5 -->\nCoherence: 2", ["Coherence: 2"]),
    ("    Intro.\n\n        Coherence: 5\n\n    Coherence: 2", ["Intro.", "Coherence: 2"]),  # relative to the answer
])
def test_indented_code_and_comments_are_not_the_judges_own_words(text, own):
    assert [line.text.strip() for line in OwnWords(text).lines] == own


def test_a_text_answer_that_begins_with_a_brace_is_no_json_verdict():
    assert json_body("{A} is better.\n### A") is None
    assert json_body('```json\n{"score": 2}\n```') == '{"score": 2}'
    assert json_body('{"score": 2, "score": 5}') is not None  # read as JSON, to name the repeated key


def test_look_alike_letters_fold_to_latin():
    assert fold("### (а) Ｔeacher Ａ ｛｝") == "### (a) Teacher A {}"
    assert fold("### (а)") != normalise("### (а)").text  # a look-alike, spotted, never read


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


@pytest.mark.parametrize(("read", "text"), [
    ("compare", "Final verdict: [[\u0410]]"),  # MT-Bench's brackets sent to jury.compare, a Cyrillic A
    ("compare", "### \u0410"),
    ("pair", "### \u0410"),  # the `###` marker sent to MT-Bench's prompt
    ("pair", "[[\u0410]]"),
])
def test_a_look_alike_letter_in_either_choice_marker_is_named_as_the_cause(read, text):
    from llmjury.errors import JudgeParseError
    from llmjury.families.arena.judge import PAIR_CHOICE
    from llmjury.judgement.judges import parse_choice

    reader = parse_choice if read == "compare" else PAIR_CHOICE.read
    with pytest.raises(JudgeParseError, match="look-alike characters on the decision line"):
        reader(text)
