"""From judge output to a G-Eval score: probability-weighted over the score tokens when the
provider returns logprobs, else frequency-weighted over n samples (seed 004's formula).

The core's `GEvalScore` judge and the geval family both score this way, so it sits in the core."""

from __future__ import annotations

import math
from collections import defaultdict

from llmjury.chat import Sample, TokenLogprob, TopLogprob
from llmjury.errors import JudgeParseError
from llmjury.reading.rating import Rating

PARSER_VERSION = "geval-score/8"


def parse_score(text: str, scale: range) -> float:
    """The score in a form-filling answer (see `score_at`)."""
    return score_at(text, scale)[0]


def score_at(text: str, scale: range) -> tuple[float, int]:
    """The score of a form-filling answer and its offset in `text`: the judge's own final score
    line on the scale asked (`llmjury.reading.rating` holds the rules: `4`, `Coherence: 2`,
    `- Naturalness (1-3): 2`, `Score: 4.`, `4/5`, `2.5`; copied rubric anchors and restated scales
    are never the score; a competing score is ambiguous, another scale out_of_scale). A fraction
    on the scale is read: sampled scores are averaged, and a judge that answers `2.5` means it."""
    return Rating(PARSER_VERSION, scale, fractions=True).read_at(text)


def frequency_weighted(scores: list[float], scale: range) -> tuple[float, dict[int, float]]:
    """P(s) = occurrences(s) / n over the parsed samples; score = sum of P(s) * s. A fraction
    counts toward its two neighbours on the scale in proportion (`2.5`: half a 2, half a 3), so the
    score stays the samples' mean and the distribution stays on the scale."""
    counts: dict[int, float] = defaultdict(float)
    for score in scores:
        low = min(math.floor(score), scale.stop - 1)
        counts[low] += 1 - (score - low)
        if score > low:
            counts[low + 1] += score - low
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
    if not float(value).is_integer():
        return None  # a fraction (`2.5`): no score token to weigh
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
