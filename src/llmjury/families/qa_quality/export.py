"""Slack Q&A exports → filtered Q&A pairs, merged by course (seed 001, stage 1).

An export is a folder of courses, each holding JSON files of threads
`{generation, date, question: {text, user, timestamp, ...}, answers: [...]}`. System messages go
first; then named rules drop what is not a Q&A pair, and every removal is counted by rule. A thread
seen twice in a course (same generation and question timestamp) is counted as `duplicate` and kept once.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmjury.datasets.files import read_json
from llmjury.errors import DatasetError

SYSTEM_SUBTYPES = frozenset({"channel_join", "channel_leave", "pinned_item", "unpinned_item", "channel_topic",
                             "channel_purpose", "channel_name", "bot_message", "group_join", "group_leave"})
FILLER = re.compile(r"^\s*(?:[ㅋㅎㅠㅜ]+|lol+|haha+|[\W_]+)\s*$", re.IGNORECASE)
ACKNOWLEDGEMENT = re.compile(r"^\s*(?:넵|네|넹|옙|예|ok(?:ay)?|확인(?:했습니다|요)?|알겠습니다|got it|np|저요)[!.~ ]*$",
                             re.IGNORECASE)
ANNOUNCEMENT = re.compile(r"\[?공지\]?|모집|announcement|recruit|스터디원|hiring", re.IGNORECASE)
THANKS = re.compile(r"^\s*(?:감사합니다|고맙습니다|감사해요|thanks?(?: you)?|thx|ty)\b.{0,30}$", re.IGNORECASE)


@dataclass
class QAPair:
    course: str
    source_file: str
    generation: str
    date: str
    question: dict[str, Any]
    answers: list[dict[str, Any]]

    @property
    def id(self) -> str:
        return str(self.question.get("timestamp"))

    def raw(self) -> dict[str, Any]:
        """The pair as the scored output keeps it (seed section 9)."""
        return {"generation": self.generation, "date": self.date, "question": self.question, "answers": self.answers}


@dataclass
class Filtered:
    pairs: list[QAPair]
    removed: Counter[str] = field(default_factory=Counter)
    removed_answers: Counter[str] = field(default_factory=Counter)


def is_system(message: dict[str, Any]) -> bool:
    return message.get("subtype") in SYSTEM_SUBTYPES


def answer_rule(text: str) -> str | None:
    """Which rule drops an answer, if any."""
    if not text.strip():
        return "empty"
    if FILLER.match(text):
        return "filler"
    if ACKNOWLEDGEMENT.match(text):
        return "acknowledgement"
    if THANKS.match(text):
        return "short_thanks"
    return None


def question_rule(text: str) -> str | None:
    """Which rule drops a whole thread by its question, if any."""
    if not text.strip():
        return "empty"
    if ANNOUNCEMENT.search(text):
        return "announcement_or_recruiting"
    if THANKS.match(text) or ACKNOWLEDGEMENT.match(text):
        return "short_thanks"
    return None


def load_course(folder: Path) -> list[QAPair]:
    """A course folder's threads, in file order."""
    pairs = []
    for path in sorted(folder.glob("*.json")):
        threads = read_json(path)
        if not isinstance(threads, list):
            raise DatasetError(str(path), None, "expected a list of threads")
        for number, thread in enumerate(threads):
            try:
                question, answers = thread["question"], list(thread.get("answers", []))
                question["text"], question["timestamp"]
            except (KeyError, TypeError) as exc:
                raise DatasetError(str(path), number, f"thread lacks {exc}") from exc
            pairs.append(QAPair(course=folder.name, source_file=path.name, generation=str(thread.get("generation", "")),
                                date=str(thread.get("date", "")), question=question, answers=answers))
    return pairs


def load_export(root: Path) -> dict[str, Filtered]:
    """Every course of an export, system messages removed and rules applied, merged by course."""
    if not root.is_dir():
        raise DatasetError(str(root), None, "not a folder of course folders (set qa_quality.export=DIR)")
    courses = sorted(p for p in root.iterdir() if p.is_dir() and any(p.glob("*.json")))
    if not courses:
        raise DatasetError(str(root), None, "no course folder holding Slack JSON files (<course>/<file>.json)")
    return {folder.name: apply_rules(load_course(folder)) for folder in courses}


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
        rule = question_rule(pair.question["text"])
        if rule:
            result.removed[rule] += 1
            continue
        kept = []
        for answer in pair.answers:
            reason = "system_message" if is_system(answer) else answer_rule(answer.get("text", ""))
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
