"""A Slack export as Slack writes it: threads joined across day files, broadcasts once, system
messages and bots out, people named, markup unwrapped, emoji-only and thanks-with-emoji replies
as filler, empty channels and files counted; an unknown layout names the layouts read."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from llmjury.errors import DatasetError
from llmjury.families.qa_quality.datasets import export_cases
from llmjury.families.qa_quality.export import answer_rule, load_export
from llmjury.families.qa_quality.slack_markup import unwrap

USERS = [{"id": "U1", "name": "kim.s", "real_name": "Kim Sora", "profile": {"display_name": "sora"}},
         {"id": "U2", "name": "lee", "real_name": "Lee Jun", "profile": {"display_name": "", "real_name": "Lee Jun"}},
         {"id": "U3", "name": "park", "profile": {}},
         {"id": "B1", "name": "deploybot", "is_bot": True, "profile": {}}]
CHANNELS = [{"id": "C1", "name": "python-help"}, {"id": "C2", "name": "general"}, {"id": "C3", "name": "quiet"}]


def write(root: Path, days: dict[str, list[dict]]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "users.json").write_text(json.dumps(USERS), encoding="utf-8")
    (root / "channels.json").write_text(json.dumps(CHANNELS), encoding="utf-8")
    for name, messages in days.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(messages, ensure_ascii=False), encoding="utf-8")
    return root


def message(ts: str, user: str, text: str, **fields: object) -> dict:
    return {"type": "message", "ts": ts, "user": user, "text": text, **fields}


QUESTION = message("1700000000.000100", "U1", "How do I read <https://docs.python.org/3/library/csv.html|the csv "
                   "docs> offline, <@U2>? See <#C2|general> &amp; &lt;this&gt;", thread_ts="1700000000.000100",
                   reply_count=5)
DAY_ONE = [
    message("1699999990.000001", "U3", "", subtype="channel_join"),
    QUESTION,
    message("1700000010.000200", "U2", "Use `python -m pydoc -b` and open the csv module.",
            thread_ts="1700000000.000100"),
    message("1700000020.000300", "U1", ":+1:", thread_ts="1700000000.000100"),
]
BROADCAST = message("1700090000.000400", "U3", "Also `help(csv)` in a REPL prints the same text.",
                    thread_ts="1700000000.000100", subtype="thread_broadcast")
DAY_TWO = [
    BROADCAST, BROADCAST,
    message("1700090010.000500", "U1", ":pray: 감사합니다", thread_ts="1700000000.000100"),
    message("1700090020.000600", "B1", "Build #41 passed", bot_id="B1", thread_ts="1700000000.000100"),
    message("1700090030.000700", "U2", "orphan reply", thread_ts="1690000000.000000"),
    message("1700090040.000800", "U1", "Has anyone seen this error?"),
]


@pytest.fixture
def export(tmp_path: Path) -> Path:
    return write(tmp_path / "acme-slack", {"python-help/2023-11-14.json": DAY_ONE,
                                           "python-help/2023-11-15.json": DAY_TWO,
                                           "general/2023-11-14.json": [], "general/2023-11-15.json": []})


def test_threads_join_across_day_files_with_broadcasts_once_and_bots_out(export):
    loaded = load_export(export)
    course = loaded.courses["python-help"]
    (pair,) = course.pairs
    assert pair.date == "2023-11-14" and pair.source_file == "python-help/2023-11-14.json"
    assert [a["user_name"] for a in pair.answers] == ["Lee Jun", "park"]
    assert [a["timestamp"] for a in pair.answers] == ["1700000010.000200", "1700090000.000400"]
    assert course.removed_answers == {"filler": 1, "short_thanks": 1, "bot_message": 1}
    assert course.removed == {"system_message": 1, "no_answer_left": 1, "reply_without_question": 1}
    assert (loaded.empty_channels, loaded.empty_files) == (["general", "quiet"], ["general/2023-11-14.json",
                                                                                  "general/2023-11-15.json"])


def test_people_are_named_and_markup_is_what_a_person_reads(export):
    (pair,) = load_export(export).courses["python-help"].pairs
    question = pair.question
    assert question["user_name"] == "sora"
    assert question["text"] == ("How do I read the csv docs (https://docs.python.org/3/library/csv.html) offline, "
                                "@Lee Jun? See #general & <this>")
    assert question["raw_text"] == QUESTION["text"]
    assert "generation" not in pair.raw()


def test_empty_channels_and_files_reach_the_load_report(export):
    cases, rules, report = export_cases(export)
    assert [c.id for c in cases] == ["qa-python-help-1700000000.000100"]
    assert report.dropped["empty channel"] == 2 and report.dropped["empty file"] == 2
    assert "2 empty channel" in report.line() and "2 empty file" in report.line()
    assert [r.course for r in rules] == ["python-help"]


@pytest.mark.parametrize(("wire", "read"), [
    ("<https://x.io>", "https://x.io"), ("<mailto:a@b.io|a@b.io>", "a@b.io"), ("<@U9>", "@U9"),
    ("<@U9|jo>", "@jo"), ("<#C1>", "#python-help"), ("<!here> hi", "@here hi"), ("<!subteam^S1|@tas>", "@tas"),
    ("<!date^1392734382^{date}|Feb 18>", "Feb 18"), ("a &lt;b&gt; &amp;&amp; c", "a <b> && c")])
def test_markup_forms(wire, read):
    assert unwrap(wire, {}, {"C1": "python-help"}) == read


@pytest.mark.parametrize(("text", "rule"), [
    (":+1:", "filler"), (":pray: 감사합니다", "short_thanks"), ("감사합니다 🙏🙏", "short_thanks"),
    ("👍", "filler"), (":thumbsup::skin-tone-3:", "filler"), ("@sora 넵 :ok_hand:", "acknowledgement"),
    ("정말 감사합니다!! :bow:", "short_thanks"), ("thanks :smile:", "short_thanks"), ("ㅋㅋ :joy:", "filler"),
    (":point_right: `pip install -U pandas` 하시면 됩니다", None)])
def test_emoji_replies_are_filler_or_thanks_by_their_words(text, rule):
    assert answer_rule(text) == rule


def test_a_folder_of_neither_layout_names_the_layouts_read(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "notes.json").write_text(json.dumps([{"title": "x"}]))
    with pytest.raises(DatasetError, match=r"notes\.json \[item 0\]: thread lacks 'question'.*Slack's export "
                                           r"\(channels\.json.*seed 001's processed threads"):
        load_export(tmp_path)
    with pytest.raises(DatasetError, match="no course folder of Slack JSON files found; layouts read"):
        load_export(tmp_path / "c")


def test_a_day_file_that_is_not_a_list_of_messages_is_named(tmp_path):
    write(tmp_path, {"dev/2024-01-02.json": [{"text": "no ts"}]})
    with pytest.raises(DatasetError, match=r"2024-01-02\.json \[item 0\]: a Slack message without 'ts'"):
        load_export(tmp_path)


def test_one_channels_folder_alone_and_date_named_processed_files_are_told_apart(export, tmp_path):
    alone = load_export(export / "python-help")
    assert list(alone.courses) == ["python-help"] and len(alone.courses["python-help"].pairs) == 1
    processed = tmp_path / "processed" / "level1"
    processed.mkdir(parents=True)
    thread = {"generation": "5", "date": "2024-10-15",
              "question": {"text": "How do I sort a dict by value?", "timestamp": "1.0"},
              "answers": [{"text": "sorted(d.items(), key=lambda kv: kv[1])"}]}
    (processed / "2024-10-15.json").write_text(json.dumps([thread]), encoding="utf-8")
    assert len(load_export(tmp_path / "processed").courses["level1"].pairs) == 1


def test_the_zip_slack_hands_out_is_read_as_its_folder(export, tmp_path):
    archive = tmp_path / "Acme Slack export Mar 1 2024 - Mar 8 2024.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in sorted(export.rglob("*")):
            if path.is_file():
                zipped.write(path, path.relative_to(export).as_posix())
    cases, _, report = export_cases(archive)
    assert [c.id for c in cases] == ["qa-python-help-1700000000.000100"]
    assert report.dataset == "acme_slack_export_mar_1_2024_-_mar_8_2024" and report.dropped["empty channel"] == 2


def test_private_channels_listed_in_groups_json_are_counted_too(export):
    (export / "groups.json").write_text(json.dumps([{"id": "G1", "name": "staff-only"}]), encoding="utf-8")
    assert load_export(export).empty_channels == ["general", "quiet", "staff-only"]


def test_a_mention_of_a_two_word_name_does_not_hide_the_thanks_after_it(tmp_path):
    root = write(tmp_path / "x", {"dev/2024-01-02.json": [
        message("1.0", "U1", "How do I undo a commit?"),
        message("1.1", "U2", "git reset --soft HEAD~1 keeps the changes staged.", thread_ts="1.0"),
        message("1.2", "U1", "<@U2> 감사합니다 :pray:", thread_ts="1.0")]})
    course = load_export(root).courses["dev"]
    assert course.removed_answers == {"short_thanks": 1}  # U2 is "Lee Jun": "@Lee Jun 감사합니다" reads as thanks
