"""Where a decision stands in the judge's own words, and whether anything competes with it.

Every shape reader (a choice after a marker, a pair of scores, a rating) finds the same three
things in an answer and hands them here: its *statements* (whole decision lines, in the prompt's
format), its *mentions* (decision-shaped text anywhere, a statement included) and its *prose
decisions* ("Teacher B is better", "선생님 B가 더 낫다", "scelgo la risposta B"). The rules:

1. The last statement is the decision (a self-correction wins).
2. A mention or prose decision after it that decides otherwise makes the answer ambiguous.
3. An earlier mention that decides otherwise is ambiguous too, unless the decision corrects it:
   words from the earlier one's line to the decision say they correct it (`Wait`, `on reflection`,
   `My initial pick`, `정정`, `anzi`) and say in prose that the decision's option is better or right.
   A label alone (`Final decision: (a)`) corrects nothing: a candidate can plant one.
4. Prose decisions count only in the judge's final words: the decision's paragraph (and the one
   before, when the decision opens its paragraph) and everything after it, so an aspect-by-aspect
   comparison before the overall decision never competes with it.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from llmjury.reading.text import OwnWords
from llmjury.reading.words import CORRECTION


@dataclass(frozen=True)
class Found:
    """A decision-shaped piece of the judge's own words: where it stands and what it decides."""

    start: int
    end: int
    #: What it decides (None: decision-shaped, but none of the prompt's options, such as `[[D]]`).
    value: Hashable | None


def final_words_start(words: OwnWords, position: int) -> int:
    """Where the judge's final words begin for a decision at `position`: its paragraph's start, or
    the previous paragraph's when the decision opens its own."""
    lines = words.lines
    index = max((i for i, line in enumerate(lines) if line.start <= position), default=0)
    while index > 0 and not lines[index].opens_paragraph:
        index -= 1
    if lines and lines[index].start >= _line_start(words.text, position) and index > 0:
        index -= 1
        while index > 0 and not lines[index].opens_paragraph:
            index -= 1
    return lines[index].start if lines else 0


def _line_start(text: str, position: int) -> int:
    return text.rfind("\n", 0, position) + 1


def conflict(words: OwnWords, decision: Found, mentions: Sequence[Found], prose: Sequence[Found],
             support: Sequence[Found] = ()) -> str | None:
    """Why `decision` is not the judge's own final decision (a competing one, per the rules above), or
    None. `support` holds looser prose for an option ("Response B is correct"): it never competes,
    but it can say why a correction corrects."""
    final_start = final_words_start(words, decision.start)
    for found in mentions:
        if found.start >= decision.end and found.value != decision.value:
            return f"another decision-shaped text after the decision: {_shown(words, found)!r}"
    for found in prose:
        if found.start >= decision.end and found.value != decision.value:
            return f"the words after the decision decide otherwise: {_shown(words, found)!r}"
    for found in [*mentions, *(p for p in prose if p.start >= final_start)]:
        if found.end > decision.start or found.value == decision.value:
            continue
        if not corrected(words, found, decision, [*prose, *support]):
            kind = "decision-shaped text that decides" if found in mentions else "words that decide"
            return f"{kind} otherwise before the decision: {_shown(words, found)!r}"
    return None


def corrected(words: OwnWords, earlier: Found, decision: Found, stated: Sequence[Found]) -> bool:
    """Whether `decision` corrects `earlier`: correcting words from the earlier one's line to the
    decision, and between them prose that decides as `decision` does (a decision-shaped mention
    does not count: a candidate can plant one as easily as the decision it would flip)."""
    between = words.text[_line_start(words.text, earlier.start):decision.start]
    agrees = any(p.value == decision.value and earlier.end <= p.start and p.end <= decision.start for p in stated)
    return bool(CORRECTION.search(between)) and agrees


def _shown(words: OwnWords, found: Found) -> str:
    return words.text[found.start:found.end].strip()[:80]

