"""G-Eval's criteria: each knows its scale, the label its evaluation form uses, and the names
datasets give the human dimension it is measured against (USR's "Maintains Context" is coherence)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Criterion:
    name: str
    low: int
    high: int
    label: str  # as the evaluation form names it

    @property
    def scale(self) -> range:
        return range(self.low, self.high + 1)


CRITERIA = {
    "overall": Criterion("overall", 1, 5, "Overall Quality"),
    "naturalness": Criterion("naturalness", 1, 3, "Naturalness"),
    "coherence": Criterion("coherence", 1, 3, "Coherence"),
    "engagingness": Criterion("engagingness", 1, 3, "Engagingness"),
    "groundedness": Criterion("groundedness", 0, 1, "Groundedness"),
    "understandability": Criterion("understandability", 0, 1, "Understandability"),
}
PAPER_CRITERIA = ("naturalness", "coherence", "engagingness", "groundedness")
#: Dimension names in the datasets the suite knows (USR's release, UniEval's form, DSTC9) -> criterion.
ALIASES = {"understandable": "understandability", "natural": "naturalness", "maintains context": "coherence",
           "maintains_context": "coherence", "engaging": "engagingness", "uses knowledge": "groundedness",
           "uses_knowledge": "groundedness", "overall quality": "overall", "score": "overall"}


def criterion_of(dimension: str, mapping: Mapping[str, str] = {}) -> str | None:
    """The criterion a dataset's dimension measures: the user's mapping first, then the criterion's
    own name or a known alias, compared without case; None when it maps to none."""
    key = dimension.strip().lower()
    named = {k.strip().lower(): v for k, v in mapping.items()}
    if key in named:
        return named[key]
    if key in CRITERIA:
        return key
    return ALIASES.get(key)


def parse_mapping(text: str | None) -> dict[str, str]:
    """`fluency=naturalness,on topic=coherence` into a dict (checked against the criteria)."""
    mapping = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        dimension, equals, criterion = part.partition("=")
        if not equals or criterion.strip() not in CRITERIA:
            raise ValueError(f"{part.strip()!r}: write DIMENSION=CRITERION with a criterion among "
                             f"{', '.join(CRITERIA)}")
        mapping[dimension.strip()] = criterion.strip()
    return mapping


def unknown(names: Iterable[str]) -> list[str]:
    return [name for name in names if name not in CRITERIA]
