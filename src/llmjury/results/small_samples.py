"""What a comparison may claim when few cases, or none, changed: never certainty from a small sample.

A paired interval built from the cases that changed has no width when none did, so an A/A run of
three cases would "pass with certainty". With no case changed among n, the share of cases that
could change, at `confidence`, is at most Clopper-Pearson's exact bound 1 - (alpha/2)^(1/n) (the
bound for zero events in n trials); the difference of two means of per-case values cannot exceed
that share times the values' range, either way. McNemar's exact test on zero discordant cases gives
p = 1, and 0 lies inside this interval: the two never disagree.
"""

from __future__ import annotations

#: The words a delta's method gains when its interval is this bound.
NO_CHANGE = "no case changed: exact bound on the share of cases that could (Clopper-Pearson, zero of n)"


def no_change_interval(n: int, span: float, confidence: float) -> tuple[float, float]:
    """The interval of a difference when none of `n` paired cases changed, per-case values spanning `span`."""
    if n < 1:
        return -span, span
    share = 1 - ((1 - confidence) / 2) ** (1 / n)
    return -share * span, share * span
