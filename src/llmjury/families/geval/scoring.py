"""From judge output to a G-Eval score: probability-weighted over the score tokens when the
provider returns logprobs, else frequency-weighted over n samples (seed 004's formula)."""

from __future__ import annotations

import math
import re
from collections import Counter

from llmjury.chat import Sample
from llmjury.errors import JudgeParseError
from llmjury.quotes import unquoted

PARSER_VERSION = "geval-score/3"
_NUMBER = re.compile(r"(?<![\d.])(\d+)(?:\.\d+)?(?![\d.])")
_RANGE = re.compile(r"\(?\b\d+\s*-\s*\d+\b\)?")


def parse_score(text: str, scale: range) -> int:
    """The score in a form-filling answer (see `score_at`)."""
    return score_at(text, scale)[0]


def score_at(text: str, scale: range) -> tuple[int, int]:
    """The score in a form-filling answer and its offset in `text`: quoted text and scale ranges
    such as "(1-3)" are not read; the text after the last colon is read first ("- Naturalness
    (1-3): 2" is 2), then the whole answer; the first whole number on the scale wins ("4",
    "Overall Quality: 4", "4/5"). A number with more digits or decimals ("21.5") is no score."""
    cleaned = _RANGE.sub(lambda m: " " * len(m.group(0)), unquoted(text))
    after_colon = cleaned.rfind(":") + 1
    for begin in (after_colon, 0) if after_colon else (0,):
        for match in _NUMBER.finditer(cleaned, begin):
            value = int(match.group(1))
            if value in scale and not match.group(0).count("."):
                return value, match.start(1)
    raise JudgeParseError(PARSER_VERSION, text, f"no score between {scale.start} and {scale.stop - 1}")


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
            for alt in step.top or [step]:
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
