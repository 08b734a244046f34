"""Reading a user's data files the one way every loader needs: a missing, unreadable, empty or
non-UTF-8 file, or a malformed line, is a DatasetError naming the file (and the item) and the cause.

JSON, JSON Lines and CSV are detected by content where a loader accepts several shapes, so a
user's file needs no renaming to be read.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from llmjury.errors import DatasetError


def read_text(path: Path) -> str:
    """The file's text; a DatasetError says when it is missing, unreadable, empty or not UTF-8."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DatasetError(str(path), None, "no such file") from None
    except IsADirectoryError:
        raise DatasetError(str(path), None, "is a folder, not a file") from None
    except OSError as exc:
        raise DatasetError(str(path), None, f"cannot read ({exc.strerror or exc})") from None
    if path.suffix.lower() == ".gz":  # a run's verdicts.jsonl.gz, replayed as it was written
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise DatasetError(str(path), None, f"not a readable gzip file ({exc})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DatasetError(str(path), None, f"not UTF-8 text (byte {exc.start}, line {line}); "
                                            "save it as UTF-8") from None
    if not text.strip():
        raise DatasetError(str(path), None, "empty file")
    return text


def read_json(path: Path) -> Any:
    """A whole-file JSON document."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(str(path), None, f"not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None


def read_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number from 0, parsed object) for each non-blank line of a JSON Lines file."""
    for number, line in enumerate(read_text(path).splitlines()):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            cause = f"line {number + 1}: not JSON ({exc.msg}, column {exc.colno})"
            raise DatasetError(str(path), None, cause) from None


def read_csv(path: Path) -> list[dict[str, str]]:
    """Rows of a CSV file with a header line (comma, semicolon or tab, sniffed)."""
    text = read_text(path)
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.DictReader(io.StringIO(text), dialect=dialect, strict=True)
    try:
        rows = list(reader)
    except csv.Error as exc:  # an unclosed quote: without strict, the rest of the file is one field
        raise DatasetError(str(path), None, f"line {reader.line_num}: not CSV ({exc}; a quote left open?)") from None
    if not rows:
        raise DatasetError(str(path), None, "a header line but no rows")
    if None in rows[0]:
        raise DatasetError(str(path), 0, "more fields than the header names")
    return rows


def read_records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Records from JSON Lines, a JSON list of objects, or CSV, told apart by content: (item number, record)."""
    if path.suffix.lower() in (".csv", ".tsv"):
        return list(enumerate(read_csv(path)))
    text = read_text(path).lstrip()
    if text.startswith("["):
        data = read_json(path)
        pairs = list(enumerate(data))
    else:
        pairs = list(read_jsonl(path))
    for number, record in pairs:
        if not isinstance(record, dict):
            raise DatasetError(str(path), number, f"expected an object, got {type(record).__name__}")
    return pairs
