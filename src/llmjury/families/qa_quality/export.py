"""Slack Q&A exports → filtered Q&A pairs, merged by course (seed 001, stage 1).

Two layouts are read, told apart by what the folder (or Slack's zip of it) holds:

- Slack's own export (`channels.json`, `users.json`, `<channel>/<YYYY-MM-DD>.json`): threads joined
  across day files, one course per channel (`slack_raw`);
- seed 001's processed files: a folder per course of JSON lists of threads
  `{generation, date, question: {text, user, timestamp, ...}, answers: [...]}`.

Markup is unwrapped for the judge (`slack_markup`). System messages go first (any `subtype` a
person does not write: joins, leaves, pins, topic changes, bot messages, ...; a person's
`thread_broadcast`, `file_share` and `me_message` stay), then bots (`is_bot`, a `bot_id`); then
named rules drop what is not a Q&A pair, and every removal is counted by rule. Filler is judged on
the words a reply says: emoji (`:+1:`, 👍), mentions and laughter alone are `filler`, thanks or an
acknowledgement with emoji around them (`:pray: 감사합니다`) are `short_thanks` / `acknowledgement`.
A thread seen twice in a course (same generation and question timestamp) is counted as `duplicate`
and kept once.
"""

from __future__ import annotations

import re
import tempfile
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmjury.datasets.files import read_json
from llmjury.errors import DatasetError
from llmjury.families.qa_quality.slack_markup import decorations_removed, unwrap
from llmjury.families.qa_quality.slack_raw import is_raw_export, read_raw_export
from llmjury.families.qa_quality.threads import QAPair

WIRE_MENTION = re.compile(r"<[@#!][^<>\n]*>")
PERSON_SUBTYPES = frozenset({"thread_broadcast", "reply_broadcast", "file_share", "me_message"})
LAYOUTS = ("Slack's export (channels.json, users.json, <channel>/<YYYY-MM-DD>.json lists of messages with 'ts')",
           "seed 001's processed threads (<course>/<file>.json lists of {question: {text, timestamp}, answers})")
FILLER = re.compile(r"^\s*(?:[ㅋㅎㅠㅜ]+|lol+|haha+|[\W_]+)\s*$", re.IGNORECASE)
ACKNOWLEDGEMENT = re.compile(r"^\s*(?:넵|네|넹|옙|예|ok(?:ay)?|확인(?:했습니다|요)?|알겠습니다|got it|np|저요)[!.~ ]*$",
                             re.IGNORECASE)
ANNOUNCEMENT = re.compile(r"\[?공지\]?|모집|announcement|recruit|스터디원|hiring", re.IGNORECASE)
THANKS = re.compile(r"^\s*(?:(?:정말|진짜|너무|넘|항상|늘|대단히|많이)\s*)*(?:감사합니다|감사드립니다|감사해요|감사"
                    r"|고맙습니다|고마워요|thanks?(?: you)?|thank u|thx|tysm|ty)"
                    r"\b.{0,30}$", re.IGNORECASE)


@dataclass
class Filtered:
    pairs: list[QAPair]
    removed: Counter[str] = field(default_factory=Counter)
    removed_answers: Counter[str] = field(default_factory=Counter)


@dataclass
class Export:
    """An export's courses as filtered, and the channels and day files that held no message."""

    courses: dict[str, Filtered]
    empty_channels: list[str] = field(default_factory=list)
    empty_files: list[str] = field(default_factory=list)


def is_system(message: dict[str, Any]) -> bool:
    """A message Slack wrote about the channel, not one a person wrote in it."""
    subtype = message.get("subtype")
    return bool(subtype) and subtype not in PERSON_SUBTYPES


def is_bot(message: dict[str, Any]) -> bool:
    return bool(message.get("is_bot") or message.get("bot_id"))


def rule_text(message: dict[str, Any]) -> str:
    """The text the rules read: Slack's wire text with its mentions taken out before names are put
    in (a name of two words, `@Lee Jun 감사합니다`, would hide the thanks), links and escapes unwrapped."""
    return unwrap(WIRE_MENTION.sub(" ", str(message.get("raw_text", message.get("text", "")))))


def answer_rule(text: str) -> str | None:
    """Which rule drops an answer, if any (read on its words: emoji and mentions aside)."""
    if not text.strip():
        return "empty"
    words = decorations_removed(text)
    if not words or FILLER.match(words):
        return "filler"
    if ACKNOWLEDGEMENT.match(words):
        return "acknowledgement"
    if THANKS.match(words):
        return "short_thanks"
    return None


def question_rule(text: str) -> str | None:
    """Which rule drops a whole thread by its question, if any."""
    if not text.strip():
        return "empty"
    if ANNOUNCEMENT.search(text):
        return "announcement_or_recruiting"
    words = decorations_removed(text)
    if not words or FILLER.match(words):
        return "filler"
    if THANKS.match(words) or ACKNOWLEDGEMENT.match(words):
        return "short_thanks"
    return None


def load_course(folder: Path) -> tuple[list[QAPair], list[str]]:
    """A processed course folder's threads, in file order, markup unwrapped; and its files holding none."""
    pairs: list[QAPair] = []
    empty: list[str] = []
    for path in sorted(folder.glob("*.json")):
        threads = read_json(path)
        if threads == []:
            empty.append(f"{folder.name}/{path.name}")
        if not isinstance(threads, list):
            raise DatasetError(str(path), None, f"expected a list of threads; layouts read: {'; '.join(LAYOUTS)}")
        for number, thread in enumerate(threads):
            try:
                question, answers = thread["question"], list(thread.get("answers", []))
                question["text"], question["timestamp"]
            except (KeyError, TypeError) as exc:
                raise DatasetError(str(path), number, f"thread lacks {exc}: neither of the layouts read "
                                                      f"({'; '.join(LAYOUTS)})") from exc
            pairs.append(QAPair(course=folder.name, source_file=path.name, generation=str(thread.get("generation", "")),
                                date=str(thread.get("date", "")), question=question, answers=answers))
    messages = [m for p in pairs for m in [p.question, *p.answers]]
    names = {str(m["user"]): str(m["user_name"]) for m in messages if m.get("user") and m.get("user_name")}
    for message in messages:
        if isinstance(message.get("text"), str):
            text = unwrap(message["text"], names)
            if text != message["text"]:
                message["raw_text"], message["text"] = message["text"], text
    return pairs, empty


def load_export(root: Path) -> Export:
    """Every course of an export (either layout, a folder or Slack's zip of it), system messages and bots
    removed and rules applied."""
    if root.is_file() and zipfile.is_zipfile(root):
        with tempfile.TemporaryDirectory(prefix="slack-export-") as unzipped:
            with zipfile.ZipFile(root) as archive:
                archive.extractall(unzipped)  # zipfile keeps every member inside the folder
            return load_export(_top(Path(unzipped)))
    if not root.is_dir():
        raise DatasetError(str(root), None, "not a folder: a Slack export is a folder (set qa_quality.export=DIR); "
                                            f"layouts read: {'; '.join(LAYOUTS)}")
    courses: dict[str, Filtered] = {}
    if is_raw_export(root):
        raw = read_raw_export(root)
        for channel, threads in raw.threads.items():
            courses[channel] = apply_rules(threads)
            if raw.orphan_threads.get(channel):
                courses[channel].removed["reply_without_question"] += raw.orphan_threads[channel]
        return Export(courses, raw.empty_channels, raw.empty_files)
    folders = sorted(p for p in root.iterdir() if p.is_dir() and any(p.glob("*.json")))
    if not folders:
        raise DatasetError(str(root), None, f"no course folder of Slack JSON files found; "
                                            f"layouts read: {'; '.join(LAYOUTS)}")
    empty_files: list[str] = []
    for folder in folders:
        pairs, empty = load_course(folder)
        courses[folder.name] = apply_rules(pairs)
        empty_files += empty
    return Export(courses, [name for name, course in courses.items() if not course.pairs and not course.removed],
                  empty_files)


def _top(folder: Path) -> Path:
    """The export inside an unzipped folder: the folder itself, or the one folder a zip wrapped it in."""
    entries = [p for p in folder.iterdir() if not p.name.startswith(("__MACOSX", "."))]
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else folder


def apply_rules(pairs: list[QAPair]) -> Filtered:
    """The pairs worth grading, and how many threads and answers each rule removed."""
    result = Filtered(pairs=[])
    seen: set[tuple[str, str]] = set()
    for pair in pairs:
        if (pair.generation, pair.id) in seen:
            result.removed["duplicate"] += 1
            continue
        seen.add((pair.generation, pair.id))
        if is_system(pair.question):
            result.removed["system_message"] += 1
            continue
        if is_bot(pair.question):
            result.removed["bot_message"] += 1
            continue
        rule = question_rule(rule_text(pair.question))
        if rule:
            result.removed[rule] += 1
            continue
        kept = []
        for answer in pair.answers:
            reason = "system_message" if is_system(answer) else "bot_message" if is_bot(answer) \
                else answer_rule(rule_text(answer))
            if reason:
                result.removed_answers[reason] += 1
            else:
                kept.append(answer)
        if not kept:
            result.removed["no_answer_left"] += 1
            continue
        pair.answers = kept
        result.pairs.append(pair)
    return result
