"""Rated items of your own: USR's per-annotator release of another corpus and the rated-items schema
(JSON Lines, JSON, CSV), named by the user, judged, and set beside the human ceiling on the same items."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from llmjury.datasets.dialogue_items import DUPLICATE_RATING, rated_items, topical_chat
from llmjury.errors import ConfigError, DatasetError
from llmjury.families.geval import FAMILY
from llmjury.families.geval.cases import geval_cases
from llmjury.families.geval.ceiling import ceiling_cases
from llmjury.families.geval.options import GEvalOptions
from llmjury.running.settings import OptionLine, Settings

REPO = Path(__file__).resolve().parents[3]
EVAL = REPO / "evals" / "test_geval.py"
USR_DIMENSIONS = ("Understandable", "Natural", "Maintains Context", "Engaging", "Uses Knowledge", "Overall")
SYSTEMS = ("KV-MemNN", "Seq2Seq", "Language Model", "Original Ground Truth")


def option_lines(values: dict[str, str]) -> list[OptionLine]:
    """Options as `--llm-option` lines, the form a family parses them from."""
    return [OptionLine(key, value, "--llm-option", f"{key}={value}") for key, value in values.items()]



def usr_corpus(contexts: int = 4) -> list[dict]:
    """A small USR-shaped release for a corpus the suite does not ship (PersonaChat's systems)."""
    data = []
    for c in range(contexts):
        responses = []
        for s, system in enumerate(SYSTEMS):
            quality = (c + 2 * s) % 5
            ratings = {dim: [min(high, max(low, round(low + (high - low) * (quality + k) / 6)))
                             for k in range(3)]
                       for dim, (low, high) in zip(USR_DIMENSIONS, [(0, 1), (1, 3), (1, 3), (1, 3), (0, 1), (1, 5)],
                                                   strict=True)}
            responses.append({"response": f"reply {s} to talk {c}: i like {'dogs' if s % 2 else 'hiking'} too .",
                              "model": system, **ratings})
        data.append({"context": f"hi , how are you ?\ni am fine , i have {c} dogs .\n", "fact": "",
                     "annotators": ["a1", "a2", "a3"], "responses": responses})
    return data


def write_usr(path: Path, contexts: int = 4) -> Path:
    path.write_text(json.dumps(usr_corpus(contexts)), encoding="utf-8")
    return path


def test_usr_release_of_another_corpus_loads_as_rated_items_with_every_annotator(tmp_path):
    items = rated_items(write_usr(tmp_path / "pc_usr_data.json"), "persona_chat")
    assert len(items) == 16 and {i.system_id for i in items} == set(SYSTEMS)
    first = items[0]
    assert (first.id, first.dataset, first.context_id) == ("persona_chat-00-000", "persona_chat", "persona_chat-00")
    assert first.turns == [("A", "hi , how are you ?"), ("B", "i am fine , i have 0 dogs .")]
    assert set(first.ratings["Overall"]) == {"a1", "a2", "a3"}  # the names the file gives
    assert first.human["Overall"] == pytest.approx(sum(first.ratings["Overall"].values()) / 3)


def test_a_usr_file_given_as_topical_chat_is_read_with_the_same_ids_as_unieval_form():
    usr = REPO / "fixtures" / "usr_sample" / "tc_usr_data.json"
    unieval = topical_chat(REPO / "fixtures" / "topical_chat_usr" / "topical_chat.json")
    from_usr = topical_chat(usr)
    assert [i.id for i in from_usr] == [i.id for i in unieval[: len(from_usr)]]
    assert [i.system_id for i in from_usr] == [i.system_id for i in unieval[: len(from_usr)]]
    assert from_usr[0].human["Overall"] == pytest.approx(unieval[0].human["overall"], abs=1e-9)


def test_rated_items_schema_in_jsonl_long_format_merges_annotators_and_counts_what_it_drops(tmp_path):
    rows = [{"id": "d1", "context": "A: hi\nB: hello", "response": "how are you?", "system": "bot-a",
             "annotator": "ann", "overall": 4, "coherence": 3},
            {"id": "d1", "context": "A: hi\nB: hello", "response": "how are you?", "system": "bot-a",
             "annotator": "bob", "overall": 5, "coherence": 2},
            {"id": "d1", "context": "A: hi\nB: hello", "response": "how are you?", "system": "bot-a",
             "annotator": "bob", "overall": 1, "coherence": 1},
            {"id": "d2", "context": "A: hi", "response": "  ", "annotator": "ann", "overall": 2}]
    path = tmp_path / "support_chats.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    from llmjury.loading import LoadCounter

    counter = LoadCounter()
    (item,) = rated_items(path, "support_chats", counter)
    assert item.id == "support_chats-d1" and item.ratings["overall"] == {"ann": 4.0, "bob": 5.0}
    assert item.human == {"overall": 4.5, "coherence": 2.5}
    assert dict(counter.dropped) == {DUPLICATE_RATING: 1, "empty responses": 1}  # one repeated row, 2 dimensions


def test_a_repeated_annotator_row_is_counted_once_whatever_it_rates(tmp_path):
    # Three rows of one item by `ann`, each rating three dimensions: two repeats, not six.
    row = {"id": "d1", "context": "A: hi", "response": "hello", "annotator": "ann", "overall": 4, "coherence": 3,
           "naturalness": 2}
    rows = [row, {**row, "overall": 1}, {**row, "overall": 2, "engagingness": 5}, {**row, "annotator": "bob"}]
    path = tmp_path / "repeats.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    from llmjury.loading import LoadCounter

    counter = LoadCounter()
    (item,) = rated_items(path, "repeats", counter)
    assert dict(counter.dropped) == {"repeated annotator rows (same item and annotator; the first rating kept)": 2}
    assert item.ratings["overall"] == {"ann": 4.0, "bob": 4.0}
    assert item.human["engagingness"] == 5.0  # a dimension the first row did not rate is still taken


def test_rated_items_schema_in_csv_with_means_and_a_duplicate(tmp_path):
    path = tmp_path / "faq_bot.csv"
    path.write_text("context,response,system,overall,naturalness\n"
                    "hello,hi there,v1,4,3\nhello,hi there,v1,4,3\nhow much?,ten euros,v2,3.5,2\n", encoding="utf-8")
    options = GEvalOptions(items=str(path))
    cases, (report,) = geval_cases(options, Settings())
    assert report.dataset == "faq_bot" and report.kept == 2 and report.dropped == {"duplicates": 1}
    assert sorted(c.criterion for c in cases) == ["naturalness", "naturalness", "overall", "overall"]
    assert cases[0].id == "faq_bot-00-000-response-overall" and "geval_faq_bot" in cases[0].marks()
    assert "system_v1" in cases[0].marks()


def test_a_dimension_geval_cannot_judge_is_an_error_listing_both_until_mapped(tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({"context": "hi", "response": "hello", "ratings": {"fluency": [3, 2]}}) + "\n",
                    encoding="utf-8")
    with pytest.raises(DatasetError, match=r"mine\.jsonl \[item mine-00-000\]: dimensions \['fluency'\] are no "
                                           r"G-Eval criterion; the file rates \['fluency'\], G-Eval judges "
                                           r"\['overall', 'naturalness'.*items_dimensions=fluency=<criterion>"):
        geval_cases(GEvalOptions(items=str(path)), Settings())
    cases, _ = geval_cases(GEvalOptions(items=str(path), items_dimensions="fluency=naturalness"), Settings())
    assert [c.criterion for c in cases] == ["naturalness"] and cases[0].item.human == {"naturalness": 2.5}


def test_a_criterion_the_file_does_not_rate_is_an_error_listing_what_it_rates(tmp_path):
    path = write_usr(tmp_path / "pc.json")
    bad = tmp_path / "partial.jsonl"
    bad.write_text(json.dumps({"context": "x", "response": "y", "coherence": 2}) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"partial\.jsonl: no human rating of \['overall'\] on every item; the file "
                                           r"rates \['coherence'\], G-Eval judges \['overall', 'naturalness'"):
        geval_cases(GEvalOptions(items=str(bad), items_criteria="overall"), Settings())
    cases, _ = geval_cases(GEvalOptions(items=str(path), items_criteria="overall"), Settings())
    assert len(cases) == 16


def test_options_are_checked_at_start_up():
    with pytest.raises(ConfigError, match=r"unknown dataset 'persona'; use topical_chat, dstc9; your own rated "
                                          r"items: geval.items=PATH"):
        FAMILY.parse_options(option_lines({"datasets": "persona"}))
    with pytest.raises(ConfigError, match=r"items_name=dstc9: 'dstc9' is a shipped dataset's name"):
        FAMILY.parse_options(option_lines({"items": "x.json", "items_name": "dstc9"}))
    with pytest.raises(ConfigError, match=r"'fluency': write DIMENSION=CRITERION"):
        FAMILY.parse_options(option_lines({"items": "x.json", "items_dimensions": "fluency"}))
    with pytest.raises(ConfigError, match=r"unknown option geval.item"):
        FAMILY.parse_options(option_lines({"item": "x.json"}))
    assert FAMILY.parse_options(option_lines({"items": "data/pc_usr.json"})).selected == ["pc_usr"]


def test_a_shipped_dataset_with_no_file_and_no_data_root_names_the_option():
    with pytest.raises(ConfigError, match=r"set --llm-option geval.topical_chat=PATH or llm_data"):
        geval_cases(GEvalOptions(datasets="topical_chat"), Settings())


def test_usr_annotations_of_another_corpus_are_refused_with_the_way_to_judge_them(tmp_path):
    options = GEvalOptions(datasets="topical_chat", usr_annotations=str(write_usr(tmp_path / "pc.json")))
    with pytest.raises(DatasetError, match=r"pc\.json: none of its items is a Topical-Chat item.*geval.items=PATH"):
        geval_cases(options, Settings(data_root=REPO / "fixtures"))


def test_the_ceiling_is_computed_on_the_judged_items_under_their_name(tmp_path):
    options = GEvalOptions(items=str(write_usr(tmp_path / "pc_usr_data.json")), items_name="persona_chat")
    cases = ceiling_cases(options, Settings())
    assert [c.id for c in cases][:2] == ["ceiling-persona_chat-overall", "ceiling-persona_chat-naturalness"]
    assert all("geval_persona_chat" in c.marks() for c in cases)
    shipped = ceiling_cases(GEvalOptions(), Settings(data_root=REPO / "fixtures"))
    assert {c.dataset for c in shipped} == {"topical_chat"}  # the USR sample's items are Topical-Chat's


INI = """
[pytest]
addopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider --strict-markers
llm_options =
    geval.items=pc_usr_data.json
    geval.items_name=persona_chat
    geval.deepeval_items=0
"""


@pytest.fixture
def own_items(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    shutil.copy(EVAL, pytester.path / "test_geval_suite.py")  # not this package's test_geval.py
    data = usr_corpus()
    first = data[0]["responses"]
    first += [dict(first[0]), dict(first[1], response=" ")]  # a duplicate and an empty response
    (pytester.path / "pc_usr_data.json").write_text(json.dumps(data), encoding="utf-8")
    return pytester


def summary(pytester: pytest.Pytester) -> dict:
    return json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text(encoding="utf-8"))


def test_a_usr_release_of_another_corpus_runs_end_to_end_under_its_own_name(own_items):
    # One process: the arena's own-data test loads a file of one's own across two workers.
    result = own_items.runpytest_inprocess("-n", "0", "-q")
    # Items x criteria and a ceiling per criterion; shipped recorded judges and deepeval have no case.
    result.assert_outcomes(passed=16 * 6 + 6, skipped=6)
    result.stdout.fnmatch_lines(["*geval dataset persona_chat (*pc_usr_data.json): 16 items; "
                                 "left out 2 (1 duplicates, 1 empty responses)*"])
    section = summary(own_items)["geval"]
    text = json.dumps(section)
    assert "topical_chat" not in text and "dstc9" not in text
    assert section["references"] == {}  # no Topical-Chat or DSTC9 table beside a PersonaChat-only run
    assert "Reference figures" not in (own_items.path / "reports" / "latest" / "summary.md").read_text()
    assert "offline:heuristic/persona_chat/response/overall" in section["meta"]
    ceiling = section["human_ceiling"]["persona_chat/response/overall"]
    assert ceiling["annotators"] == 3 and ceiling["items"] == 16
    validity = section["judge_validity"]["offline:heuristic/persona_chat/response/overall"]
    assert validity["human_ceiling_items"] == 16 and validity["human_ceiling_spearman"] == ceiling["pooled"]["spearman"]
    assert section["loading"][0]["dataset"] == "persona_chat"
    assert section["loading"][0]["dropped"] == {"duplicates": 1, "empty responses": 1}


def test_own_items_are_selected_by_data_markers_under_strict_markers(own_items):
    result = own_items.runpytest_inprocess("-m", "geval_persona_chat and system_kv-memnn and criterion_overall",
                                            "--collect-only", "-q", "-p", "no:xdist")
    result.stdout.fnmatch_lines(["*test_geval_item[[]persona_chat-00-000-response-overall[]]*"])
    assert result.stdout.str().count("test_geval_item[") == 4


@pytest.mark.parametrize(("option", "message"), [
    ("geval.items=nowhere.jsonl", "*--llm-option geval.items=nowhere.jsonl: nowhere.jsonl: no such file*"),
    ("geval.items_dimensions=fluency", "*geval.*'fluency': write DIMENSION=CRITERION*"),
    ("geval.datasets=persona", "*unknown dataset 'persona'; use topical_chat, dstc9; your own rated items: "
                               "geval.items=PATH*"),
])
def test_bad_rated_items_options_stop_the_run_at_start_up(pytester, option, message):
    pytester.makeini(INI.split("llm_options")[0])
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    result = pytester.runpytest_inprocess("--llm-option", option, "-p", "no:xdist")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
