"""The reading corpus (`tests/reading/corpus.jsonl`): judge answers in every answer shape, in
English, Korean and Italian, each with the judge's clear decision (`truth`) or null where there is
none (then `cause` says why it is unscored). Shared by `tests/test_reading_corpus.py` (which
asserts) and `bench/reading.py` (which prints the counts per shape).

Each row is read by its family's real reader. The outcomes: correct (the truth read), flipped
(another decision read), wrongly scored (a decision read where there is none), lost (unscored
although the decision is clear), correctly unscored.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from llmjury.errors import JudgeParseError
from llmjury.families.arena.judge import parse_pair, read_scores
from llmjury.families.qa_quality.evaluation import DIMENSIONS, QualityEvaluation
from llmjury.families.socratic.decision import parse_decision
from llmjury.judgement.geval_scoring import parse_score
from llmjury.judgement.judges import CHOICE_FIELD, RubricScore, parse_choice, schema_parser

CORPUS = Path(__file__).resolve().parent / "reading" / "corpus.jsonl"
#: Each reader of the corpus, by the shape of answer it reads.
SHAPES = {"socratic": "choice", "core_choice": "choice", "mtbench_pair": "choice", "arena_scores": "score pair",
          "geval": "rating", "structured": "json", "qa_quality": "json", "core_schema": "json"}
OUTCOMES = ("correct", "flipped", "wrongly_scored", "lost", "correctly_unscored")


def load(path: Path = CORPUS) -> list[dict[str, Any]]:
    """The corpus rows; a row that misses a field or names an unknown reader fails here, by line."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        row = json.loads(line)
        missing = {"reader", "language", "truth", "note", "text"} - set(row)
        if missing or row["reader"] not in SHAPES:
            raise ValueError(f"{path}, line {number}: missing {sorted(missing)} "
                             f"or unknown reader {row.get('reader')!r}")
        rows.append(row)
    return rows


def reader(row: dict[str, Any]) -> Callable[[str], Any]:
    """The family's own reader for the row's answer (G-Eval on the row's scale)."""
    name = row["reader"]
    if name == "geval":
        low, high = row.get("scale", (1, 5))
        return lambda text: parse_score(text, range(low, high + 1))
    return {
        "socratic": parse_decision, "core_choice": parse_choice, "mtbench_pair": parse_pair,
        "arena_scores": read_scores, "core_schema": CHOICE_FIELD.reader(parse_choice),
        "structured": lambda text: schema_parser(RubricScore)(text).score,
        "qa_quality": lambda text: [getattr(schema_parser(QualityEvaluation)(text), d).score for d in DIMENSIONS],
    }[name]


def read(row: dict[str, Any]) -> tuple[Any, str | None]:
    """(what the reader read or None, the unscored cause's kind or None)."""
    try:
        return reader(row)(row["text"]), None
    except JudgeParseError as exc:
        return None, exc.kind


def outcome(row: dict[str, Any], value: Any) -> str:
    """How a reading compares with the row's truth (one of OUTCOMES)."""
    truth = row["truth"]
    if value is None:
        return "lost" if truth is not None else "correctly_unscored"
    if truth is None:
        return "wrongly_scored"
    return "correct" if value == truth else "flipped"


def counts(rows: list[dict[str, Any]]) -> dict[str, Counter[str]]:
    """The outcomes per shape, every outcome present (zero where none)."""
    by_shape: dict[str, Counter[str]] = {}
    for row in rows:
        tally = by_shape.setdefault(SHAPES[row["reader"]], Counter({o: 0 for o in OUTCOMES}))
        tally[outcome(row, read(row)[0])] += 1
    return by_shape
