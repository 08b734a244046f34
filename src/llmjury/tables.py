"""CSV tables written the way pandas writes them, with the csv module.

The run folder's tables (verdicts per family, arena's seed files) used to go through
`pandas.DataFrame(rows).to_csv(index=False)`; pandas' import and frame building were about a
second of every session end, and its output is easy to state: columns in order of first
appearance, an integer column with a gap written as floats (`3.0`), NaN and None empty, the rest
as `str()` gives it. Tests hold these bytes equal to pandas' own.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Any


def csv_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> str:
    """`pandas.DataFrame(rows, columns=columns).to_csv(index=False)`, byte for byte."""
    names = list(columns) if columns is not None else list(dict.fromkeys(key for row in rows for key in row))
    if not names:
        return "\n"
    table = [[*map(row.get, names)] for row in rows]
    for i in range(len(names)):
        kinds = {type(line[i]) for line in table}
        numbers = kinds - {type(None)} <= {int, float}
        if numbers and (float in kinds or (int in kinds and type(None) in kinds)):  # pandas' float64
            for line in table:
                if (value := line[i]) is not None:
                    line[i] = None if value != value else float(value)
        elif float in kinds:  # a mixed column: only NaN needs saying, as empty
            for line in table:
                if type(line[i]) is float and line[i] != line[i]:
                    line[i] = None
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")  # str() for the rest: 'True', '[...]', repr of floats
    writer.writerow(names)
    writer.writerows(table)
    return out.getvalue()
