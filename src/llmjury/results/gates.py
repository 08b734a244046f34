"""Gates: thresholds on summary metrics that decide the exit code.

A gate reads `path OP threshold`, where path walks the summary (`socratic.win_rate`,
`arena.rating[gpt-4o]`) and the threshold is a number or another path. Every gate on a metric
with an interval has three outcomes: it passes when the whole interval satisfies it, fails when
no point of the interval does, and is `inconclusive` in between (the data cannot tell yet; the exit
code says so). A bound gate (`M.low>=t`, `M.high<=t`) passes on its named bound and fails only when
even the other bound is on the wrong side, so noise that moves a bound across the threshold makes
it inconclusive, not failed; on a metric with no interval (too few items to tell) it is inconclusive
too. `==` is refused at start-up on a family's metric (and fails on one found at the end): it
could pass only if every point of the interval equalled the threshold.
`--llm-gate-uncertain=pass` decides an inconclusive gate on the point estimate (on the named bound
for a bound gate) instead.

With a baseline run, `FAMILY.METRIC.delta` names the paired difference of a headline metric from
the baseline (the summary's `comparison` section), `.delta.low` and `.delta.high` its interval:
`socratic.win_rate.delta>=-0.02` passes when the win rate surely did not drop by more than two points.
A delta gate on a run that could not be compared (no baseline found, judges that differ) is
`not compared` (exit 12): never a pass.
"""

from __future__ import annotations

import difflib
import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from llmjury.errors import ConfigError
from llmjury.model import GateResult, RunSummary
from llmjury.results.case_changes import exceeded
from llmjury.results.gate_paths import METRIC_STEPS

OPS: dict[str, Callable[[float, float], bool]] = {">=": operator.ge, "<=": operator.le, ">": operator.gt,
                                                  "<": operator.lt, "==": operator.eq}
_GATE = re.compile(r"^\s*(?P<left>.+?)\s*(?P<op>>=|<=|==|>|<)\s*(?P<right>.+?)\s*$")
_STEP = re.compile(r"\.?([A-Za-z_][\w-]*)|\[([^\]]+)\]")
BOUNDS = set(METRIC_STEPS)
#: The step after a headline metric that names its difference from the baseline run.
DELTA = "delta"
#: The summary's run-wide sections: every other first step of a metric path is a family's name.
RUN_SECTIONS = frozenset({"run", "usage", "loading", "comparison", "judge"})
Status = Literal["pass", "fail", "inconclusive", "not compared"]


#: The figure that decided a gate: its interval's low or high bound, or its point value.
Decider = Literal["low", "high", "value"]
#: summary.json as gate paths walk it (`RunSummary.tree`).
Tree = Mapping[str, Any]


@dataclass(frozen=True)
class Gate:
    text: str
    left: tuple[str, ...]
    op: str
    right: float | tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> Gate:
        match = _GATE.match(text)
        if not match:
            raise ConfigError(f"gate {text!r}: write METRIC OP THRESHOLD, e.g. socratic.win_rate>=0.55")
        right_text = match["right"]
        try:
            right: float | tuple[str, ...] = float(right_text)
        except ValueError:
            right = _threshold_path(right_text, text)
        if isinstance(right, float) and not math.isfinite(right):
            raise ConfigError(f"gate {text!r}: the threshold {right_text.strip()!r} is not a finite number; "
                              "a gate compares with a number such as 0.55")
        left = parse_path(match["left"], text)
        if len(left) < 2:
            raise ConfigError(f"gate {text!r}: {match['left']!r} is not a metric path: write FAMILY.METRIC, "
                              "e.g. socratic.win_rate>=0.55")
        return cls(text=text.strip(), left=left, op=match["op"], right=right)

    @property
    def families(self) -> tuple[str, ...]:
        """The families whose sections the gate reads (both sides of the comparison)."""
        paths = [self.left] + ([self.right] if isinstance(self.right, tuple) else [])
        return tuple(dict.fromkeys(path[0] for path in paths if path[0] not in RUN_SECTIONS))

    def check(self, summary: RunSummary, *,
              uncertain: Literal["pass", "inconclusive"] = "inconclusive") -> GateResult:
        """Evaluate against a summary; an unknown metric fails with a message naming it. Paths walk
        the summary as `summary.json` holds it, the names summary.md prints."""
        tree = summary.tree()
        try:
            value, interval, bound = resolve(tree, self.left)
            threshold = self.right if isinstance(self.right, float) else _number(tree, self.right)
        except NotCompared as exc:  # an outcome of its own: the step's setting decides what it makes of it
            return GateResult(self.text, "not compared", None, None, None, f" ({exc.args[0]})")
        except NotTheSameCases as exc:  # never a pass, whatever the figures on what is left
            return GateResult(self.text, "inconclusive", None, None, None, f" ({exc.args[0]})")
        except MissingMetric as exc:
            # A custom family's metrics are named by its tests, known only once they have run.
            hint = f"; did you mean {exc.nearest!r}?" if exc.nearest else ""
            fixed = self.right if isinstance(self.right, float) else None
            return GateResult(self.text, "fail", None, fixed, None,
                              f" (no metric {exc.path!r} in this run{hint}{_unscored_note(tree, self.left[0])})")
        named = value if bound is None else (interval or (None, None))[0 if bound == "low" else 1]
        holds = OPS[self.op]
        if named is None and value is not None and threshold is not None:
            # A bound gate on a figure with no interval (too few items, no spread): nothing to decide on.
            if uncertain == "pass":
                return GateResult(self.text, "pass" if holds(value, threshold) else "fail", value, threshold, None,
                                  f" (no interval, so no {bound} bound; decided on the point estimate)", "value")
            return GateResult(self.text, "inconclusive", value, threshold, None,
                              f" (no interval, so no {bound} bound: its method in the summary says why)")
        if named is None or threshold is None:
            empty = ("the metric has no value: nothing it counts was scored" if named is None else
                     f"the threshold's metric {'.'.join(self.right) if isinstance(self.right, tuple) else ''} "
                     "has no value")
            return GateResult(self.text, "fail", value, threshold, interval,
                              f" ({empty}{_unscored_note(tree, self.left[0])})")
        low, high = interval if interval is not None else (None, None)
        if self.op == "==" and bound is None and low is not None and high is not None and low < high:
            return GateResult(self.text, "fail", value, threshold, interval, f" ({EQUALITY_ON_INTERVAL})")
        if interval is not None and (low is None or high is None) and uncertain != "pass" \
                and holds(named, threshold):
            # A metric with no interval (too few items) is never passed on its point value (2 of 2 tells
            # as little as 4 of 5); one whose point already misses the threshold still fails.
            return GateResult(self.text, "inconclusive", value, threshold, interval,
                              " (no interval: too few items to tell; its method in the summary says why)")
        if low is None or high is None:  # a count, or --llm-gate-uncertain pass: the figure alone decides
            status: Status = "pass" if holds(named, threshold) else "fail"
            return GateResult(self.text, status, value, threshold, interval, "", bound or "value")
        worst, best = _BOUNDS_OF[self.op]
        if holds(named, threshold) and (bound is not None or (holds(low, threshold) and holds(high, threshold))):
            return GateResult(self.text, "pass", value, threshold, interval, "", bound or worst)
        if not _holds_anywhere(self.op, low, high, threshold):
            return GateResult(self.text, "fail", value, threshold, interval, "", best)
        if uncertain == "pass":  # decide on the named figure alone
            status = "pass" if holds(named, threshold) else "fail"
            on = "the point estimate" if bound is None else f"the {bound} bound"
            return GateResult(self.text, status, value, threshold, interval,
                              f" (interval straddles the threshold; decided on {on})", bound or "value")
        return GateResult(self.text, "inconclusive", value, threshold, interval, " (interval straddles the threshold)")


#: Why `==` never passes on a figure with an interval: the whole interval would have to equal it.
EQUALITY_ON_INTERVAL = "== never passes on a figure with an interval (every point of it would have to equal the " \
    "threshold); write >= or <=, or name its .low or .high"


#: Per operator, the bound that must hold for the whole interval to (its worst case) and the bound
#: whose failure means no point of it does (its best case).
_BOUNDS_OF: dict[str, tuple[Decider, Decider]] = {">=": ("low", "high"), ">": ("low", "high"),
                                                  "<=": ("high", "low"), "<": ("high", "low"),
                                                  "==": ("value", "value")}


def _holds_anywhere(op: str, low: float, high: float, threshold: float) -> bool:
    """Does some point of [low, high] satisfy `x OP threshold`?"""
    if op == "==":
        return low <= threshold <= high
    return OPS[op](low, threshold) or OPS[op](high, threshold)


def _unscored_note(summary: Tree, family: str) -> str:
    """What a family's unscored verdicts say about a metric that is missing or empty: a judge that
    answered nothing readable leaves its metrics out, which is the cause to show, not the name."""
    section = summary.get(family)
    if not isinstance(section, dict) or not section.get("unscored"):
        return ""
    causes = section.get("unscored_causes") or {}
    why = f": {', '.join(f'{cause} {count}' for cause, count in causes.items())}" if causes else ""
    return f"; {family} has {section['unscored']} of {section.get('verdicts', '?')} verdicts unscored{why}"


def _number(summary: Tree, path: tuple[str, ...]) -> float | None:
    """The figure a threshold path names: a metric's point, or the bound the path ends in."""
    value, interval, bound = resolve(summary, path)
    return value if bound is None else (interval or (None, None))[0 if bound == "low" else 1]


def _threshold_path(text: str, gate: str) -> tuple[str, ...]:
    """A threshold that is not a number must name a metric (`FAMILY.METRIC`), not one bare word."""
    try:
        path = parse_path(text, gate)
    except ConfigError:
        path = ()
    if len(path) < 2:
        raise ConfigError(f"gate {gate!r}: the threshold {text!r} is neither a number nor a metric path "
                          "such as socratic.win_rate")
    return path


def parse_path(text: str, gate: str) -> tuple[str, ...]:
    steps: list[str] = []
    position = 0
    text = text.strip()
    if not text:
        raise ConfigError(f"gate {gate!r}: a side of the comparison is empty")
    while position < len(text):
        match = _STEP.match(text, position)
        if not match or match.end() == position:
            raise ConfigError(f"gate {gate!r}: cannot read metric path {text!r} at {text[position:]!r}")
        steps.append(match[1] or match[2])
        position = match.end()
    return tuple(steps)


Interval = tuple[float | None, float | None]


class NotCompared(KeyError):
    """A delta gate on runs that were not compared (their judges differ)."""


class NotTheSameCases(KeyError):
    """A delta gate on a family whose run dropped or changed too many of the baseline's cases."""


class MissingMetric(KeyError):
    """A path the summary does not hold, with the nearest one it does (or None)."""

    def __init__(self, path: str, nearest: str | None = None) -> None:
        super().__init__(path)
        self.path, self.nearest = path, nearest


def delta_split(path: tuple[str, ...]) -> tuple[str, tuple[str, ...], tuple[str, ...]] | None:
    """`(family, metric steps, steps after delta)` when the path names a difference from the baseline."""
    if path[0] in RUN_SECTIONS or DELTA not in path[2:]:
        return None
    at = path.index(DELTA, 2)
    return path[0], path[1:at], path[at + 1:]


def unwrap(reason: str) -> str:
    """A gate result's reason without its outer parentheses, keeping those inside it ("(model)")."""
    reason = reason.strip()
    return reason[1:-1] if reason.startswith("(") and reason.endswith(")") else reason


def why_not(comparison: Mapping[str, Any]) -> str:
    """Why a run was not compared, in words (a section written before `why_not` existed: its judges)."""
    if comparison.get("why_not"):
        return str(comparison["why_not"])
    fields = ", ".join(dict.fromkeys(d["field"] for d in comparison.get("judges_differ", [])))
    return f"the judges differ ({fields})"


def resolve_delta(summary: Tree, path: tuple[str, ...]) -> Resolved:
    """A headline metric's difference from the baseline, from the summary's `comparison` section."""
    split = delta_split(path)
    if split is None:
        raise MissingMetric(".".join(path))
    family, metric, rest = split
    comparison = summary.get("comparison")
    if comparison is None:
        raise MissingMetric(".".join(path))
    if not comparison.get("compared", True):
        raise NotCompared(f"not compared with the baseline: {why_not(comparison)}")
    compared = comparison.get("families", {}).get(family, {})
    for key, row in compared.items():
        if isinstance(row, dict) and DELTA in row and parse_path(key, key) == metric:
            if (why := exceeded(compared)) is not None:
                raise NotTheSameCases(why)
            return resolve(row, (DELTA, *rest))
    raise MissingMetric(".".join(path))


#: A path's point value, the interval around it (when it is a metric) and the bound it names, if any.
Resolved = tuple[float | None, Interval | None, Literal["low", "high"] | None]


def resolve(summary: Tree, path: tuple[str, ...]) -> Resolved:
    """The metric or number a path names: its point value, interval, and the bound the path ends in."""
    if delta_split(path) is not None and "comparison" in summary:
        return resolve_delta(summary, path)
    node: Any = summary
    bound: Literal["low", "high"] | None = None
    for i, step in enumerate(path):
        if i == len(path) - 1 and step in BOUNDS and isinstance(node, dict) and "value" in node:
            bound = "low" if step == "low" else "high" if step == "high" else None  # `.value` is the point
            break
        if not isinstance(node, dict) or step not in node:
            keys = [str(key) for key in node] if isinstance(node, dict) else []
            close = difflib.get_close_matches(step, keys, n=1)
            raise MissingMetric(".".join(path[: i + 1]), ".".join((*path[:i], close[0])) if close else None)
        node = node[step]
    if isinstance(node, dict) and "value" in node:
        return _figure(node.get("value")), (_figure(node.get("low")), _figure(node.get("high"))), bound
    if _figure(node) is not None:
        return _figure(node), None, None
    raise MissingMetric(".".join(path))


def _figure(x: object) -> float | None:
    """A number a gate can compare, or None (no value, or one that is not a number: `n/a` in a
    hand-edited summary must fail the gate as "no value", not stop the session end at `<`)."""
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None
