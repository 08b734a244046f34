"""A gate's outcome on an interval, as `llmjury.results.gates.Gate.check` decides one: used at every
look of a sequential run, where the interval is a confidence sequence's and may be acted on at once."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Literal

OPS: dict[str, Callable[[float, float], bool]] = {">=": operator.ge, "<=": operator.le, ">": operator.gt,
                                                  "<": operator.lt, "==": operator.eq}
Outcome = Literal["pass", "fail"]


def decided(op: str, threshold: float, low: float, high: float) -> Outcome | None:
    """`pass` when every point of [low, high] satisfies `x OP threshold`, `fail` when none does,
    None while the interval straddles the threshold (the run must look again). An `==` gate can
    only fail (no interval proves equality)."""
    holds = OPS[op]
    if op == "==":
        return "fail" if not low <= threshold <= high else None
    if holds(low, threshold) and holds(high, threshold):
        return "pass"
    if not (holds(low, threshold) or holds(high, threshold)):
        return "fail"
    return None
