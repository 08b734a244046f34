"""Gates: thresholds on summary metrics that decide the exit code.

A gate reads `path OP threshold`, where path walks the summary (`socratic.win_rate`,
`arena.rating[gpt-4o]`) and the threshold is a number or another path. A metric's point
estimate is used unless the path ends in `.low` or `.high`. When the metric's interval straddles
the threshold the gate is `inconclusive` (unless `--llm-gate-uncertain=pass` asks to decide on the
point estimate alone): the data cannot tell yet, and the exit code says so.
"""

from __future__ import annotations

import difflib
import operator
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from llmjury.errors import ConfigError

OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt, "==": operator.eq}
_GATE = re.compile(r"^\s*(?P<left>.+?)\s*(?P<op>>=|<=|==|>|<)\s*(?P<right>.+?)\s*$")
_STEP = re.compile(r"\.?([A-Za-z_][\w-]*)|\[([^\]]+)\]")
BOUNDS = {"low", "high", "value"}
#: The summary's run-wide sections: every other first step of a metric path is a family's name.
RUN_SECTIONS = frozenset({"run", "usage", "loading"})
Status = Literal["pass", "fail", "inconclusive"]


@dataclass(frozen=True)
class GateResult:
    gate: str
    status: Status
    value: float | None
    threshold: float | None
    interval: tuple[float | None, float | None] | None
    reason: str

    def line(self) -> str:
        ci = "" if self.interval is None else f" [{_fmt(self.interval[0])}, {_fmt(self.interval[1])}]"
        value, threshold = _fmt(self.value), _fmt(self.threshold)
        return f"{self.status.upper():<12} {self.gate}: value {value}{ci} vs {threshold}{self.reason}"


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4g}"


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
            right = parse_path(right_text, text)
        return cls(text=text.strip(), left=parse_path(match["left"], text), op=match["op"], right=right)

    @property
    def families(self) -> tuple[str, ...]:
        """The families whose sections the gate reads (both sides of the comparison)."""
        paths = [self.left] + ([self.right] if isinstance(self.right, tuple) else [])
        return tuple(dict.fromkeys(path[0] for path in paths if path[0] not in RUN_SECTIONS))

    def check(self, summary: dict[str, Any], *,
              uncertain: Literal["pass", "inconclusive"] = "inconclusive") -> GateResult:
        """Evaluate against a summary; an unknown metric fails with a message naming it."""
        try:
            value, interval = resolve(summary, self.left)
            threshold = self.right if isinstance(self.right, float) else resolve(summary, self.right)[0]
        except KeyError as exc:
            return GateResult(self.text, "fail", None, None, None, f" (no metric {exc.args[0]!r} in this run)")
        if value is None or threshold is None:
            return GateResult(self.text, "fail", value, threshold, interval, " (metric has no value: n = 0?)")
        passed = OPS[self.op](value, threshold)
        status: Status = "pass" if passed else "fail"
        reason = ""
        if interval is not None and None not in interval and interval[0] <= threshold <= interval[1]:
            reason = " (interval straddles the threshold)"
            if uncertain == "inconclusive":
                status = "inconclusive"
        return GateResult(self.text, status, value, threshold, interval, reason)


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


def resolve(summary: dict[str, Any], path: tuple[str, ...]) -> tuple[float | None, Interval | None]:
    """The number a path names, and the interval around it when it is a metric."""
    node: Any = summary
    bound = None
    for i, step in enumerate(path):
        if i == len(path) - 1 and step in BOUNDS and isinstance(node, dict) and "value" in node:
            bound = step
            break
        if not isinstance(node, dict) or step not in node:
            raise KeyError(".".join(path[: i + 1]))
        node = node[step]
    if isinstance(node, dict) and "value" in node:
        interval = (node.get("low"), node.get("high"))
        return node[bound or "value"], None if bound in {"low", "high"} else interval
    if isinstance(node, int | float) and not isinstance(node, bool):
        return float(node), None
    raise KeyError(".".join(path))


def check_selection(gates: Sequence[Gate], selected: Collection[str], known: Collection[str]) -> None:
    """Every family a gate reads has a case in this run, else a ConfigError before any model call:
    a gate on a family that `-k`, `-m` or `--llm-sample` left out (or a misspelt one) could only
    fail at the end, after the run has been paid for."""
    for gate in gates:
        for family in gate.families:
            if family in selected:
                continue
            these = f"this run's cases are of {', '.join(sorted(selected))}" if selected else "no case is selected"
            if family in known:
                raise ConfigError(f"gate {gate.text!r}: no case of family {family!r} is selected "
                                  f"(by -k, -m or --llm-sample); {these}")
            close = difflib.get_close_matches(family, [*known, *selected], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"gate {gate.text!r}: unknown family {family!r}{hint}; {these}")
