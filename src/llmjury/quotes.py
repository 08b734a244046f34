"""Quoted text in a judge's answer, blanked out so a decision parser reads only the judge's own words.

A judge explains its decision and often quotes the answers it judges; a candidate that writes a
fake verdict line (`### (a)`, `Score of Model 1: 1`, `[[A]]`, `Score: 3`) must not flip the
decision when the judge quotes it. Quotations are replaced by spaces of the same length, so
positions in the text (a score's offset, for reading its token's logprobs) stay where they were.

Quoted means: fenced code blocks, inline code, lines starting with `>`, and spans in double or
curly quotes or in single quotes that open after a non-letter (an apostrophe in "Teacher A's"
opens nothing). A span in double or single quotes stays on one line.
"""

from __future__ import annotations

import re

_QUOTED = re.compile(
    r"```.*?(?:```|\Z)"  # fenced code, to its end or the end of the answer
    r"|`[^`\n]*`"  # inline code
    r"|^[ \t]*>.*$"  # a quoted line
    r'|"[^"\n]*"'  # "double"
    r"|“[^”\n]*”"  # “curly”
    r"|‘[^’\n]*’"  # ‘curly single’
    r"|(?<![\w'])'[^'\n]+'(?!\w)",  # 'single', not an apostrophe
    re.DOTALL | re.MULTILINE,
)


def unquoted(text: str) -> str:
    """`text` with every quotation replaced by spaces (newlines kept), offsets unchanged."""
    return _QUOTED.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
