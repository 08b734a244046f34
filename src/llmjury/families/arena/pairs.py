"""Pairwise items a user brings: a prompt, two answers, and optionally the two systems' names, a
human label and a judge's verdicts recorded in each answer order (JSON Lines, a JSON list or CSV).

Fields (other spellings accepted in brackets):
- `id` (`item_id`): the item's key; default its position in the file. Items are
  keyed by it, never by the prompt text, so pairs repeating a prompt stay apart;
- `prompt` (`question`, `instruction`, `input`), `answer_a` (`response_a`, `output_1`),
  `answer_b` (`response_b`, `output_2`): required;
- `model_a`, `model_b` (`system_a`, `system_b`, `model_1`, `model_2`): the systems, default `a` and `b`;
- `label` (`human`, `preference`): the human preference, `a`, `b` or `tie` (`model_a`, `model_b`,
  `tie (bothbad)` also read); other values, numbers above all, only through a declared mapping
  (`mapping.py`: `arena.pairs_labels`), never guessed;
- `verdict_ab`, `verdict_ba`: a judge's recorded verdict with answer_a shown first, and with
  answer_b shown first, each naming the answer it preferred (`a`, `b`, `tie`), as MT-Bench's
  `g1_winner` / `g2_winner` do; `judge` names that judge (default `recorded`). They may come
  instead from one file per order (`arena.pairs_verdicts_ab` / `_ba`, in a declared frame).

`arena.pairs_columns` names the prompt, answer and label columns of a file spelling them otherwise.
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
from llmjury.families.arena.mapping import PairMapping
from llmjury.families.arena.options import ArenaOptions
from llmjury.families.arena.orders import Order, OrderVerdicts, item_key
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


def winner(value: Any, field: str, path: Path, number: int, mapping: PairMapping | None = None) -> Winner | None:
    """A label or verdict read as a winner through the declared mapping; blank is None, a value the
    mapping cannot tell apart is an error naming the file, the item and the option to set."""
    try:
        return (mapping or PairMapping()).winner(value)
    except ValueError as exc:
        raise DatasetError(str(path), number, f"{field} {exc}") from None


def _field(record: dict[str, Any], name: str, mapping: PairMapping | None = None) -> Any:
    if mapping is not None and name in mapping.columns:
        return record.get(mapping.columns[name])
    return next((record[key] for key in FIELDS[name] if key in record), None)


def load(path: Path, dataset: str, options: ArenaOptions | None = None) -> tuple[list[PairItem], LoadReport]:
    """The file's items in file order, read through the declared mapping and with the verdicts of
    per-order files joined, and what was left out (empty answers, repeated ids)."""
    options = options or ArenaOptions()
    mapping = options.pair_mapping()
    counter = LoadCounter()
    items: list[PairItem] = []
    seen: set[str] = set()
    keys: list[str] = []
    for number, record in read_records(path):
        missing = [mapping.columns.get(name, name) for name in REQUIRED if _field(record, name, mapping) is None]
        if missing:
            accepted = "arena.pairs_columns" if mapping.columns else ", ".join(FIELDS[m][0] for m in REQUIRED)
            raise DatasetError(str(path), number, f"missing field(s) {missing}; has {sorted(record)} "
                                                  f"(accepted: {accepted})")
        key = item_key(record, number)
        keys.append(key)
        if slug(key) in seen:
            counter.drop("repeated id (first kept)")
            continue
        answers = [str(_field(record, name, mapping)) for name in ("answer_a", "answer_b")]
        if not all(a.strip() for a in answers):
            counter.drop("empty answer")
            continue
        seen.add(slug(key))
        items.append(PairItem(
            id=key, prompt=str(_field(record, "prompt", mapping)), answer_a=answers[0], answer_b=answers[1],
            model_a=str(_field(record, "model_a") or "a"), model_b=str(_field(record, "model_b") or "b"),
            label=winner(_field(record, "label", mapping), "label", path, number, mapping),
            verdict_ab=winner(_field(record, "verdict_ab"), "verdict_ab", path, number, mapping),
            verdict_ba=winner(_field(record, "verdict_ba"), "verdict_ba", path, number, mapping),
            judge=str(_field(record, "judge") or DEFAULT_JUDGE)))
    if not items:
        left = f" (all {sum(counter.dropped.values())} left out: {dict(counter.dropped)})" if counter.dropped else ""
        raise DatasetError(str(path), None, f"no pair to judge{left}")
    return joined(items, path, keys, options, mapping), counter.report(FAMILY, dataset, path, len(items))


def joined(items: list[PairItem], path: Path, keys: list[str], options: ArenaOptions,
           mapping: PairMapping) -> list[PairItem]:
    """The items with the verdicts of the per-order files; an order recorded both in the items file
    and in its own file is refused rather than one of them silently preferred."""
    files: tuple[tuple[Order, str | None], ...] = (("ab", options.pairs_verdicts_ab), ("ba", options.pairs_verdicts_ba))
    for order, given in files:
        if not given:
            continue
        found = OrderVerdicts(Path(given), order, options.pairs_ba_frame or "as_items", mapping)
        found.check_join(keys, path)
        field = f"verdict_{order}"
        out = []
        for item in items:
            if item.id not in found.verdicts:
                out.append(item)
                continue
            if getattr(item, field) is not None:
                raise DatasetError(str(path), item.id, f"{field} is recorded here and in {found.path.name} "
                                                       f"(arena.pairs_verdicts_{order}); keep one")
            judge = found.judges.get(item.id, item.judge)
            out.append(item.model_copy(update={field: found.verdicts[item.id], "judge": judge}))
        items = out
    return items


def has_pair_fields(record: dict[str, Any], mapping: PairMapping | None = None) -> bool:
    """Whether a record reads as a pairwise item, through the declared columns if any (for the
    replay verb's format detection)."""
    return all(_field(record, name, mapping) is not None for name in REQUIRED)
