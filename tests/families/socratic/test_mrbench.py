"""Human preferences derived from MRBench annotations, and the judge measured against them."""

from __future__ import annotations

import json

import pytest

from llmjury.datasets.mrbench import human_score, parse_history
from llmjury.errors import DatasetError
from llmjury.families.socratic.mrbench import pair_cases
from llmjury.families.socratic.pipeline import judge_tutor_pair
from llmjury.families.socratic.report import agreement_with_humans

GOOD = {"Mistake_Identification": "Yes", "Mistake_Location": "Yes", "Revealing_of_the_Answer": "No",
        "Providing_Guidance": "Yes", "Actionability": "Yes", "humanlikeness": "Yes", "Coherence": "Yes",
        "Tutor_Tone": "Encouraging"}


def test_human_score_rewards_guidance_and_penalises_revealing():
    assert human_score(GOOD, where="t") == 8.0
    revealing = GOOD | {"Revealing_of_the_Answer": "Yes (and the answer is correct)", "Tutor_Tone": "Neutral",
                        "Actionability": "To some extent"}
    assert human_score(revealing, where="t") == 6.0


def test_unknown_annotation_value_names_the_item():
    with pytest.raises(DatasetError, match=r"conv 7.*unknown Coherence value 'Maybe'"):
        human_score(GOOD | {"Coherence": "Maybe"}, where="conv 7")


def test_history_lines_and_continuations():
    turns = parse_history("Tutor: Solve it.\n Student: 5 + 3 = 9\nso 9 it is\n")
    assert turns == [("Teacher", "Solve it."), ("Student", "5 + 3 = 9\nso 9 it is")]


def write(tmp_path, items):
    path = tmp_path / "mr.json"
    path.write_text(json.dumps(items))
    return path


def item(cid, history, replies):
    return {"conversation_id": cid, "conversation_history": history, "Data": "MathDial",
            "anno_llm_responses": {name: {"response": text, "annotation": ann}
                                   for name, (text, ann) in replies.items()}}


def test_pairs_carry_the_human_preference_and_bad_items_are_skipped(tmp_path):
    worse = GOOD | {"Providing_Guidance": "No"}
    path = write(tmp_path, [
        item("c1", "Tutor: What is 2+3?\nStudent: 6",
             {"Expert": ("Check your sum.", GOOD), "Novice": ("6 is wrong", worse), "GPT4": ("Try again?", GOOD)}),
        item("c2", "Tutor: hi\nTutor: bye", {"Expert": ("x", GOOD), "Novice": ("y", GOOD)}),
    ])
    cases, skipped = pair_cases(path, pairs_per_conversation=10)
    assert len(cases) == 3 and len(skipped) == 1 and "c2" in skipped[0]
    by_pair = {(c.tutor_a, c.tutor_b): c.human for c in cases}
    assert by_pair == {("Expert", "GPT4"): "tie", ("Expert", "Novice"): "a", ("GPT4", "Novice"): "a"}


def test_malformed_file_is_a_dataset_error(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    with pytest.raises(DatasetError, match=r"bad\.json: cannot read MRBench JSON"):
        pair_cases(path)


def test_shipped_copy_loads_with_one_pair_per_conversation():
    cases, skipped = pair_cases()
    assert len(cases) + len(skipped) == 192
    assert all(c.history[-1][0] == "Student" for c in cases)


def test_agreement_counts_ties_both_ways(make_jury, openai_server):
    openai_server.reply = lambda body, i: "### (a) Teacher A"  # always slot A: flips with the swap
    jury = make_jury(roles={"judge": f"openai:judge;base_url={openai_server.base_url}"})
    cases, _ = pair_cases()
    records = [jury.engine.run(judge_tutor_pair(c, jury)).verdict.record() for c in cases[:12]]
    section = agreement_with_humans(records)
    # runs prefer A, B, A -> majority "a": agreement equals the humans' share of "a".
    expected = sum(c.human == "a" for c in cases[:12])
    assert section["agreement_with_ties"]["value"] == pytest.approx(expected / 12)
    assert section["position_consistency"]["value"] == 0.0
