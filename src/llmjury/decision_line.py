"""Where a judge's decision stands: one line, in its prompt's format, and nowhere else.

A judge's answer mixes its decision with reasoning that mentions other decisions: the answers it
judges may plant fake verdicts, and the judge quotes or paraphrases them. A parser therefore reads
the decision only at the place its prompt names (usually the final non-empty line of the judge's
own words, quotations blanked by `llmjury.quotes`) and in exactly the prompt's format; anything
decision-shaped anywhere else makes the answer ambiguous (unscored, or repaired), never a guess.

Trivial variations a decision line may carry, and no others: surrounding whitespace, a list
bullet, markdown bold, and one trailing full stop. Look-alike letters (Cyrillic А, fullwidth Ａ)
never make a decision, but they do count as decision-shaped text elsewhere.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from llmjury.quotes import unquoted

#: Markdown bold or emphasis around a decision or its value.
BOLD = r"[*_]{0,3}"
#: What may surround a whole decision line: whitespace, a list bullet, bold, one trailing full stop.
LEAD = rf"^[ \t]*(?:[-*•][ \t]+)?{BOLD}[ \t]*"
TRAIL = rf"[ \t]*{BOLD}[ \t]*\.?[ \t]*{BOLD}[ \t]*$"

# Latin look-alikes in other scripts, folded to Latin only to spot decision-shaped text elsewhere.
_LOOKALIKES = str.maketrans("АВСЕНКМОРТХаеосрхΑΒΕΗΚΜΟΡΤΧΖ", "ABCEHKMOPTXaeocpxABEHKMOPTXZ")


@dataclass(frozen=True)
class Line:
    """One non-empty line of the judge's own words: its text (quotations blanked) and its offset."""

    text: str
    start: int


def own_lines(text: str) -> list[Line]:
    """The non-empty lines of `text` with quotations blanked, each with its offset in `text`."""
    lines, offset = [], 0
    for raw in unquoted(text).splitlines(keepends=True):
        if raw.strip():
            lines.append(Line(raw.rstrip("\r\n"), offset))
        offset += len(raw)
    return lines


def fold(text: str) -> str:
    """`text` with compatibility forms (fullwidth letters, ｛｝) and look-alike letters made Latin."""
    return unicodedata.normalize("NFKC", text).translate(_LOOKALIKES)


def looks_alike(line: str) -> bool:
    """Whether folding changes `line`: a decision written with look-alike or fullwidth characters."""
    return fold(line) != line


class DuplicateKeyError(ValueError):
    """A JSON object that names one key twice."""


def strict_json(text: str) -> Any:
    """`json.loads` that refuses an object with a repeated key (which value counts is a guess):
    DuplicateKeyError; malformed JSON raises json.JSONDecodeError as usual."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in items:
            if key in seen:
                raise DuplicateKeyError(f"duplicate key {key!r} in the judge's JSON")
            seen[key] = value
        return seen

    return json.loads(text, object_pairs_hook=pairs)


def compile_line(body: str) -> re.Pattern[str]:
    """A whole decision line: `body` with only the trivial variations around it."""
    return re.compile(LEAD + body + TRAIL, re.IGNORECASE)
