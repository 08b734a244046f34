"""Seed 002's files: names and columns kept exactly, so existing experiments load.

data/<dataset>/questions.csv                question (repeats allowed)
<cache>/<name>/q_and_as.csv                 question + one answer column per model
<cache>/<name>/battle_records.csv           as results' battle_records.csv
results/<experiment>/questions.csv          question (unique)
results/<experiment>/models.csv             model
results/<experiment>/battle_arrangement.csv question, model_a, model_b
results/<experiment>/battle_records.csv     RECORD_COLUMNS
results/<experiment>/battle_outcomes.csv    model_a, model_b, winner (valid rows only)
results/<experiment>/elo_rating.csv         model, elo_rating
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llmjury.datasets.files import read_records, read_text
from llmjury.errors import DatasetError
from llmjury.loading import LoadCounter

if TYPE_CHECKING:
    import pandas as pd

#: Seed 002's columns, then the judge's winner and response in each answer order (ours, after the seed's).
RECORD_COLUMNS = ["model_a", "model_b", "winner", "judger", "tstamp", "question", "answer_a", "answer_b",
                  "gpt_4_response", "gpt_4_score", "is_valid", "winner_ab", "winner_ba", "judge_response_ab",
                  "judge_response_ba"]
OUTCOME_COLUMNS = ["model_a", "model_b", "winner"]
#: The seed's spellings of an outcome (its docs write `tie(all bad)`) → ours.
SEED_WINNERS = {"model_a": "model_a", "model_b": "model_b", "tie": "tie", "tie(all bad)": "tie (bothbad)",
                "tie (all bad)": "tie (bothbad)", "tie (bothbad)": "tie (bothbad)", "tie(bothbad)": "tie (bothbad)"}
ARRANGEMENT_COLUMNS = ["question", "model_a", "model_b"]


def read_csv(path: Path, required: list[str]) -> pd.DataFrame:
    """A seed CSV with its required columns, or a DatasetError naming the file and what is missing.

    pandas reads it (answers span lines and hold every delimiter, which defeats sniffing), after
    `read_text` has named a missing, empty or non-UTF-8 file."""
    import pandas as pd  # imported when arena data is read, not when the plugin loads

    text = read_text(path)
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, na_values=[""])
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise DatasetError(str(path), None, f"cannot read CSV ({exc})") from exc
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise DatasetError(str(path), None, f"missing column(s) {missing}; has {list(frame.columns)}")
    return frame


def _rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The frame's rows keyed by column name (a CSV's column names are strings; pandas types them Hashable)."""
    return [{str(column): value for column, value in row.items()} for row in frame.to_dict("records")]


def records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """A seed-style CSV's rows as (item number, record), blanks as None; other files through
    `read_records` (JSON Lines or a JSON list)."""
    if path.suffix.lower() != ".csv":
        return read_records(path)
    frame = read_csv(path, [])
    frame = frame.astype(object).where(frame.notna(), None)
    return list(enumerate(_rows(frame)))


def question_rows(path: Path) -> list[str]:
    """Every non-blank question in file order, repeats kept (seed: data questions may repeat)."""
    frame = read_csv(path, ["question"])
    return [q for q in frame["question"].dropna() if q.strip()]


def questions(path: Path) -> list[str]:
    """Unique questions in file order (a run's questions are unique)."""
    return list(dict.fromkeys(question_rows(path)))


def answers(path: Path, counter: LoadCounter | None = None) -> dict[str, dict[str, str]]:
    """q_and_as.csv as {question: {model: answer}}, leaving out models that did not answer.

    The seed keys answers by question text, so rows repeating a question merge (later answers
    win); `counter` counts them."""
    frame = read_csv(path, ["question"])
    table: dict[str, dict[str, str]] = {}
    for row in _rows(frame):
        question = row.pop("question")
        if question in table and counter is not None:
            counter.drop("q_and_as row merged with an earlier row of the same question")
        table.setdefault(question, {}).update({m: a for m, a in row.items() if isinstance(a, str) and a.strip()})
    return table


def arrangement(path: Path) -> list[tuple[str, str, str]]:
    frame = read_csv(path, ARRANGEMENT_COLUMNS)
    return list(frame[ARRANGEMENT_COLUMNS].itertuples(index=False, name=None))

