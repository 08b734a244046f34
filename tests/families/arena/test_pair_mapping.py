"""Pairwise items in the common `prompt, response 1, response 2, label` shape with 0/1/2 labels,
read through a declared column and label mapping, with a judge's verdicts in one file per order;
numeric labels without a mapping are refused, never guessed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from llmjury.errors import ConfigError, DatasetError
from llmjury.families.arena import FAMILY, pairs
from llmjury.families.arena.options import ArenaOptions
from llmjury.families.arena.recorded import pair_verdicts
from llmjury.families.arena.report import aggregate
from llmjury.running.settings import OptionLine

EVAL = Path(__file__).resolve().parents[3] / "evals" / "test_arena.py"
# Label 0 is the first response, 1 the second, 2 a tie.
ITEMS = ("prompt,response 1,response 2,label\n"
         "Name a prime.,7,8,0\n"
         "Capital of France?,Lyon,Paris,1\n"
         "2+2?,4,four,2\n"
         "Colour of the sky?,green,blue,1\n")
# The judge's verdicts, one row per item in file order: with response 1 shown first...
AB = "label\n0\n1\n0\n1\n"
# ...and with response 2 shown first, labels naming the answers as shown (0 = the first shown = response 2).
BA = "label\n1\n0\n1\n1\n"
COLUMNS = "prompt,response 1,response 2,label"
LABELS = "0:a,1:b,2:tie"


def option_lines(values: dict[str, str]) -> list[OptionLine]:
    """Options as `--llm-option` lines, the form a family parses them from."""
    return [OptionLine(key, value, "--llm-option", f"{key}={value}") for key, value in values.items()]



def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def mapped(tmp_path: Path, **extra: str) -> ArenaOptions:
    given = {"pairs": str(write(tmp_path, "prefs.csv", ITEMS)), "pairs_columns": COLUMNS, "pairs_labels": LABELS}
    return ArenaOptions.model_validate(given | extra)


def test_the_common_shape_loads_through_the_declared_mapping(tmp_path):
    options = mapped(tmp_path)
    items, report = pairs.load(Path(options.pairs or ""), "prefs", options)
    assert report.kept == 4
    assert [(i.prompt, i.answer_a, i.answer_b) for i in items][:2] == [("Name a prime.", "7", "8"),
                                                                       ("Capital of France?", "Lyon", "Paris")]
    assert [i.label for i in items] == ["model_a", "model_b", "tie", "model_b"]


def test_verdicts_per_order_from_two_files_are_read_in_their_declared_frame(tmp_path):
    options = mapped(tmp_path, pairs_verdicts_ab=str(write(tmp_path, "ab.csv", AB)),
                     pairs_verdicts_ba=str(write(tmp_path, "ba.csv", BA)), pairs_ba_frame="as_shown")
    items, _ = pairs.load(Path(options.pairs or ""), "prefs", options)
    # ba's "1" is the second answer shown, the item's response 1 (A); its "0" is the item's B.
    assert [(i.verdict_ab, i.verdict_ba) for i in items] == [("model_a", "model_a"), ("model_b", "model_b"),
                                                             ("model_a", "model_a"), ("model_b", "model_a")]
    judge = aggregate(pair_verdicts(items, "prefs")).judge_validity.prefs.recorded["recorded:recorded"]
    assert (judge.swap_consistency.value, judge.swap_consistency.n) == (0.75, 4)
    assert judge.correct_both_orders.value == 0.5  # items 1 and 2; the tie label and the swap flip are wrong
    # The same file declared in the items' own frame reads the other way round.
    as_items = mapped(tmp_path, pairs_verdicts_ba=str(tmp_path / "ba.csv"), pairs_ba_frame="as_items")
    items, _ = pairs.load(Path(as_items.pairs or ""), "prefs", as_items)
    assert [i.verdict_ba for i in items] == ["model_b", "model_a", "model_b", "model_b"]


@pytest.mark.parametrize("labels", ["1\n1\n1\n", "1\n2\n1\n", "0\n1\n2\n"], ids=["all-1", "1-2", "0-1-2"])
def test_numeric_labels_without_a_mapping_are_refused_naming_the_file_and_the_option(tmp_path, labels):
    rows = "".join(f"Q{k},x{k},y{k},{label}\n" for k, label in enumerate(labels.split()))
    path = write(tmp_path, "ones.csv", "prompt,answer_a,answer_b,label\n" + rows)
    with pytest.raises(DatasetError, match=r"ones\.csv \[item 0\]: label '[01]' is a number, which could count the "
                                           r"answers from 0 or from 1; declare what each value means with "
                                           r"--llm-option arena\.pairs_labels=0:a,1:b,2:tie"):
        pairs.load(path, "ones")
    items, _ = pairs.load(path, "ones", ArenaOptions(pairs=str(path), pairs_labels="1:a,2:b,0:tie"))
    assert items[0].label == {"1": "model_a", "0": "tie"}[labels[0]]  # declared, so read


def test_a_value_the_mapping_does_not_declare_is_refused(tmp_path):
    options = mapped(tmp_path, pairs_labels="0:a,1:b")
    with pytest.raises(DatasetError, match=r"prefs\.csv \[item 2\]: label '2' is none of the values "
                                           r"arena\.pairs_labels declares \(0, 1\)"):
        pairs.load(Path(options.pairs or ""), "prefs", options)


def test_verdict_files_that_cannot_be_joined_or_repeat_an_order_are_refused(tmp_path):
    short = mapped(tmp_path, pairs_verdicts_ab=str(write(tmp_path, "short.csv", "label\n0\n1\n")))
    with pytest.raises(DatasetError, match=r"short\.csv: 2 rows for 4 items of prefs\.csv: rows without an id "
                                           r"join items by position"):
        pairs.load(Path(short.pairs or ""), "prefs", short)
    stray = mapped(tmp_path, pairs_verdicts_ab=str(write(tmp_path, "ids.jsonl", '{"id": "q9", "label": 0}\n')))
    with pytest.raises(DatasetError, match=r"ids\.jsonl \[item q9\]: no item 'q9' in prefs\.csv, joined by id"):
        pairs.load(Path(stray.pairs or ""), "prefs", stray)
    inline = tmp_path / "inline.jsonl"
    inline.write_text(json.dumps({"prompt": "Q", "answer_a": "x", "answer_b": "y", "verdict_ab": "a"}) + "\n")
    both = ArenaOptions(pairs=str(inline), pairs_verdicts_ab=str(write(tmp_path, "one.csv", "verdict\nb\n")))
    with pytest.raises(DatasetError, match=r"inline\.jsonl \[item 0\]: verdict_ab is recorded here and in one\.csv"):
        pairs.load(inline, "inline", both)


@pytest.mark.parametrize(("values", "message"), [
    ({"pairs": "p.csv", "pairs_labels": "0:first"}, r"pairs_labels=0:first: '0:first': write VALUE:SIDE with SIDE a, b "
                                                   r"or tie"),
    ({"pairs": "p.csv", "pairs_labels": "1:a,2:a"}, r"declare a value for each answer, a and b"),
    ({"pairs": "p.csv", "pairs_columns": "prompt,response"}, r"name 3 or 4 columns"),
    ({"pairs": "p.csv", "pairs_verdicts_ba": "ba.csv"}, r"pairs_verdicts_ba=ba\.csv: declare how its labels name the "
                                                       r"answers with arena\.pairs_ba_frame=as_shown"),
])
def test_a_malformed_mapping_is_refused_when_the_options_are_read(values, message):
    with pytest.raises(ConfigError, match=message):
        FAMILY.parse_options(option_lines(values))


INI = """
[pytest]
addopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider --strict-markers
llm_options = arena.pairs=prefs.csv
"""


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    shutil.copy(EVAL, pytester.path / "test_arena_suite.py")
    (pytester.path / "prefs.csv").write_text(ITEMS, encoding="utf-8")
    (pytester.path / "ab.csv").write_text(AB, encoding="utf-8")
    (pytester.path / "ba.csv").write_text(BA, encoding="utf-8")
    return pytester


def test_a_run_without_the_mapping_stops_at_start_up_and_one_with_it_reads_every_order(suite):
    refused = suite.runpytest_inprocess("-p", "no:xdist", "--llm-option", f"arena.pairs_columns={COLUMNS}")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["ERROR: *prefs.csv ?item 0?: label '0' is a number*"
                                  "arena.pairs_labels=0:a,1:b,2:tie*"])
    ran = suite.runpytest_inprocess("-p", "no:xdist", "--llm-option", f"arena.pairs_columns={COLUMNS}",
                                    "--llm-option", f"arena.pairs_labels={LABELS}",
                                    "--llm-option", "arena.pairs_verdicts_ab=ab.csv",
                                    "--llm-option", "arena.pairs_verdicts_ba=ba.csv",
                                    "--llm-option", "arena.pairs_ba_frame=as_shown")
    ran.assert_outcomes(passed=5, skipped=5)
    summary = json.loads((suite.path / "reports" / "latest" / "summary.json").read_text(encoding="utf-8"))
    recorded = summary["arena"]["judge_validity"]["prefs"]["recorded"]["recorded:recorded"]
    assert recorded["swap_consistency"]["value"] == 0.75 and recorded["correct_both_orders"]["value"] == 0.5


@pytest.mark.parametrize(("option", "line"), [
    ("arena.pairs_verdicts_ab=nowhere.csv", "ERROR: --llm-option arena.pairs_verdicts_ab=nowhere.csv: nowhere.csv: "
                                            "no such file*"),
    ("arena.pairs_labels=0:first", "ERROR: --llm-option arena.pairs_labels=0:first: *'0:first': write VALUE:SIDE*"),
])
def test_a_missing_verdict_file_or_a_bad_mapping_is_refused_at_start_up_naming_the_option(suite, option, line):
    result = suite.runpytest_inprocess("-p", "no:xdist", "--llm-option", option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([line])


def test_the_replay_verb_reads_the_common_shape_through_the_same_mapping(tmp_path):
    path = write(tmp_path, "prefs.csv", ITEMS)
    with pytest.raises(DatasetError, match=r"not a recorded verdict file"):
        FAMILY.replay(path, ArenaOptions())  # no prompt/answer fields it knows, and no columns declared
    options = ArenaOptions(pairs_columns=COLUMNS, pairs_labels=LABELS,
                           pairs_verdicts_ab=str(write(tmp_path, "ab.csv", AB)))
    replayed = FAMILY.replay(path, options)
    labels = [v.result.winner for v in replayed.verdicts if v.kind == "human_label"]
    assert labels == ["model_a", "model_b", "tie", "model_b"]
    assert [v.result.ab for v in replayed.verdicts if v.kind == "recorded"] == ["model_a", "model_b", "model_a",
                                                                                "model_b"]
