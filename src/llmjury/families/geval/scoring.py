"""From judge output to a G-Eval score: probability-weighted over the score tokens when the
provider returns logprobs, else frequency-weighted over n samples (seed 004's formula)."""

from __future__ import annotations

import math
import re
from collections import Counter

from llmjury.chat import Sample
from llmjury.errors import JudgeParseError

PARSER_VERSION = "geval-score/2"
_NUMBER = re.compile(r"(?<![\d.])(\d+)(?:\.\d+)?(?![\d.])")
_RANGE = re.compile(r"\(?\b\d+\s*-\s*\d+\b\)?")


def parse_score(text: str, scale: range) -> int:
    """The score in a form-filling answer: scale ranges such as "(1-3)" are ignored, the text after
    the last colon is read first ("- Naturalness (1-3): 2" is 2), then the whole answer; the first
    whole number on the scale wins ("4", "Overall Quality: 4", "4/5")."""
    cleaned = _RANGE.sub(" ", text)
    for part in (cleaned.rsplit(":", 1)[-1], cleaned) if ":" in cleaned else (cleaned,):
        for match in _NUMBER.finditer(part):
            value = int(match.group(1))
            if value in scale:
                return value
    raise JudgeParseError(PARSER_VERSION, text, f"no score between {scale.start} and {scale.stop - 1}")


def frequency_weighted(scores: list[int], scale: range) -> tuple[float, dict[int, float]]:
    """P(s) = occurrences(s) / n over the parsed samples; score = sum of P(s) * s."""
    counts = Counter(scores)
    n = len(scores)
    distribution = {s: counts[s] / n for s in scale}
    return sum(p * s for s, p in distribution.items()), distribution


def logprob_weighted(sample: Sample, scale: range) -> tuple[float, dict[int, float]] | None:
    """At the first generated token that is a score, weight the scores among its top alternatives
    by their probabilities (renormalised over the scale); None when the sample has no logprobs or
    no score token."""
    if not sample.logprobs:
        return None
    allowed = {str(s): s for s in scale}
    for step in sample.logprobs:
        if step.token.strip() not in allowed:
            continue
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
    return None
