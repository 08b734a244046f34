"""Battle files people bring: seed 002 outcome files, Chatbot Arena logs and MT-Bench pairwise
judgements.

Each becomes rows of `model_a`, `model_b`, `winner` (model_a / model_b / tie / tie (bothbad)),
plus the question and judge where the format has them. MT-Bench's GPT-4 pair judgements keep
both answer orders (`winner_ab`, `winner_ba`), so correct-in-both-orders can be computed; their
`winner` is the orders' common verdict, a tie when they disagree (FastChat's rule).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from llmjury.errors import DatasetError
from llmjury.families.arena.layout import SEED_WINNERS, records

MTBENCH_WINNERS = {"model_a": "model_a", "model_b": "model_b", "tie": "tie", "tie (bothbad)": "tie (bothbad)",
                   "tie (inconsistent)": "tie"}
PAIR_WINNERS = {"model_1": "model_a", "model_2": "model_b", "tie": "tie"}
FLIP = {"model_a": "model_b", "model_b": "model_a"}


def outcome_rows(path: Path) -> list[dict[str, Any]]:
    """Seed 002's battle_outcomes.csv / battle_records.csv, or Chatbot Arena battle logs: `model_a`,
    `model_b`, `winner` (the seed's `tie(all bad)` read as `tie (bothbad)`); `question` (or
    `question_id`, `tstamp`), `judger`, `is_valid`, `answer_a`, `answer_b` kept when present. A row
    marked `is_valid` false keeps no winner."""
    rows = []
    for number, item in records(path):
        try:
            model_a, model_b, raw = str(item["model_a"]), str(item["model_b"]), item.get("winner")
        except KeyError as exc:
            raise DatasetError(str(path), number, f"missing field {exc}") from None
        valid = str(item.get("is_valid", "true")).strip().lower() not in ("false", "0", "no")
        text = "" if raw is None else str(raw).strip()
        if valid and text not in SEED_WINNERS:
            raise DatasetError(str(path), number, f"winner {text!r} is not one of {sorted(set(SEED_WINNERS))}")
        question = item.get("question", item.get("question_id", item.get("tstamp", number)))
        rows.append({"model_a": model_a, "model_b": model_b, "winner": SEED_WINNERS[text] if valid else None,
                     "valid": valid, "question": str(question), "judger": str(item.get("judger") or ""),
                     "answer_a": item.get("answer_a"), "answer_b": item.get("answer_b"),
                     "tstamp": str(item.get("tstamp") or "")})
    return rows


def chatbot_arena(path: Path) -> list[dict[str, Any]]:
    """Chatbot Arena battle logs (the same columns as seed 002's outcomes)."""
    return outcome_rows(path)


def is_outcome(record: dict[str, Any]) -> bool:
    return {"model_a", "model_b", "winner"} <= set(record)


def is_mtbench(record: dict[str, Any]) -> bool:
    return "g1_winner" in record or ("question_id" in record and "turn" in record and "winner" in record)


def mtbench_judgements(path: Path, *, turn: int | None = 1) -> list[dict[str, Any]]:
    """MT-Bench pairwise judgements, either format FastChat writes:

    - human judgements: `question_id`, `model_a`, `model_b`, `winner`, `judge`, `turn`;
    - GPT-4 pair judgements: `question_id`, `model_1`, `model_2`, `g1_winner` (model_1 shown
      first), `g2_winner` (model_2 shown first, already named by model), `judge` (a list such as
      ["gpt-4", "pair-v2"]), `turn`.
    """
    rows = []
    for number, item in records(path):
        try:
            if turn is not None and int(item.get("turn", 1)) != turn:
                continue
            row: dict[str, Any] = {"question": str(item["question_id"]), "turn": int(item.get("turn", 1))}
            if "g1_winner" in item:
                ab, ba = (PAIR_WINNERS.get(str(item[k]), "tie") for k in ("g1_winner", "g2_winner"))
                judge = "-".join(item["judge"]) if isinstance(item["judge"], list) else str(item["judge"])
                row |= {"model_a": item["model_1"], "model_b": item["model_2"], "winner": ab if ab == ba else "tie",
                        "winner_ab": ab, "winner_ba": ba, "judge": judge}
            else:
                if item["winner"] not in MTBENCH_WINNERS:
                    raise DatasetError(str(path), number, f"winner {item['winner']!r} not understood")
                row |= {"model_a": item["model_a"], "model_b": item["model_b"],
                        "winner": MTBENCH_WINNERS[item["winner"]], "judge": str(item.get("judge", "human"))}
        except (KeyError, TypeError, ValueError) as exc:
            raise DatasetError(str(path), number, f"missing or bad field {exc}") from None
        rows.append(row)
    return rows


def canonical_row(row: dict[str, Any]) -> dict[str, Any]:
    """The row with its pair in alphabetical order and every winner flipped to match (FastChat's
    compute_agreement), so two judges' votes on the same pair compare."""
    if row["model_a"] <= row["model_b"]:
        return row
    flipped = {k: FLIP.get(row[k], row[k]) if isinstance(row.get(k), str) else row.get(k)
               for k in ("winner", "winner_ab", "winner_ba")}
    # Shown first is now the other model: the order names swap too.
    flipped["winner_ab"], flipped["winner_ba"] = flipped["winner_ba"], flipped["winner_ab"]
    return {**row, "model_a": row["model_b"], "model_b": row["model_a"],
            **{k: v for k, v in flipped.items() if k in row}}


def votes(rows: list[dict[str, Any]]) -> dict[str, str]:
    """Each vote keyed by question, the pair in alphabetical order and the judge."""
    keyed = {}
    for row in map(canonical_row, rows):
        keyed[f"{row['question']}|{row['model_a']}|{row['model_b']}|{row.get('judge', '')}"] = row["winner"]
    return keyed


def by_judge(rows: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Votes per judge, keyed without the judge so judges can be compared (last vote wins)."""
    out: dict[str, dict[str, str]] = {}
    for row in rows:
        key, winner = next(iter(votes([{**row, "judge": ""}]).items()))
        out.setdefault(row.get("judge", ""), {})[key] = winner
    return out


def by_judge_orders(rows: list[dict[str, Any]]) -> dict[str, dict[str, tuple[str, str]]]:
    """Per judge that recorded both orders: (winner with model_a first, with model_b first), keyed
    as `by_judge` keys votes, for correct-in-both-orders against another judge's votes."""
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for row in map(canonical_row, rows):
        if "winner_ab" in row:
            key = f"{row['question']}|{row['model_a']}|{row['model_b']}|"
            out.setdefault(row.get("judge", ""), {})[key] = (row["winner_ab"], row["winner_ba"])
    return out
