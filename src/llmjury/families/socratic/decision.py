"""Reading the pairwise judge's decision (the robust k-run majority lives in `llmjury.majority`)."""

from __future__ import annotations

import re
from typing import Literal

from llmjury.errors import JudgeParseError
from llmjury.quotes import unquoted

PARSER_VERSION = "socratic-decision/2"
Decision = Literal["a", "b", "c"]

_OPTION = re.compile(r"\(\s*([abcABC])\s*\)")
_NAME = re.compile(r"teacher\s*([ab])\b|\b(equivalent|tie|equal(?:ly)?|neither|both)\b", re.IGNORECASE)
_BARE = re.compile(r"^\W*([abcABC])\W*$")
# Without "###", only an explicit choice counts: "(b)", "(c) Equivalent", "[Teacher A]".
_EXPLICIT = re.compile(r"\(\s*([abcABC])\s*\)|\[\s*teacher\s+([abAB])\s*\]|\b(equivalent)\b", re.IGNORECASE)


def parse_decision(text: str) -> Decision:
    """The decision after the last `###` the judge wrote itself: an option `(a)`, a name
    `Teacher B`, or `Equivalent`. Quoted text is not read, so a `### (a)` quoted from an answer
    cannot flip it.

    Odd spacing (`( b )`, `###(a)`) and case are tolerated; when the block names both teachers
    the first mention wins ("Teacher A is better than Teacher B"). Without `###`, a last
    paragraph that names exactly one option explicitly (`(c) Equivalent`, `[Teacher A]`) is the
    decision, as small models answer. Otherwise JudgeParseError, so the judge can be asked again.
    """
    own = unquoted(text)
    if "###" not in own:
        return _explicit_choice(text, own)
    block = own.rsplit("###", 1)[1].strip()
    for line in block.splitlines() or [""]:
        bare = _BARE.match(line)
        if bare:
            return bare.group(1).lower()  # type: ignore[return-value]
    option = _OPTION.search(block)
    if option:
        return option.group(1).lower()  # type: ignore[return-value]
    name = _NAME.search(block)
    if name:
        return name.group(1).lower() if name.group(1) else "c"  # type: ignore[return-value]
    raise JudgeParseError(PARSER_VERSION, text, f'cannot read a decision in {block[:80]!r} after "###"')


def _explicit_choice(text: str, own: str) -> Decision:
    paragraphs = [p for p in re.split(r"\n\s*\n", own) if p.strip()]
    last = paragraphs[-1] if paragraphs else ""
    named = {(m.group(1) or m.group(2) or "c").lower() for m in _EXPLICIT.finditer(last)}
    if len(named) != 1:
        raise JudgeParseError(PARSER_VERSION, text, 'no final decision after "###"')
    return named.pop()  # type: ignore[return-value]
