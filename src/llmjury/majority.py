"""Robust majority over repeated votes (seed 003's rule, for any number of votes)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

Confidence = Literal["unanimous", "majority", "no_consensus"]


@dataclass(frozen=True)
class Majority:
    winner: str
    confidence: Confidence
    counted: int
    counts: dict[str, int]


def robust_verdict(votes: list[str]) -> Majority | None:
    """Seed 003's rule for any k: the most common vote wins if no other vote ties it at the top
    and it has two or more votes (or is the only vote); otherwise the case is a tie with
    `no_consensus`. Unscored runs are left out before calling; None when no run counted."""
    if not votes:
        return None
    counts = Counter(votes)
    ranked = counts.most_common()
    top_vote, top = ranked[0]
    alone_at_top = len(ranked) == 1 or ranked[1][1] < top
    if top == len(votes):
        return Majority(top_vote, "unanimous", len(votes), dict(counts))
    if alone_at_top and top >= 2:
        return Majority(top_vote, "majority", len(votes), dict(counts))
    return Majority("tie", "no_consensus", len(votes), dict(counts))
