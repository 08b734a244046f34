"""Battle files people bring: Chatbot Arena logs and MT-Bench pairwise judgements.

Both become rows of `model_a`, `model_b`, `winner` (model_a / model_b / tie / tie (bothbad)),
plus the question and judge where the format has them, ready for `ratings.Battles` and for
`report.agreement` between any two judges.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from llmjury.datasets.files import read_jsonl
from llmjury.errors import DatasetError
from llmjury.families.arena.ratings import WINNERS

MTBENCH_WINNERS = {"model_a": "model_a", "model_b": "model_b", "tie": "tie", "tie (bothbad)": "tie (bothbad)",
                   "tie (inconsistent)": "tie"}


def read_records(path: Path) -> list[dict[str, Any]]:
    """A JSON list or JSON Lines file of objects."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DatasetError(str(path), None, f"cannot read ({exc})") from exc
    if not text.lstrip().startswith("["):
        return [row for _, row in read_jsonl(path)]
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(str(path), None, f"not JSON (line {exc.lineno}: {exc.msg})") from exc


def chatbot_arena(path: Path) -> list[dict[str, str]]:
    """Chatbot Arena battle logs: `model_a`, `model_b`, `winner` in model_a / model_b / tie /
    tie (bothbad); `question_id` or `tstamp` kept when present."""
    rows = []
    for number, item in enumerate(read_records(path)):
        try:
            winner = item["winner"]
            row = {"model_a": item["model_a"], "model_b": item["model_b"], "winner": winner}
        except (KeyError, TypeError) as exc:
            raise DatasetError(str(path), number, f"missing field {exc}") from exc
        if winner not in WINNERS:
            raise DatasetError(str(path), number, f"winner {winner!r} is not one of {list(WINNERS)}")
        row["question"] = str(item.get("question_id", item.get("tstamp", number)))
        rows.append(row)
    return rows


def mtbench_judgements(path: Path, *, turn: int | None = 1) -> list[dict[str, str]]:
    """MT-Bench pairwise judgements, either format FastChat writes:

    - human judgements: `question_id`, `model_a`, `model_b`, `winner`, `judge`, `turn`;
    - GPT-4 pair judgements: `question_id`, `model_1`, `model_2`, `g1_winner`, `g2_winner`,
      `judge` (a list such as ["gpt-4", "pair-v2"]), `turn`. Both orders must agree,
      otherwise it is a tie (FastChat's rule); g*_winner values are model_1 / model_2 / tie.
    """
    rows = []
    for number, item in enumerate(read_records(path)):
        if turn is not None and int(item.get("turn", 1)) != turn:
            continue
        try:
            if "g1_winner" in item:
                a, b = item["model_1"], item["model_2"]
                g1, g2 = item["g1_winner"], item["g2_winner"]
                winner = {"model_1": "model_a", "model_2": "model_b"}.get(g1, "tie") if g1 == g2 else "tie"
                judge = "-".join(item["judge"]) if isinstance(item["judge"], list) else str(item["judge"])
            else:
                a, b = item["model_a"], item["model_b"]
                if item["winner"] not in MTBENCH_WINNERS:
                    raise DatasetError(str(path), number, f"winner {item['winner']!r} not understood")
                winner, judge = MTBENCH_WINNERS[item["winner"]], str(item.get("judge", "human"))
            rows.append({"question": str(item["question_id"]), "model_a": a, "model_b": b, "winner": winner,
                         "judge": judge})
        except (KeyError, TypeError) as exc:
            raise DatasetError(str(path), number, f"missing field {exc}") from exc
    return rows


def votes(rows: list[dict[str, str]]) -> dict[str, str]:
    """Key each vote by question and the model pair in alphabetical order, flipping the winner to
    match (FastChat's compute_agreement), so two judges' votes can be compared."""
    keyed = {}
    for row in rows:
        a, b, winner = row["model_a"], row["model_b"], row["winner"]
        if b < a:
            a, b = b, a
            winner = {"model_a": "model_b", "model_b": "model_a"}.get(winner, winner)
        keyed[f"{row['question']}|{a}|{b}|{row.get('judge', '')}"] = winner
    return keyed


def by_judge(rows: list[dict[str, str]]) -> dict[str, dict[str, str]]:
    """Votes per judge, keyed without the judge so judges can be compared (last vote wins)."""
    out: dict[str, dict[str, str]] = {}
    for row in rows:
        key, winner = next(iter(votes([{**row, "judge": ""}]).items()))
        out.setdefault(row.get("judge", ""), {})[key] = winner
    return out
