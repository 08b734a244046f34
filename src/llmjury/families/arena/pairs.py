"""Pairwise items a user brings: a prompt, two answers, and optionally the two systems' names, a
human label and a judge's verdicts recorded in each answer order (JSON Lines, a JSON list or CSV).

Fields (other spellings accepted in brackets):
- `id` (`item_id`): the item's key; default its position in the file. Items are
  keyed by it, never by the prompt text, so pairs repeating a prompt stay apart;
- `prompt` (`question`, `instruction`, `input`), `answer_a` (`response_a`, `output_1`),
  `answer_b` (`response_b`, `output_2`): required;
- `model_a`, `model_b` (`system_a`, `system_b`, `model_1`, `model_2`): the systems, default `a` and `b`;
- `label` (`human`, `preference`): the human preference, `a`, `b` or `tie` (`model_a`, `model_b`,
  `tie (bothbad)`, `1`, `2` also read);
- `verdict_ab`, `verdict_ba`: a judge's recorded verdict with answer_a shown first, and with
  answer_b shown first, each naming the answer it preferred (`a`, `b`, `tie`), as MT-Bench's
  `g1_winner` / `g2_winner` do; `judge` names that judge (default `recorded`).

An item whose answer is empty is left out and counted, as is an item repeating an earlier id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from llmjury.cases import slug
from llmjury.datasets.files import read_records
from llmjury.errors import DatasetError
from llmjury.families.arena.cases import FAMILY
from llmjury.families.arena.results import Winner
from llmjury.loading import LoadCounter, LoadReport

FIELDS = {
    "id": ("id", "item_id"),
    "prompt": ("prompt", "question", "instruction", "input"),
    "answer_a": ("answer_a", "response_a", "output_1"),
    "answer_b": ("answer_b", "response_b", "output_2"),
    "model_a": ("model_a", "system_a", "model_1"),
    "model_b": ("model_b", "system_b", "model_2"),
    "label": ("label", "human", "preference"),
    "verdict_ab": ("verdict_ab",),
    "verdict_ba": ("verdict_ba",),
    "judge": ("judge",),
}
REQUIRED = ("prompt", "answer_a", "answer_b")
WINNERS: dict[str, Winner] = {"a": "model_a", "b": "model_b", "tie": "tie", "model_a": "model_a",
                              "model_b": "model_b", "tie (bothbad)": "tie (bothbad)", "1": "model_a",
                              "2": "model_b"}
DEFAULT_JUDGE = "recorded"


class PairItem(BaseModel):
    """One pairwise item as read; winners are in the pair's own order (model_a = answer_a)."""

    model_config = ConfigDict(frozen=True)
    id: str
    prompt: str
    answer_a: str
    answer_b: str
    model_a: str = "a"
    model_b: str = "b"
    label: Winner | None = None
    verdict_ab: Winner | None = None
    verdict_ba: Winner | None = None
    judge: str = DEFAULT_JUDGE

    def case_id(self, dataset: str) -> str:
        return f"{slug(dataset)}-{slug(self.id)}"


def winner(value: Any, field: str, path: Path, number: int) -> Winner | None:
    """A label or verdict read as a winner; blank is None, anything else unknown is an error."""
    text = "" if value is None else str(value).strip()
    if not text:
        return None
    try:
        return WINNERS[text.lower()]
    except KeyError:
        raise DatasetError(str(path), number, f"{field} {text!r} is not one of a, b, tie") from None


def _field(record: dict[str, Any], name: str) -> Any:
    return next((record[key] for key in FIELDS[name] if key in record), None)


def load(path: Path, dataset: str) -> tuple[list[PairItem], LoadReport]:
    """The file's items in file order, and what was left out (empty answers, repeated ids)."""
    counter = LoadCounter()
    items: list[PairItem] = []
    seen: set[str] = set()
    for number, record in read_records(path):
        missing = [name for name in REQUIRED if _field(record, name) is None]
        if missing:
            raise DatasetError(str(path), number, f"missing field(s) {missing}; has {sorted(record)} "
                                                  f"(accepted: {', '.join(FIELDS[m][0] for m in REQUIRED)})")
        key = _field(record, "id")
        key = str(number) if key is None or not str(key).strip() else str(key).strip()
        if slug(key) in seen:
            counter.drop("repeated id (first kept)")
            continue
        answers = [str(_field(record, name)) for name in ("answer_a", "answer_b")]
        if not all(a.strip() for a in answers):
            counter.drop("empty answer")
            continue
        seen.add(slug(key))
        items.append(PairItem(
            id=key, prompt=str(_field(record, "prompt")), answer_a=answers[0], answer_b=answers[1],
            model_a=str(_field(record, "model_a") or "a"), model_b=str(_field(record, "model_b") or "b"),
            label=winner(_field(record, "label"), "label", path, number),
            verdict_ab=winner(_field(record, "verdict_ab"), "verdict_ab", path, number),
            verdict_ba=winner(_field(record, "verdict_ba"), "verdict_ba", path, number),
            judge=str(_field(record, "judge") or DEFAULT_JUDGE)))
    if not items:
        left = f" (all {sum(counter.dropped.values())} left out: {dict(counter.dropped)})" if counter.dropped else ""
        raise DatasetError(str(path), None, f"no pair to judge{left}")
    return items, counter.report(FAMILY, dataset, path, len(items))


def has_pair_fields(record: dict[str, Any]) -> bool:
    """Whether a record reads as a pairwise item (for the replay verb's format detection)."""
    return all(_field(record, name) is not None for name in REQUIRED)
