"""Pairwise items a user brings: keyed by id, empty answers counted, both orders kept."""

from __future__ import annotations

import json

import pytest

from llmjury.errors import DatasetError
from llmjury.families.arena import pairs
from llmjury.families.arena.agreement import correct_both_orders
from llmjury.families.arena.importers import by_judge, by_judge_orders, mtbench_judgements
from llmjury.families.arena.recorded import pair_verdicts
from llmjury.families.arena.report import aggregate

ROWS = [
    {"id": "p1", "prompt": "Same prompt?", "answer_a": "one", "answer_b": "two", "label": "a",
     "verdict_ab": "a", "verdict_ba": "a"},
    {"id": "p2", "prompt": "Same prompt?", "answer_a": "three", "answer_b": "four", "label": "b",
     "verdict_ab": "a", "verdict_ba": "b"},
    {"id": "p3", "prompt": "Q3", "answer_a": "x", "answer_b": "", "label": "a"},
    {"id": "p1", "prompt": "Q again", "answer_a": "x", "answer_b": "y"},
]


def write(tmp_path, rows, name="mine.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_items_with_a_repeated_prompt_stay_apart_and_left_out_items_are_counted(tmp_path):
    items, report = pairs.load(write(tmp_path, ROWS), "mine")
    assert [i.id for i in items] == ["p1", "p2"] and items[0].prompt == items[1].prompt
    assert report.kept == 2 and report.dropped == {"empty answer": 1, "repeated id (first kept)": 1}
    assert [i.case_id("mine") for i in items] == ["mine-p1", "mine-p2"]


def test_csv_items_with_other_spellings_and_no_ids(tmp_path):
    (tmp_path / "set.csv").write_text("question,response_a,response_b,system_a,system_b,preference\n"
                                      "Q,x,y,m1,m2,tie\nQ,x,y,m1,m2,B\n")
    items, report = pairs.load(tmp_path / "set.csv", "set")
    assert [(i.id, i.model_a, i.label) for i in items] == [("0", "m1", "tie"), ("1", "m1", "model_b")]
    assert report.dropped == {}


@pytest.mark.parametrize(("row", "message"), [
    ({"prompt": "Q", "answer_a": "x"}, r"mine\.jsonl \[item 0\]: missing field\(s\) \['answer_b'\]"),
    ({"prompt": "Q", "answer_a": "x", "answer_b": "y", "label": "draw"}, r"\[item 0\]: label 'draw' is not one"),
])
def test_bad_items_name_the_file_item_and_cause(tmp_path, row, message):
    with pytest.raises(DatasetError, match=message):
        pairs.load(write(tmp_path, [row]), "mine")


def test_correct_in_both_orders_and_swap_consistency_from_recorded_orders(tmp_path):
    items, _ = pairs.load(write(tmp_path, ROWS), "mine")
    section = aggregate(pair_verdicts(items, "mine"))
    judge = section.judge_validity.mine.recorded["recorded:recorded"]
    assert (judge.correct_both_orders.value, judge.correct_both_orders.n) == (0.5, 2)
    assert (judge.swap_consistency.value, judge.swap_consistency.n) == (0.5, 2)
    # p2's orders disagree, so its recorded verdict is a tie: one agreement of two with ties.
    assert (judge.agreement.with_ties.value, judge.agreement.without_ties.n) == (0.5, 1)
    assert section.judge_validity.mine.agreement is None  # no live judge ran


def test_mtbench_pair_judgements_keep_both_orders(tmp_path):
    human = [{"question_id": 81, "model_a": "x", "model_b": "y", "winner": "model_a", "judge": "expert_1", "turn": 1},
             {"question_id": 82, "model_a": "y", "model_b": "x", "winner": "model_b", "judge": "expert_1", "turn": 1}]
    gpt4 = [{"question_id": 81, "model_1": "y", "model_2": "x", "g1_winner": "model_2", "g2_winner": "model_2",
             "judge": ["gpt-4", "pair-v2"], "turn": 1},
            {"question_id": 82, "model_1": "x", "model_2": "y", "g1_winner": "model_1", "g2_winner": "model_2",
             "judge": ["gpt-4", "pair-v2"], "turn": 1}]
    rows = mtbench_judgements(write(tmp_path, human, "h.jsonl")) + mtbench_judgements(write(tmp_path, gpt4, "g.jsonl"))
    assert [(r["winner_ab"], r["winner_ba"]) for r in rows if "winner_ab" in r] == [("model_b", "model_b"),
                                                                                      ("model_a", "model_b")]
    orders = by_judge_orders(rows)["gpt-4-pair-v2"]
    # Keyed by the alphabetical pair (x, y): q81 had y shown first, so its orders swap names and winners.
    assert orders == {"81|x|y|": ("model_a", "model_a"), "82|x|y|": ("model_a", "model_b")}
    humans = by_judge(rows)["expert_1"]
    assert correct_both_orders(orders, humans).value == 0.5


def test_the_live_judges_swap_consistency_reads_the_same_in_the_section_and_against_humans():
    from llmjury.families.arena import FAMILY

    def pair(i, ab, ba, winner, consistent):
        common = {"family": "arena", "case_id": f"mine-{i}", "attributes": {
            "dataset": "mine", "question": "Q", "model_a": "s1", "model_b": "s2", "answer_a": "x", "answer_b": "y"}}
        return [FAMILY.typed({**common, "kind": "battle", "judge": {"provider": "offline:heuristic"},
                              "result": {"winner": winner, "consistent": consistent, "counted_runs": 2,
                                         "runs": [{"order": "ab", "winner": ab}, {"order": "ba", "winner": ba}]}}),
                FAMILY.typed({**common, "kind": "human_label", "judge": {"provider": "human:mine"},
                              "result": {"winner": "tie"}})]

    section = aggregate(pair(1, "tie", "tie (bothbad)", "tie", False) + pair(2, "tie", "tie", "tie", True))
    assert section.swap_consistency.value == section.judge_validity.mine.swap_consistency.value == 0.5
    assert section.judge_validity.mine.correct_both_orders.value == 1.0  # a tie of either kind matches a tie label


def test_a_file_with_no_usable_pair_is_an_error_naming_it(tmp_path):
    from llmjury.errors import DatasetError
    from llmjury.families.arena import pairs

    (tmp_path / "none.json").write_text("[]")
    with pytest.raises(DatasetError, match=r"none\.json: empty file|none\.json: no pair to judge"):
        pairs.load(tmp_path / "none.json", "none")
    (tmp_path / "blank.jsonl").write_text('{"id": 1, "prompt": "p", "answer_a": "", "answer_b": "b"}\n')
    with pytest.raises(DatasetError, match=r"blank\.jsonl: no pair to judge \(all 1 left out"):
        pairs.load(tmp_path / "blank.jsonl", "blank")
