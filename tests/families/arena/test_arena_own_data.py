"""Your own pairwise items and seed 002 questions through the suite's eval module, from a folder
outside this repository under --strict-markers: the dataset's name in case ids, markers and
report labels, what was left out in the terminal and the report, and nothing shipped in sight."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from llmjury.testing import FakeOpenAI

EVAL = Path(__file__).resolve().parents[3] / "evals" / "test_arena.py"
INI = """
[pytest]
addopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider --strict-markers
llm_options = arena.pairs=judged.jsonl
"""
ROWS = [
    {"id": "p1", "prompt": "Same prompt?", "answer_a": "A long and careful answer about the same prompt.",
     "answer_b": "short", "model_a": "sys-a", "model_b": "sys-b", "label": "a", "verdict_ab": "a",
     "verdict_ba": "a", "judge": "gpt-4"},
    {"id": "p2", "prompt": "Same prompt?", "answer_a": "Another answer", "answer_b": "The better answer",
     "model_a": "sys-a", "model_b": "sys-b", "label": "b", "verdict_ab": "a", "verdict_ba": "b", "judge": "gpt-4"},
    {"id": "p3", "prompt": "Q3", "answer_a": "x", "answer_b": "y", "model_a": "sys-b", "model_b": "sys-a",
     "label": "tie", "verdict_ab": "tie", "verdict_ba": "tie", "judge": "gpt-4"},
    {"id": "p4", "prompt": "Q4", "answer_a": "x", "answer_b": " ", "label": "a"},
    {"id": "p1", "prompt": "Q again", "answer_a": "x", "answer_b": "y", "label": "a"},
]


@pytest.fixture
def own_pairs(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    shutil.copy(EVAL, pytester.path / "test_arena_suite.py")  # not this package's test_arena.py
    (pytester.path / "judged.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return pytester


def summary(pytester: pytest.Pytester) -> dict:
    return json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text(encoding="utf-8"))


# Two xdist workers are processes of their own: e2e (tests/datasets/test_loading.py merges loading across
# workers in the quick run).
@pytest.mark.parametrize("workers", ["0", pytest.param("2", marks=pytest.mark.e2e)])
def test_own_pairs_run_under_strict_markers_with_their_name_everywhere(own_pairs, workers):
    result = own_pairs.runpytest_inprocess("-n", workers, "-v")
    # 3 items judged live + their labels and recorded verdicts; no shipped data: 5 tests without cases.
    result.assert_outcomes(passed=4, skipped=5)
    result.stdout.fnmatch_lines(["*test_pair?judged-p1?*",
                                 "*arena dataset judged (*judged.jsonl): 3 items; "
                                 "left out 2 (1 empty answer, 1 repeated id (first kept))*"])
    section = summary(own_pairs)["arena"]
    assert section["main"] == "judged/judge"
    assert set(section["leaderboards"]) == {"judged/judge", "judged/human", "judged/recorded:gpt-4"}
    validity = section["judge_validity"]["judged"]
    assert validity["dataset"] == "judged" and validity["battles"] == 3
    assert validity["correct_both_orders"]["n"] == 3 and validity["swap_consistency"]["n"] == 3
    recorded = validity["recorded"]["recorded:gpt-4"]
    assert recorded["correct_both_orders"]["value"] == pytest.approx(2 / 3)
    assert section["loading"][0]["dropped"] == {"empty answer": 1, "repeated id (first kept)": 1}
    text = json.dumps(section).lower()
    assert "mrbench" not in text and "mtbench" not in text and "prd" not in text
    assert "(`judged`)" in (own_pairs.path / "reports" / "latest" / "summary.md").read_text()


def test_dataset_marker_selects_under_strict_markers(own_pairs):
    result = own_pairs.runpytest_inprocess("-m", "arena_judged and not recorded", "-k", "p2 or p3")
    result.assert_outcomes(passed=2, deselected=7)


def test_a_named_question_dataset_runs_under_strict_markers(own_pairs):
    data = own_pairs.path / "data" / "toy"
    data.mkdir(parents=True)
    (data / "questions.csv").write_text("question\nWhat is 2+2?\nName a colour.\nWhat is 2+2?\n")
    (own_pairs.path / "answers.csv").write_text("question,m1,m2,m3\nWhat is 2+2?,4,four,\nName a colour.,red,blue,"
                                                "green\n")
    result = own_pairs.runpytest_inprocess(
        "--llm-option", "arena.data=data", "--llm-option", "arena.dataset=toy", "--llm-option",
        "arena.answers=answers.csv", "--llm-option", "arena.models=m1,m2,m3", "-m", "arena_toy", "-v")
    result.assert_outcomes(passed=4, deselected=8)
    result.stdout.fnmatch_lines(["*test_battle?toy-q000-m1-vs-m2?*", "*arena dataset toy (*questions.csv): "
                                 "4 items; left out 3 (2 battle left out*, 1 repeated question)*"])
    files = own_pairs.path / "reports" / "latest" / "arena"
    assert (files / "results" / "default" / "models.csv").read_text().split() == ["model", "m1", "m2", "m3"]
    assert (files / "cache" / "toy" / "q_and_as.csv").exists()


def test_an_mrbench_file_of_your_own_is_read_and_named_by_its_stem(own_pairs):
    shipped = json.loads((EVAL.parents[1] / "fixtures" / "mrbench" / "MRBench_V1.json").read_text(encoding="utf-8"))
    (own_pairs.path / "tutors_v9.json").write_text(json.dumps(shipped[:4]), encoding="utf-8")
    result = own_pairs.runpytest_inprocess("--llm-option", "arena.mrbench=tutors_v9.json",
                                            "--llm-option", "arena.mrbench_pairs=2", "-m", "arena_tutors_v9", "-v")
    result.assert_outcomes(passed=9)  # 4 conversations x 2 judged pairs, and the human labels
    result.stdout.fnmatch_lines(["*test_tutor_battle?tutors_v9-c000-*"])
    section = summary(own_pairs)["arena"]
    # Only the file the selected cases came from: `-m` leaves the pairs file's (`judged`) cases out.
    assert {(r["dataset"], r["kept"]) for r in section["loading"]} == {("tutors_v9", 4)}
    validity = section["judge_validity"]["tutors_v9"]
    assert validity["dataset"] == "tutors_v9" and validity["battles"] == 8
    assert {"tutors_v9/judge", "tutors_v9/human"} <= set(section["leaderboards"])
    # Nothing is labelled with the shipped dataset's name (the annotation rule keeps its own name).
    assert "mrbench v1" not in json.dumps(section).lower() and "mrbench" not in section["judge_validity"]
    assert not [name for name in section["leaderboards"] if "mrbench" in name]
    assert section["judges"] == ["human:tutors_v9-annotations", "offline:heuristic"]
    assert "(`tutors_v9`)" in (own_pairs.path / "reports" / "latest" / "summary.md").read_text()


@pytest.mark.parametrize(("option", "message"), [
    ("arena.pairs=missing.jsonl", "*arena.pairs=missing.jsonl: missing.jsonl: no such file*"),
    ("arena.mrbench=empty.json", "*arena.mrbench=empty.json: empty.json: empty file*"),
])
def test_a_bad_data_file_stops_the_run_at_start_up_naming_the_option(own_pairs, option, message):
    (own_pairs.path / "empty.json").write_text("")
    result = own_pairs.runpytest_inprocess("--llm-option", option)
    assert result.ret == 4
    result.stderr.fnmatch_lines([message])


@pytest.mark.parametrize(("template", "line"), [
    (None, "*body template tutor/body.j2: no such template in the prompt directories*"),
    ('{"q": {{ last.content | tojson }}, "user": {{ student_id }}}',
     "*body template tutor/body.j2: unknown variable(s) student_id; a body template sees messages (*"),
], ids=["missing", "unknown-variable"])
def test_an_http_models_body_template_is_checked_at_start_up_naming_the_model_entry(own_pairs, template, line):
    (own_pairs.path / "prompts" / "tutor").mkdir(parents=True)
    if template is not None:
        (own_pairs.path / "prompts" / "tutor" / "body.j2").write_text(template)
    with FakeOpenAI() as server:
        entry = f"tutor=http:{server.origin}/chat;body=tutor/body.j2"
        result = own_pairs.runpytest_inprocess("--llm-option", f"arena.models={entry},offline:", "-o",
                                               "llm_prompts=prompts")
        assert server.requests == []  # stopped before any call, the models' answers included
    assert result.ret == 4, result.stdout.str() + result.stderr.str()
    result.stderr.fnmatch_lines([f"ERROR: --llm-option arena.models entry {entry}: {line[1:]}"])
