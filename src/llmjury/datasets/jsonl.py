"""JSON Lines files, read the one way every loader needs: blank lines skipped, and a line that is
not JSON reported as a DatasetError naming the file and the line (counted from 0, as items are)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from llmjury.errors import DatasetError


def read_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed object) for each non-blank line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DatasetError(str(path), None, f"cannot read ({exc})") from exc
    for number, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(str(path), number, f"not JSON ({exc.msg})") from exc
