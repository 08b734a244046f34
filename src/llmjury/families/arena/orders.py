"""A judge's verdicts recorded in one file per answer order (`arena.pairs_verdicts_ab`, `_ba`).

Each row names its item by `id` (`item_id`), as the pairwise items file does, else by its position,
and holds the verdict in the label column `arena.pairs_columns` names (else `verdict`, `label`,
`winner` or `preference`), read through the declared label mapping. Verdicts come out in the
item's own frame: a `ba` file declared `as_shown` names the answers in the order the judge saw
them, so its first answer (the item's B) is flipped back to B.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from llmjury.datasets.files import read_records
from llmjury.errors import DatasetError
from llmjury.families.arena.mapping import FLIP, Frame, PairMapping
from llmjury.families.arena.results import Winner

ID_FIELDS = ("id", "item_id")
VERDICT_FIELDS = ("verdict", "label", "winner", "preference")
Order = Literal["ab", "ba"]


def item_key(record: dict[str, Any], number: int) -> str:
    """A row's item: its id, else its position in the file."""
    key = next((record[k] for k in ID_FIELDS if k in record), None)
    return str(number) if key is None or not str(key).strip() else str(key).strip()


def has_ids(records: list[tuple[int, dict[str, Any]]]) -> bool:
    return any(k in record for _, record in records for k in ID_FIELDS)


class OrderVerdicts:
    """One order's file as read: each item's verdict in the item's frame, and the judge a row names."""

    def __init__(self, path: Path, order: Order, frame: Frame, mapping: PairMapping) -> None:
        self.path, self.order = path, order
        self.records = list(read_records(path))
        self.by_id = has_ids(self.records)
        self.verdicts: dict[str, Winner | None] = {}
        self.judges: dict[str, str] = {}
        column = mapping.columns.get("label")
        for number, record in self.records:
            key = item_key(record, number)
            if key in self.verdicts:
                raise DatasetError(str(path), number, f"item {key!r} has a second verdict")
            names = (column,) if column else VERDICT_FIELDS
            found = next((name for name in names if name in record), None)
            if found is None:
                raise DatasetError(str(path), number, f"no verdict column {list(names)}; has {sorted(record)} (name "
                                                      "it as the label column of arena.pairs_columns)")
            try:
                winner = mapping.winner(record[found])
            except ValueError as exc:
                raise DatasetError(str(path), number, f"verdict {exc}") from None
            flip = order == "ba" and frame == "as_shown" and winner is not None
            self.verdicts[key] = FLIP[winner] if flip and winner is not None else winner
            if record.get("judge"):
                self.judges[key] = str(record["judge"])

    def check_join(self, keys: list[str], source: Path) -> None:
        """Every row joins an item of the items file (`keys`, in file order); joined by position, the
        two files have as many rows, so no row is read against another item."""
        unknown = [key for key in self.verdicts if key not in set(keys)]
        if unknown:
            how = "id" if self.by_id else "position (the rows have no id)"
            raise DatasetError(str(self.path), unknown[0], f"no item {unknown[0]!r} in {source.name}, joined by {how}")
        if not self.by_id and len(self.records) != len(keys):
            raise DatasetError(str(self.path), None, f"{len(self.records)} rows for {len(keys)} items of "
                                                     f"{source.name}: rows without an id join items by position; "
                                                     "give each an id")
