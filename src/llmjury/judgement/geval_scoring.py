"""From judge output to a G-Eval score: probability-weighted over the score tokens when the
provider returns logprobs, else frequency-weighted over n samples (seed 004's formula).

The core's `GEvalScore` judge and the geval family both score this way, so it sits in the core."""

from __future__ import annotations

import math
import re
from collections import Counter

from llmjury.chat import Sample, TokenLogprob, TopLogprob
from llmjury.decision_line import BOLD, LEAD, TRAIL, fold, looks_alike, own_lines
from llmjury.errors import JudgeParseError

PARSER_VERSION = "geval-score/5"
# The form's score line: the score alone ("2"), or after the form's label ("Coherence: 2",
# "- Naturalness (1-3): 2", "Overall Quality: **4**", "Score: 4."), optionally out of the top ("4/5").
_RANGE = r"\(\s*[0-9]+\s*[-–—~]\s*[0-9]+\s*\)"
# The label is the form's criterion as the prompt may phrase it ("Coherence - is the reply coherent
# with the question?"): a letter, then up to 120 characters with no digit, colon or line break.
_LABEL = rf"(?:[^\W\d_][^\d:\n]{{0,120}}?[ \t]*(?:{_RANGE})?[ \t]*{BOLD}[ \t]*:[ \t]*)?"
# A numbered form line ("1. Coherence: 2") reads like a bulleted one when a label follows the number.
_NUMBERED = r"(?:[0-9]{1,2}[.)][ \t]+(?=[^\W\d_]))?"
_SCORE_LINE = re.compile(rf"{LEAD}{_NUMBERED}{_LABEL}{BOLD}(?P<score>[0-9]+){BOLD}(?:[ \t]*/[ \t]*[0-9]+)?{TRAIL}",
                         re.IGNORECASE)


def parse_score(text: str, scale: range) -> int:
    """The score in a form-filling answer (see `score_at`)."""
    return score_at(text, scale)[0]


def score_at(text: str, scale: range) -> tuple[int, int]:
    """The score of a form-filling answer and its offset in `text`. The prompt ends with the form's
    score line, so the score is read only from the final line of the judge's own words (quotations
    blanked): the number alone or after the form's label (`4`, `Coherence: 2`, `- Naturalness
    (1-3): 2`, `1. Coherence: 2`, `Score: 4.`, `4/5`), a whole number on the scale. Digits anywhere else (rubric anchors
    copied from the prompt, "A score of 1 (no) means ...", a restated scale `1-5`, `1–5`, `(1—5)`)
    are never the score; a final line with anything more on it, or a second score line elsewhere,
    is ambiguous: JudgeParseError, never a guess."""
    expected = f"the score alone, a whole number from {scale.start} to {scale.stop - 1}"
    lines = own_lines(text)
    last = lines[-1] if lines else None
    match = _SCORE_LINE.match(last.text) if last else None
    if last is None or match is None:
        shown = last.text.strip()[:80] if last else ""
        cause = "look-alike characters on the score line" if last and looks_alike(last.text) else (
            f"the final line {shown!r} is not a score line")
        raise JudgeParseError(PARSER_VERSION, text, cause, expected=expected)
    value = int(match.group("score"))
    if value not in scale:
        raise JudgeParseError(PARSER_VERSION, text, f"score {value} is not between {scale.start} and "
                              f"{scale.stop - 1}", expected=expected)
    for line in lines[:-1]:
        if _SCORE_LINE.match(fold(line.text)):
            raise JudgeParseError(PARSER_VERSION, text, f"a second score line {line.text.strip()[:80]!r}",
                                  expected=expected)
    return value, last.start + match.start("score")


def frequency_weighted(scores: list[int], scale: range) -> tuple[float, dict[int, float]]:
    """P(s) = occurrences(s) / n over the parsed samples; score = sum of P(s) * s."""
    counts = Counter(scores)
    n = len(scores)
    distribution = {s: counts[s] / n for s in scale}
    return sum(p * s for s, p in distribution.items()), distribution


def logprob_weighted(sample: Sample, scale: range) -> tuple[float, dict[int, float]] | None:
    """At the token where the parsed score stands (never a digit of an echoed scale or of a longer
    number), weight the scores among its top alternatives by their probabilities, renormalised
    over the scale. None when the sample has no logprobs, no readable score, or tokens that do not
    spell its text."""
    if not sample.logprobs or "".join(step.token for step in sample.logprobs) != sample.text:
        return None
    try:
        value, offset = score_at(sample.text, scale)
    except JudgeParseError:
        return None
    allowed = {str(s): s for s in scale}
    position = 0
    for step in sample.logprobs:
        end = position + len(step.token)
        if position <= offset < end:
            if step.token.strip() != str(value):
                return None  # the score shares its token with other text: no clean distribution
            mass: dict[int, float] = {}
            alternatives: list[TopLogprob] | list[TokenLogprob] = step.top or [step]  # no top list: the token alone
            for alt in alternatives:
                key = alt.token.strip()
                if key in allowed:
                    mass[allowed[key]] = mass.get(allowed[key], 0.0) + math.exp(alt.logprob)
            total = sum(mass.values())
            if total <= 0:
                return None
            distribution = {s: mass.get(s, 0.0) / total for s in scale}
            return sum(p * s for s, p in distribution.items()), distribution
        position = end
    return None
