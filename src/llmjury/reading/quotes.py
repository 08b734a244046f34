"""Quoted text in a judge's answer, blanked out so a decision parser reads only the judge's own words.

A judge explains its decision and often quotes the answers it judges; a candidate that writes a
fake verdict line (`### (a)`, `Score of Model 1: 1`, `[[A]]`, `Score: 3`) must not flip the
decision when the judge quotes it. Quotations are replaced by spaces of the same length, so
positions in the text (a score's offset, for reading its token's logprobs) stay where they were.

Quoted means: fenced code blocks, inline code, HTML `<blockquote>`, `<q>`, `<code>` and `<pre>`
elements, lines starting with `>` (each such line alone), markdown table rows, and spans in
double, curly or angle quotes (« », ‹ ›, „ “) or in single quotes that open after a non-letter (an
apostrophe in "Teacher A's" opens nothing, and one between letters inside a span closes nothing).
A quoted span may run over several lines but never over a blank line, and over at most 2,000
characters. What the blanking misses
is still no decision unless it stands where a decision does (`llmjury.reading.decisions`).
"""

from __future__ import annotations

import re

# Any text up to the closing mark, within one paragraph, at most 2,000 characters and without another
# opening mark, so an unclosed mark costs a short scan (a longer quotation stays unblanked: then it
# is ambiguous, never a flip).
_SPAN = r"(?:[^{marks}\n]|\n(?![ \t]*\n)){{0,2000}}"


def _pair(opening: str, closing: str) -> str:
    marks = re.escape(opening) + ("" if opening == closing else re.escape(closing))
    return re.escape(opening) + _SPAN.format(marks=marks) + re.escape(closing)


_QUOTED = re.compile(
    r"```[\s\S]*?(?:```|\Z)"  # fenced code, to its end or the end of the answer
    r"|`[^`\n]*`"  # inline code
    r"|<(blockquote|q|code|pre)\b[^>]*>[\s\S]*?(?:</\1\s*>|\Z)"  # HTML quotations and code
    r"|^[ \t]*>[^\n]*$"  # a quoted line (that line only)
    r"|^[ \t]*\|[^\n]*\|[ \t]*$"  # a markdown table row
    + "".join("|" + _pair(o, c) for o, c in ('""', "“”", "‘’", "«»", "‹›", "„“"))
    + r"|(?<![\w'’])'(?:[^'\n]|(?<=\w)'(?=\w))+'(?!\w)",  # 'single', not an apostrophe
    re.MULTILINE | re.IGNORECASE,
)


def unquoted(text: str) -> str:
    """`text` with every quotation replaced by spaces (newlines kept), offsets unchanged."""
    return _QUOTED.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
