"""Paths as a report may show them: relative to the project, never the machine's absolute layout.

Reports travel: `summary.md` goes into a pull request's step summary, `report.html` and
`summary.json` into CI artifacts. A runner's absolute paths (its checkout under its home folder) say nothing
to a reader there and leak the machine's layout, so every string a report writes is rewritten:
a path under the project's root becomes relative to it, one under the home directory starts
with `~`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def portable(node: T, root: Path) -> T:
    """`node` (JSON-like data or a string) with absolute paths under `root` or the home directory
    rewritten; other values are returned as they are."""
    prefixes = _prefixes(root)
    return _walk(node, prefixes)  # type: ignore[no-any-return]


def shown(path: Path, root: Path) -> str:
    """One path as a report shows it (`reports/2026...`, `~/runs/x`, or `.` for the root itself)."""
    return portable(str(path), root)


def _prefixes(root: Path) -> list[tuple[str, str]]:
    """(absolute prefix, replacement) pairs, the longest first so the root wins over the home."""
    pairs = []
    for base, name in ((root, ""), (Path.home(), "~/")):
        for text in {str(base), os.path.realpath(base)}:
            if text not in ("", os.sep):
                pairs.append((text.rstrip(os.sep) + os.sep, name))
    return sorted(pairs, key=lambda pair: -len(pair[0]))


def _walk(node: Any, prefixes: list[tuple[str, str]]) -> Any:
    if isinstance(node, str):
        return _rewrite(node, prefixes)
    if isinstance(node, dict):
        return {key: _walk(value, prefixes) for key, value in node.items()}
    if isinstance(node, list | tuple):
        return type(node)(_walk(value, prefixes) for value in node)
    return node


def _rewrite(text: str, prefixes: list[tuple[str, str]]) -> str:
    if os.sep not in text:
        return text
    for prefix, name in prefixes:
        text = text.replace(prefix, name)
        bare = prefix.rstrip(os.sep)
        if text == bare or text.endswith(("=" + bare, " " + bare)):  # the folder itself, alone or as a value
            text = text[: len(text) - len(bare)] + (name.rstrip("/") or ".")
    return text
