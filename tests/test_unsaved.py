"""Answers the store never committed, kept on this machine and handed to the store by the next run
(llmjury.running.unsaved); the run-level fault tests are in tests/test_store_outage.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from llmjury.chat import Sample
from llmjury.errors import ConfigError
from llmjury.running.cache import SampleStore
from llmjury.running.unsaved import HANDING, AnswerRow, UnsavedAnswers, hand_over, store_folder
from llmjury.store.location import StoreLocation
from llmjury.store.schema import store_id
from llmjury.testing.postgres import fresh_schema


def row(key: str, text: str, run_id: str = "run-1") -> AnswerRow:
    request = json.dumps({"messages": [{"role": "user", "content": key}]})
    return (key, "openai:m", "judge.j2@abc", request, Sample(text=text).model_dump_json(), run_id, 1.5)


STORE = "0123456789abcdef0123456789abcdef"
DESCRIBED = "SQLite store /somewhere/cache.sqlite"


def test_kept_answers_are_handed_over_once_as_they_were_kept(tmp_path: Path):
    kept = UnsavedAnswers(tmp_path, STORE, DESCRIBED)
    for key in ("k1", "k2"):
        kept.keep(row(key, f"answer {key}"))
    kept.keep(row("k3", "answer k3", run_id="run-2"))
    assert kept.kept == 3 and len(list(kept.folder.glob("*.jsonl"))) == 2  # a file per run and process
    assert (kept.folder / "STORE").read_text() == f"{DESCRIBED} (store id {STORE})\n"  # for a reader
    given: list[list[AnswerRow]] = []
    assert hand_over(kept.folder, given.append) == 3
    assert sorted(r for rows in given for r in rows) == sorted([row("k1", "answer k1"), row("k2", "answer k2"),
                                                                row("k3", "answer k3", run_id="run-2")])
    assert not list(kept.folder.glob("*.jsonl"))
    assert hand_over(kept.folder, given.append) == 0 and len(given) == 2


def test_no_folder_is_nothing_to_hand_over(tmp_path: Path):
    assert hand_over(tmp_path / "missing", lambda rows: pytest.fail("nothing to store")) == 0


def test_answers_kept_for_one_store_are_not_handed_to_another(tmp_path: Path):
    UnsavedAnswers(tmp_path, "id-of-one", "a store").keep(row("k1", "one"))
    assert hand_over(store_folder(tmp_path, "id-of-another"), lambda rows: pytest.fail("another store's answers")) == 0
    assert hand_over(store_folder(tmp_path, "id-of-one"), lambda rows: None) == 1


def test_a_file_another_live_process_hands_over_is_left_to_it_and_waited_for(tmp_path: Path):
    """Taken by a live process (the test's parent): not taken again, and this process starts only once
    that file is gone (its answers are in the store)."""
    handing = tmp_path / f"run-1-7.jsonl.{os.getppid()}{HANDING}"
    handing.write_text(json.dumps({"key": "k"}) + "\n")  # not read: another process has it
    waits: list[float] = []

    def wait(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 3:
            handing.unlink()  # the other process has committed its answers

    assert hand_over(tmp_path, lambda rows: pytest.fail("not this process's file"), wait) == 0
    assert len(waits) == 3


def test_a_file_whose_handing_process_died_is_taken_again(tmp_path: Path):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    kept = UnsavedAnswers(tmp_path, STORE, DESCRIBED)
    kept.keep(row("k1", "one"))
    abandoned = kept.folder / f"run-1-7.jsonl.{gone.stdout.strip()}{HANDING}"
    kept.path("run-1").rename(abandoned)
    given: list[list[AnswerRow]] = []
    assert hand_over(kept.folder, given.append) == 1 and given == [[row("k1", "one")]]
    assert not list(kept.folder.glob("*.jsonl*"))


@pytest.mark.parametrize(("line", "why"), [
    ('{"key": "k2", "sample": {"text": "two"}}', "no 'provider' field"),
    ("[1, 2]", "not a JSON object"),
    ("{oops", "not JSON at character 2: expecting property name enclosed in double quotes"),
    ('{"key": "a\tb"}', "not JSON at character 11: invalid control character"),
    ("SAMPLE 42", "its request, sample or time is not what a run writes"),
    ('SAMPLE "{\\"foo\\": 1}"', "its request, sample or time is not what a run writes"),
])
def test_a_line_that_is_not_an_answer_names_the_file_and_line_and_keeps_the_file(tmp_path: Path, line: str,
                                                                                   why: str):
    kept = UnsavedAnswers(tmp_path, STORE, DESCRIBED)
    kept.keep(row("k1", "one"))
    if line.startswith("SAMPLE "):  # a line as a run writes it, with a sample that is not one
        entry = json.loads(kept.path("run-1").read_text())
        entry["sample"] = json.loads(line.removeprefix("SAMPLE "))
        line = json.dumps(entry)
    with kept.path("run-1").open("a") as out:
        out.write(line + "\n")
    with pytest.raises(ConfigError, match=rf"{kept.path('run-1').name}:2: not an answer an earlier run kept "
                                          rf"\({re.escape(why)}"):
        hand_over(kept.folder, lambda rows: pytest.fail("nothing stored from a bad file"))
    assert sorted(kept.folder.iterdir()) == [kept.folder / "STORE", kept.path("run-1")]  # still there, as it was


def test_a_last_line_cut_short_is_an_answer_never_kept(tmp_path: Path):
    """Its process died writing it: the lines before it are handed over, and it is dropped."""
    kept = UnsavedAnswers(tmp_path, STORE, DESCRIBED)
    kept.keep(row("k1", "one"))
    kept.keep(row("k2", "two"))
    text = kept.path("run-1").read_text()
    kept.path("run-1").write_text(text[:-20])
    given: list[list[AnswerRow]] = []
    assert hand_over(kept.folder, given.append) == 1 and given == [[row("k1", "one")]]


def test_a_store_opened_after_a_failed_write_holds_the_answer_and_keeps_a_newer_one(tmp_path: Path):
    location, unsaved = StoreLocation("sqlite", tmp_path / "cache.sqlite"), tmp_path / "unsaved"
    first = SampleStore(location)
    first.put("k2", "openai:m", "judge.j2@abc", "{}", Sample(text="newer"), "run-2").result()
    first.close()
    db = location.open()
    identity = store_id(db)
    db.close()
    UnsavedAnswers(unsaved, identity, "the store").keep(row("k1", "kept from the stopped run"))
    UnsavedAnswers(unsaved, identity, "the store").keep(row("k2", "older than the store's"))
    store = SampleStore(location, unsaved=unsaved)
    try:
        assert store.recovered == 2
        assert store.get("k1") == Sample(text="kept from the stopped run")
        assert store.get("k2") == Sample(text="newer")
    finally:
        store.close()
    assert not list(unsaved.glob("*/*.jsonl"))


def test_a_file_its_live_writer_may_still_add_to_is_left_for_the_next_run(tmp_path: Path):
    """Another process of this machine (the test's parent here) whose run is still stopping."""
    kept = UnsavedAnswers(tmp_path, STORE, DESCRIBED)
    kept.keep(row("k1", "one"))
    kept.path("run-1").rename(kept.folder / f"run-1-{os.getppid()}.jsonl")
    assert hand_over(kept.folder, lambda rows: pytest.fail("a file still written to")) == 0
    assert (kept.folder / f"run-1-{os.getppid()}.jsonl").exists()


def test_a_hand_over_the_store_fails_leaves_the_file_for_the_next_try(tmp_path: Path):
    kept = UnsavedAnswers(tmp_path, STORE, DESCRIBED)
    kept.keep(row("k1", "one"))

    def store_away(rows: list[AnswerRow]) -> None:
        raise ConnectionError("the store is still away")

    with pytest.raises(ConnectionError):
        hand_over(kept.folder, store_away)
    given: list[list[AnswerRow]] = []
    assert hand_over(kept.folder, given.append) == 1 and given == [[row("k1", "one")]]


def test_a_file_that_is_not_one_stops_the_run_at_start_up_naming_it(pytester: pytest.Pytester):
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    kept = pytester.path / ".llmjury" / "unsaved" / "0123456789abcdef" / "run-1-7.jsonl"
    kept.parent.mkdir(parents=True)
    kept.write_text(json.dumps(dict(zip(("key", "provider"), row("k1", "one"), strict=False))) + "\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {kept}:1: not an answer an earlier run kept (no 'task' field); "
                                 "move the file away to run without it"])
    assert kept.exists()


def test_every_store_has_an_id_of_its_own_the_same_from_any_connection(postgres_dsn, tmp_path: Path):
    """What keeps one store's answers from another's: a PostgreSQL schema, or a SQLite file, each
    with the id its tables were made with (not its host's name, which a fail-over changes)."""
    locations = [StoreLocation("postgres", tmp_path / "cache.sqlite", fresh_schema(postgres_dsn)) for _ in range(2)]
    locations += [StoreLocation("sqlite", tmp_path / name) for name in ("a.sqlite", "b.sqlite")]
    ids = []
    for location in locations:
        store = SampleStore(location)  # makes the tables, as a run does
        store.close()
        first, again = location.open(), location.open()
        try:
            assert store_id(first) == store_id(again)
            ids.append(store_id(first))
        finally:
            first.close()
            again.close()
    assert len(set(ids)) == 4, ids
