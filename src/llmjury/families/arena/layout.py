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

from pathlib import Path
from typing import TYPE_CHECKING

from llmjury.errors import DatasetError

if TYPE_CHECKING:
    import pandas as pd

RECORD_COLUMNS = ["model_a", "model_b", "winner", "judger", "tstamp", "question", "answer_a", "answer_b",
                  "gpt_4_response", "gpt_4_score", "is_valid"]
OUTCOME_COLUMNS = ["model_a", "model_b", "winner"]
ARRANGEMENT_COLUMNS = ["question", "model_a", "model_b"]


def read_csv(path: Path, required: list[str]) -> pd.DataFrame:
    """A seed CSV with its required columns, or a DatasetError naming the file and what is missing."""
    import pandas as pd  # imported when arena data is read, not when the plugin loads

    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise DatasetError(str(path), None, f"cannot read CSV ({exc})") from exc
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise DatasetError(str(path), None, f"missing column(s) {missing}; has {list(frame.columns)}")
    return frame


def questions(path: Path) -> list[str]:
    """Unique questions in file order (seed: data questions may repeat, results' are unique)."""
    frame = read_csv(path, ["question"])
    return list(dict.fromkeys(q for q in frame["question"].dropna() if q.strip()))


def answers(path: Path) -> dict[str, dict[str, str]]:
    """q_and_as.csv as {question: {model: answer}}, leaving out models that did not answer."""
    frame = read_csv(path, ["question"])
    table: dict[str, dict[str, str]] = {}
    for row in frame.to_dict("records"):
        question = row.pop("question")
        table.setdefault(question, {}).update({m: a for m, a in row.items() if isinstance(a, str) and a.strip()})
    return table


def arrangement(path: Path) -> list[tuple[str, str, str]]:
    frame = read_csv(path, ARRANGEMENT_COLUMNS)
    return list(frame[ARRANGEMENT_COLUMNS].itertuples(index=False, name=None))


def write_csv(frame: pd.DataFrame, columns: list[str]) -> str:
    return frame.reindex(columns=columns).to_csv(index=False)
