"""CSV tables written the way pandas writes them, with the csv module.

The run folder's tables (verdicts per family, arena's seed files) used to go through
`pandas.DataFrame(rows).to_csv(index=False)`; pandas' import and frame building were about a
second of every session end, and its output is easy to state: columns in order of first
appearance, an integer column with a gap written as floats (`3.0`), NaN and None empty, the rest
as `str()` gives it. Tests hold these bytes equal to pandas' own.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any


def csv_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> str:
    """`pandas.DataFrame(rows, columns=columns).to_csv(index=False)`, byte for byte."""
    return "".join(csv_chunks(lambda: rows, columns))


#: Characters of a table yielded at a time by `csv_chunks` (about a megabyte of ASCII).
CHUNK_CHARS = 1_000_000


def csv_chunks(rows: Callable[[], Iterable[Mapping[str, Any]]], columns: Sequence[str] | None = None,
               chunk_chars: int = CHUNK_CHARS) -> Iterator[str]:
    """`csv_table` of the rows `rows()` gives, in parts of whole lines of about `chunk_chars`. `rows()` is
    read twice (for the columns and their kinds, then to write), so a table of a whole run's verdicts
    is never held."""
    kinds: dict[str, set[type]] = {name: set() for name in columns or ()}
    seen: Counter[str] = Counter()  # rows that have the column: a row without it leaves a gap
    # Rows of a table share a few shapes (their columns and the types of their values): counted by
    # shape, in order of first appearance, each row is two C-level tuples, not a loop per cell.
    fixed = None if columns is None else tuple(columns)
    shapes: Counter[tuple[tuple[str, ...], tuple[type, ...]]] = Counter()
    for row in rows():
        found = row.values() if fixed is None else map(row.get, fixed)
        shapes[tuple(row) if fixed is None else fixed, tuple(map(type, found))] += 1
    total = shapes.total()
    for (shape_names, shape_types), count in shapes.items():
        for name, value_type in zip(shape_names, shape_types, strict=True):
            kinds.setdefault(name, set()).add(value_type)
            seen[name] += count
    for name, kind in kinds.items():
        if seen[name] < total:
            kind.add(type(None))
    if not kinds:  # no column: an empty header, and an empty line for each row
        yield "\n" * (total + 1)
        return
    names = list(kinds)
    # only the columns pandas would change are converted cell by cell; csv writes None as empty
    shaped = [(column, _is_numbers(kinds[name]), float in kinds[name]) for column, name in enumerate(names)]
    special = [(column, numbers, mixed) for column, numbers, mixed in shaped if numbers or mixed]
    lines = _Lines()
    writer = csv.writer(lines, lineterminator="\n")  # str() for the rest: 'True', '[...]', repr of floats
    writer.writerow(names)
    for row in rows():
        values = [row.get(name) for name in names]
        for column, numbers, mixed in special:
            values[column] = _cell(values[column], numbers, mixed)
        writer.writerow(values)
        if lines.chars >= chunk_chars:
            yield "".join(lines)
            lines.clear()
            lines.chars = 0
    yield "".join(lines)


class _Lines(list[str]):
    """The csv writer's file: the lines it writes, kept as the strings they are, and their length.
    (A StringIO emptied and written again holds four bytes a character: a thousand rows of answers
    cost 24 MB.)"""

    chars = 0

    def write(self, line: str) -> None:
        self.append(line)
        self.chars += len(line)


def _is_numbers(kinds: set[type]) -> bool:
    """A column pandas holds as float64: numbers with a float among them, or whole numbers with a gap."""
    return kinds - {type(None)} <= {int, float} and (float in kinds or (int in kinds and type(None) in kinds))


def _cell(value: Any, numbers: bool, mixed: bool) -> Any:
    """A value as pandas writes it: in a float64 column as a float, NaN empty; NaN empty in a mixed one."""
    if value is None:
        return None
    if numbers:
        return None if value != value else float(value)
    if mixed and type(value) is float and value != value:
        return None
    return value
