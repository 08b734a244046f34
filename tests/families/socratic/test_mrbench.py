"""Annotated tutor pairs in MRBench's V1 and V3 shapes, and the judge measured against them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmjury.datasets.mrbench import dimension_score, parse_history, read
from llmjury.errors import DatasetError
from llmjury.families.socratic.datasets.mrbench import pair_cases
from llmjury.families.socratic.pipeline import judge_tutor_pair
from llmjury.families.socratic.report import agreement_with_humans

SHIPPED = Path(__file__).resolve().parents[3] / "fixtures" / "mrbench" / "MRBench_V1.json"
GOOD = {"Mistake_Identification": "Yes", "Mistake_Location": "Yes", "Revealing_of_the_Answer": "No",
        "Providing_Guidance": "Yes", "Actionability": "Yes", "humanlikeness": "Yes", "Coherence": "Yes",
        "Tutor_Tone": "Encouraging"}
V3_DIMENSIONS = ("Mistake_Identification", "Mistake_Location", "Providing_Guidance", "Actionability")


def score(annotation: dict[str, str]) -> float:
    return sum(dimension_score(d, v, where="t") for d, v in annotation.items())


def test_human_score_rewards_guidance_and_penalises_revealing():
    assert score(GOOD) == 8.0
    revealing = GOOD | {"Revealing_of_the_Answer": "Yes (and the answer is correct)", "Tutor_Tone": "Neutral",
                        "Actionability": "To some extent"}
    assert score(revealing) == 6.0


def test_unknown_annotation_value_names_the_item():
    with pytest.raises(DatasetError, match=r"conv 7.*unknown Coherence value 'Maybe'"):
        dimension_score("Coherence", "Maybe", where="conv 7")


def test_history_lines_and_continuations():
    turns = parse_history("Tutor: Solve it.\n Student: 5 + 3 = 9\nso 9 it is\n")
    assert turns == [("Teacher", "Solve it."), ("Student", "5 + 3 = 9\nso 9 it is")]


def write(tmp_path: Path, items: list[dict], name: str = "mr.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(items))
    return path


def item(cid, history, replies, field="anno_llm_responses"):
    return {"conversation_id": cid, "conversation_history": history, "Data": "MathDial",
            field: {name: {"response": text, **({"annotation": ann} if ann is not None else {})}
                    for name, (text, ann) in replies.items()}}


def v3(annotation: dict[str, str]) -> dict[str, str]:
    return {d: annotation[d] for d in V3_DIMENSIONS}


def test_pairs_carry_the_human_preference_and_left_out_items_are_counted(tmp_path):
    worse = GOOD | {"Providing_Guidance": "No"}
    path = write(tmp_path, [
        item("c1", "Tutor: What is 2+3?\nStudent: 6",
             {"Expert": ("Check your sum.", GOOD), "Novice": ("6 is wrong", worse), "GPT4": ("Try again?", GOOD)}),
        item("c2", "Tutor: hi\nTutor: bye", {"Expert": ("x", GOOD), "Novice": ("y", GOOD)}),
    ])
    cases, report = pair_cases(path, pairs_per_conversation=10)
    assert len(cases) == 3
    assert (report.kept, report.dropped) == (1, {"conversations whose history does not end with a student turn": 1})
    by_pair = {(c.tutor_a, c.tutor_b): c.human for c in cases}
    assert by_pair == {("Expert", "GPT4"): "tie", ("Expert", "Novice"): "a", ("GPT4", "Novice"): "a"}
    assert cases[0].human_by_dimension["Providing_Guidance"] == "tie"


def test_v3_shape_with_four_dimensions_is_read_and_named_by_its_file(tmp_path):
    worse = GOOD | {"Mistake_Location": "No", "Tutor_Tone": "Offensive"}  # tone is not in V3: ignored
    path = write(tmp_path, [
        item("c1", "Tutor: What is 2+3?\nStudent: 6",
             {"Sonnet": ("Check your sum.", v3(GOOD)), "Phi3": ("It is 5.", v3(worse)), "Llama": ("Hm.", None)},
             field="tutor_responses"),
    ], name="mrbench_v3_devset.json")
    data = read(path)
    assert (data.format, data.dimensions) == ("v3", V3_DIMENSIONS)
    cases, report = pair_cases(path)
    assert [(c.tutor_a, c.tutor_b, c.human) for c in cases] == [("Phi3", "Sonnet", "b")]
    assert cases[0].human_by_dimension == {"Mistake_Identification": "tie", "Mistake_Location": "b",
                                           "Providing_Guidance": "tie", "Actionability": "tie"}
    assert cases[0].id.startswith("mrbench_v3_devset-c000-") and "mrbench_v3_devset" in cases[0].marks()
    assert (report.dataset, report.dropped) == ("mrbench_v3_devset", {"replies without annotation": 1})


def test_a_given_name_labels_cases(tmp_path):
    path = write(tmp_path, [item("c1", "Student: 6", {"A": ("x", v3(GOOD)), "B": ("y", v3(GOOD))},
                                 field="tutor_responses")])
    cases, report = pair_cases(path, name="BEA dev")
    assert cases[0].dataset == "BEA dev" and cases[0].id.startswith("bea_dev-") and report.dataset == "BEA dev"


def test_a_forced_format_names_the_missing_field(tmp_path):
    path = write(tmp_path, [item("c1", "Student: 6", {"A": ("x", GOOD), "B": ("y", GOOD)}, field="tutor_responses")])
    with pytest.raises(DatasetError, match=r"mr\.json.*item 0.*'anno_llm_responses'"):
        read(path, fmt="v1")


def test_a_reply_lacking_a_dimension_others_have_is_left_out_and_counted(tmp_path):
    partial = {k: v for k, v in GOOD.items() if k != "Coherence"}
    path = write(tmp_path, [item("c1", "Student: 6", {"A": ("x", GOOD), "B": ("y", GOOD), "C": ("z", partial)})])
    cases, report = pair_cases(path, pairs_per_conversation=3)
    assert {(c.tutor_a, c.tutor_b) for c in cases} == {("A", "B")}
    assert report.dropped == {"replies lacking one of the file's annotated dimensions": 1}


@pytest.mark.parametrize(("content", "cause"), [
    ("{not json", "not JSON"),
    ("[]", "non-empty JSON list"),
    (json.dumps([{"conversation_id": "c", "conversation_history": "Student: 1"}]), "no 'anno_llm_responses' .V1."),
    (json.dumps([item("c", "Student: 1", {"A": ("x", None), "B": ("y", None)}, field="tutor_responses")]),
     "no reply carries an annotation"),
])
def test_bad_files_are_dataset_errors_naming_the_file(tmp_path, content, cause):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(DatasetError, match=rf"bad\.json.*{cause}"):
        pair_cases(path)


def test_shipped_copy_loads_with_one_pair_per_conversation():
    cases, report = pair_cases(SHIPPED)
    assert len(cases) == report.kept == 186 and sum(report.dropped.values()) == 6
    assert all(c.history[-1][0] == "Student" for c in cases)
    assert {c.dataset for c in cases} == {"MRBench_V1"} and "mrbench_v1" in cases[0].marks()


def test_agreement_counts_ties_both_ways_and_per_dimension(make_jury, openai_server):
    openai_server.reply = lambda body, i: "### (a) Teacher A"  # always slot A: flips with the swap
    jury = make_jury(roles={"judge": f"openai:judge;base_url={openai_server.base_url}"})
    cases, _ = pair_cases(SHIPPED)
    verdicts = [jury.engine.run(judge_tutor_pair(c, jury)).verdict for c in cases[:12]]
    assert {v.kind for v in verdicts} == {"human_preference"}
    section = agreement_with_humans([(v, v.result) for v in verdicts])
    # runs prefer A, B, A -> majority "a": agreement equals the humans' share of "a".
    expected = sum(c.human == "a" for c in cases[:12])
    assert section.agreement_with_ties.value == pytest.approx(expected / 12)
    assert section.position_consistency.value == 0.0
    assert section.dataset.startswith("MRBench V1 (")
    guidance = sum(c.human_by_dimension["Providing_Guidance"] == "a" for c in cases[:12])
    assert section.by_dimension["Providing_Guidance"].agreement_with_ties.value == pytest.approx(guidance / 12)
