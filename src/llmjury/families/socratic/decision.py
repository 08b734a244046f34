"""Reading the pairwise judge's decision (the robust k-run majority lives in `llmjury.majority`)."""

from __future__ import annotations

import re
from typing import Literal

from llmjury.errors import JudgeParseError

PARSER_VERSION = "socratic-decision/1"
Decision = Literal["a", "b", "c"]

_OPTION = re.compile(r"\(\s*([abcABC])\s*\)")
_NAME = re.compile(r"teacher\s*([ab])\b|\b(equivalent|tie|equal(?:ly)?|neither|both)\b", re.IGNORECASE)
_BARE = re.compile(r"^\W*([abcABC])\W*$")


def parse_decision(text: str) -> Decision:
    """The decision after the last `###`: an option `(a)`, a name `Teacher B`, or `Equivalent`.

    Odd spacing (`( b )`, `###(a)`) and case are tolerated; when the block names both teachers
    the first mention wins ("Teacher A is better than Teacher B"). No `###`, or nothing readable
    after it, raises JudgeParseError so the judge can be asked again.
    """
    if "###" not in text:
        raise JudgeParseError(PARSER_VERSION, text, 'no final decision after "###"')
    block = text.rsplit("###", 1)[1].strip()
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
