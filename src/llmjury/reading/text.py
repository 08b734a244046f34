"""The judge's own words, normalised: what every reader reads, and nothing else.

Normalising first means one rule set serves every spelling of the same decision: Unicode NFKC
(fullwidth `Ｂ`, `：`, `４` become `B`, `:`, `4`), zero-width characters removed, non-breaking and
other odd spaces made plain spaces. Letters of other scripts that look Latin (Cyrillic `А`, Greek
`Β`) are not folded: they never make a decision, though `fold` still lets a reader see them as
decision-shaped text that competes with one.

Not the judge's own words (blanked, offsets kept): quotations (`llmjury.reading.quotes`: quotes,
fenced and inline code, block quotes, HTML quotations, table rows), indented code blocks (lines
indented by four spaces or a tab more than the answer's least indented line, that do not continue
a list) and HTML comments.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property

from llmjury.reading.quotes import unquoted

#: Characters removed before reading: zero-width spaces and joiners, word joiner, BOM, soft hyphen.
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e"))
#: Spaces that are not plain spaces (no-break, narrow no-break, figure, ideographic, ...).
_SPACES = re.compile(r"[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")
# Latin look-alikes in other scripts, folded to Latin only to spot decision-shaped text elsewhere.
_LOOKALIKES = str.maketrans("АВСЕНКМОРТХаеосрхΑΒΕΗΚΜΟΡΤΧΖ", "ABCEHKMOPTXaeocpxABEHKMOPTXZ")
_INDENTED = re.compile(r"^(?: {4}|\t)")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+•]|\d{1,2}[.)])[ \t]+")
_COMMENT = re.compile(r"<!--[\s\S]*?(?:-->|\Z)")
#: Emoji and pictographs ("✅", "🏆", "⭐"), their skin tones and presentation selectors: decoration,
#: never a decision, so a decision or score line read with them reads as without them.
_SYMBOLS = re.compile("[\u2300-\u23ff\u25a0-\u27bf\u2b00-\u2bff\ufe0e\ufe0f"
                      "\U0001f000-\U0001faff]")


@dataclass(frozen=True)
class Normalised:
    """A judge answer after normalisation, with where each of its characters came from."""

    text: str
    #: For each character of `text`, its offset in the raw answer (one past the end at the end);
    #: None when normalising changed nothing.
    origin: tuple[int, ...] | None = None

    def offset(self, position: int) -> int:
        """The raw answer's offset of the normalised text's `position`."""
        return position if self.origin is None else self.origin[position]


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_ODD = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")


def normalise(raw: str) -> Normalised:
    """`raw` with NFKC forms, no invisible characters and plain spaces; offsets kept in `origin`.
    ASCII needs no normalising, so only the runs of other characters are looked at, one by one."""
    if unicodedata.is_normalized("NFKC", raw) and not _ODD.search(raw):
        return Normalised(raw)  # most answers: nothing to do
    out: list[str] = []
    origin: list[int] = []
    position = 0
    for run in _NON_ASCII.finditer(raw):
        out.append(raw[position:run.start()])
        origin.extend(range(position, run.start()))
        position = run.end()
        if unicodedata.is_normalized("NFKC", run.group(0)) and not _ODD.search(run.group(0)):
            out.append(run.group(0))  # Hangul, accented letters: already as read
            origin.extend(range(run.start(), run.end()))
            continue
        for index in range(run.start(), run.end()):
            char = _SPACES.sub(" ", unicodedata.normalize("NFKC", raw[index].translate(_INVISIBLE)))
            out.append(char)
            origin.extend([index] * len(char))
    out.append(raw[position:])
    origin.extend(range(position, len(raw) + 1))
    return Normalised("".join(out), tuple(origin))


def fold(text: str) -> str:
    """`text` normalised, with look-alike letters of other scripts made Latin (to spot, never to read)."""
    return normalise(text).text.translate(_LOOKALIKES)


@dataclass(frozen=True)
class Line:
    """One non-empty line of the judge's own words: its text (the rest blanked), its offset in the
    normalised answer, and whether a blank line (or the start) precedes it."""

    text: str
    start: int
    opens_paragraph: bool


def blank(match: re.Match[str]) -> str:
    """A match replaced by spaces, newlines kept, so offsets stay where they were."""
    return re.sub(r"[^\n]", " ", match.group(0))


def own_text(text: str) -> str:
    """`text` with everything that is not the judge's own words blanked (offsets unchanged)."""
    text = _SYMBOLS.sub(" ", unquoted(_COMMENT.sub(blank, text)))
    lines = text.split("\n")
    # An answer indented as a whole is not code: indentation counts from its least indented line.
    common = min((len(line) - len(line.lstrip(" \t")) for line in lines if line.strip()), default=0)
    code, previous = False, ""  # `previous`: the last non-blank line, to tell list continuations from code
    for i, line in enumerate(lines):
        if not line.strip():
            continue  # a blank line neither opens nor closes a code block
        line = line[common:]
        if not _INDENTED.match(line):
            code = False
        elif not code:
            code = not (_LIST_ITEM.match(previous) or _INDENTED.match(previous))
        previous = line
        if code:
            lines[i] = " " * len(lines[i])
    return "\n".join(lines)


class OwnWords:
    """A judge answer as a reader sees it: normalised, then only the judge's own lines."""

    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.normalised = normalise(raw)
        self.text = own_text(self.normalised.text)

    @cached_property
    def lines(self) -> list[Line]:
        lines, offset, blank_before = [], 0, True
        for raw in self.text.split("\n"):
            if raw.strip():
                lines.append(Line(raw.rstrip("\r"), offset, blank_before))
                blank_before = False
            else:
                blank_before = True
            offset += len(raw) + 1
        return lines

    def raw_offset(self, position: int) -> int:
        """Where the normalised answer's `position` stands in the raw answer."""
        return self.normalised.offset(position)
