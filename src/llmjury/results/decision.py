"""The Decision block every report leads with: each gate's outcome and why, then each family's
headline metrics with their interval and, when the run was compared with a baseline, the change.

Built once from the typed `RunSummary` (and the gate results) as typed rows, so `summary.md`, the terminal
summary and `report.html` show the same decision in the same words and the same digits.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from llmjury.errors import ConfigError
from llmjury.headline import WILDCARD, expand, path_text
from llmjury.model import FamilySummary, GateResult, RunSummary
from llmjury.results.case_changes import case_note
from llmjury.results.flip_evidence import decisive
from llmjury.results.gates import BOUNDS, Gate, unwrap, why_not
from llmjury.stats import NO_INTERVAL, TOO_FEW

if TYPE_CHECKING:
    from llmjury.family import AnyFamily

#: Headline rows a family shows in the Decision block; the rest are in its details.
HEADLINE_ROWS = 8
_OP = re.compile(r">=|<=|==|>|<")


def sig3(x: float | None) -> str:
    """Three significant digits, never a 16-digit float; ratings (>= 1000) as whole numbers."""
    if x is None:
        return "n/a"
    if abs(x) >= 1000:
        return f"{x:.0f}"
    return f"{x:.3g}"


def signed(x: float | None) -> str:
    """A change, with its sign always shown."""
    return "n/a" if x is None else ("+" if x > 0 else "") + sig3(x)


def interval(low: float | None, high: float | None, fmt: Any = sig3) -> str:
    """`[low, high]`, or nothing when the metric has no interval."""
    return "" if low is None or high is None else f"[{fmt(low)}, {fmt(high)}]"


def metric_text(m: dict[str, Any]) -> str:
    """A metric as `value [low, high]`, three significant digits; a figure over too few items for an
    interval says so (its method carries the reason, `llmjury.stats.metric`)."""
    if m.get("value") is None:
        return "n/a"
    ci = interval(m.get("low"), m.get("high"))
    method = m.get("method") or ""
    if not ci and (TOO_FEW in method or NO_INTERVAL in method):
        ci = "[too few to tell]" if TOO_FEW in method else "[no interval]"
    return f"{sig3(m['value'])} {ci}".rstrip()


def is_metric(node: Any) -> bool:
    return isinstance(node, dict) and "value" in node and "n" in node


def metric_rows(section: Mapping[str, Any], prefix: str = "", hidden: frozenset[str] = frozenset()
                ) -> list[tuple[str, dict[str, Any]]]:
    """Every metric (a dict with value/low/high/n) in a section, with its gate path (bracketing the
    steps a gate cannot write after a dot, so every path printed is one `--llm-gate` accepts); keys
    in `hidden` (bulky sub-sections a family renders itself) are left out."""
    head = tuple(prefix.rstrip(".").split(".")) if prefix else ()
    return [(path_text(steps), metric) for steps, metric in _metric_leaves(section, head, hidden)]


def _metric_leaves(section: Mapping[str, Any], steps: tuple[str, ...], hidden: frozenset[str]
                   ) -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    rows: list[tuple[tuple[str, ...], dict[str, Any]]] = []
    for key, value in section.items():
        if key in hidden or (key == "unscored_rate" and not steps):
            continue
        if is_metric(value):
            rows.append(((*steps, str(key)), value))
        elif isinstance(value, dict):
            rows.extend(_metric_leaves(value, (*steps, str(key)), hidden))
    return rows


@dataclass(frozen=True)
class Change:
    """A headline metric's change against the baseline run, on the cases both share."""

    value: float | None
    low: float | None
    high: float | None
    shared_cases: int
    only_current: int
    only_baseline: int
    #: The smallest change the comparison can detect at its number of shared cases, when computed.
    mde: float | None = None
    baseline_value: float | None = None
    current_value: float | None = None
    #: The cases the change was computed on, when fewer than the shared ones (those scored in both runs).
    compared: int | None = None

    def text(self) -> str:
        ci = interval(self.low, self.high, signed)
        on = f"{self.shared_cases} shared cases" if self.compared is None or self.compared >= self.shared_cases \
            else f"{self.compared} of {self.shared_cases} shared cases (scored in both runs)"
        parts = [f"{signed(self.value)} {ci}".rstrip(), on]
        if self.mde is not None:
            parts.append(f"detects ±{sig3(abs(self.mde))}")
        if self.only_current or self.only_baseline:
            parts.append(f"{self.only_current} only here, {self.only_baseline} only in the baseline")
        return ", ".join(parts)


@dataclass(frozen=True)
class HeadlineRow:
    """One headline metric of a family: its gate path, figure and, with a baseline, its change."""

    #: The path as a gate and the comparison write it (`rating[gpt-3.5-turbo]`).
    path: str
    metric: dict[str, Any]
    change: Change | None = None

    @property
    def value(self) -> str:
        return metric_text(self.metric)


@dataclass(frozen=True)
class FamilyHeadline:
    """A family's counts and headline rows, and how many metric rows its details hold beyond them."""

    family: str
    counts: str
    rows: list[HeadlineRow]
    more_headline: int
    more_metrics: int


@dataclass(frozen=True)
class GateLine:
    """A gate's outcome in words: status, value (for a delta gate, the change), its interval, the
    threshold, what decided (the point estimate, the whole interval, or one of its ends), and why."""

    status: str
    gate: str
    value: str
    interval: str
    threshold: str
    why: str
    decided_by: str = ""
    #: The figures behind the words, for drawing (the comparison view).
    point: float | None = None
    low: float | None = None
    high: float | None = None
    limit: float | None = None
    op: str = ""


@dataclass(frozen=True)
class FlippedCase:
    """A shared case whose per-case figure moved between the baseline and this run."""

    case_id: str
    metric: str
    baseline: Any
    current: Any
    change: float | None
    worse: bool
    #: A flip between 0 and 1 (right to wrong), not a partial move such as judge noise.
    decisive: bool = True
    #: The system's answer and the judge's reason in each run, when the verdicts hold them.
    baseline_answer: str | None = None
    current_answer: str | None = None
    baseline_reason: str | None = None
    current_reason: str | None = None


@dataclass(frozen=True)
class Flips:
    """A family's flipped cases, the worse direction first, and how many the comparison counted."""

    family: str
    cases: list[FlippedCase]
    total: int


@dataclass(frozen=True)
class Decision:
    """What a reader needs first: did the run pass, on what figures, and is it whole."""

    gates: list[GateLine]
    families: list[FamilyHeadline]
    complete: bool = True
    stopped: str = ""
    baseline: str = ""
    baseline_note: str = ""
    #: The level of the comparison's paired intervals (`--llm-compare-confidence`), when compared.
    compare_confidence: float = 0.95
    flips: list[Flips] = field(default_factory=list)
    #: Per compared family whose cases are not the baseline's: added, dropped and changed ones, in words.
    case_notes: list[str] = field(default_factory=list)

    @property
    def change_label(self) -> str:
        """How a table heads the change column: `change [92% CI]`."""
        return f"change [{self.compare_confidence:.0%} CI]"


#: How the Decision block names the figure that decided a gate (`GateResult.decided_by`).
DECIDERS = {"low": "low end", "high": "high end", "value": "point estimate"}


def gate_line(g: GateResult) -> GateLine:
    """A gate result with the reason it came out as it did: the value is the metric's point estimate
    (a delta gate's: the change), the interval its interval, whatever bound the gate names; a
    decided gate says which figure decided (an end of the interval, or the point estimate)."""
    found = _OP.search(g.gate)
    op = found.group(0) if found else "vs"
    low, high = g.interval if g.interval is not None else (None, None)
    ci = interval(low, high)
    limit = sig3(g.threshold)
    decider = g.decided_by or "value"
    if g.value is None or g.threshold is None:
        why, decided_by = unwrap(g.reason) or "no value", ""
    elif g.status == "inconclusive" and not ci:  # no interval to straddle: too few items, say so
        why, decided_by = unwrap(g.reason), ""
    elif g.status == "inconclusive":
        why, decided_by = f"the interval {ci} straddles {limit}: more cases would decide", "interval straddles"
    else:
        holds = "holds" if g.status == "pass" else "does not hold"
        figure = {"low": low, "high": high}.get(decider, g.value)
        # a whole interval decided: its worst end holds (so all of it does), or even its best end fails
        whole = "" if g.reason else ", so all of it does" if g.status == "pass" else ""
        even = "even " if g.status == "fail" and not g.reason else ""
        why = (f"{sig3(figure)} {op} {limit} {holds}" if decider == "value"
               else f"{even}the interval's {decider} end {sig3(figure)} {op} {limit} {holds}{whole}")
        if g.reason:  # decided on one figure although the interval straddles (--llm-gate-uncertain pass)
            why += f"; {g.reason.strip(' ()')}"
        decided_by = DECIDERS.get(decider, str(decider))
    return GateLine(g.status, g.gate, sig3(g.value), ci, limit, why, decided_by, g.value, low, high, g.threshold,
                    op if found else "")


def _left(gate: str) -> tuple[str, ...] | None:
    """The metric path a gate reads, or None for text that is not a gate."""
    try:
        return Gate.parse(gate).left
    except ConfigError:
        return None


def _change(compared: dict[str, Any], steps: tuple[str, ...]) -> Change | None:
    """The comparison entry of a metric, keyed as a gate writes its path (`rating[gpt-3.5-turbo]`)."""
    entry = compared.get(path_text(steps))
    if not isinstance(entry, dict):
        return None
    delta = entry.get("delta") or {}
    return Change(delta.get("value"), delta.get("low"), delta.get("high"), int(entry.get("shared_cases") or 0),
                  int(entry.get("only_current") or 0), int(entry.get("only_baseline") or 0), delta.get("mde"),
                  entry.get("baseline"), entry.get("current"), delta.get("n"))


def headline_rows(name: str, section: FamilySummary, comparison: dict[str, Any] | None,
                  headline: tuple[str, ...] = (), tree: Mapping[str, Any] | None = None) -> list[HeadlineRow]:
    """A family's headline metrics (from its summary section, else the family's declaration);
    `tree` is the section as summary.json holds it, when the caller has it already."""
    compared = ((comparison or {}).get("families") or {}).get(name) or {}
    rows: list[HeadlineRow] = []
    tree = section.tree() if tree is None else tree
    for path in section.headline or headline:
        found = expand(tree, [path])
        depth = len(path.split(".")) + 1
        if WILDCARD not in path and len(found) > 1 and all(len(steps) == depth for steps, _ in found):
            # a table of like figures (ratings by model): best first, as a leaderboard reads
            found.sort(key=lambda leaf: -(leaf[1]["value"] if leaf[1]["value"] is not None else float("-inf")))
        rows += [HeadlineRow(path_text(steps), m, _change(compared, steps)) for steps, m in found]
    return rows


def counts_text(section: FamilySummary) -> str:
    reasons = ", ".join(f"{k}: {v}" for k, v in (section.unscored_causes or section.unscored_reasons).items())
    return (f"{section.cases} cases, {section.verdicts} verdicts, {section.unscored} unscored"
            + (f" ({reasons})" if reasons else ""))


def hidden_keys(families: Mapping[str, AnyFamily], name: str) -> frozenset[str]:
    """The section keys a family's own Markdown renders, left out of the generic metric tables."""
    family = families.get(name)
    return frozenset(family.hidden_from_tables if family is not None else ())


def decision_of(summary: RunSummary, gates: list[GateResult], families: Mapping[str, AnyFamily]) -> Decision:
    """The run's Decision block, with each family's hidden keys and declared headline."""
    names = summary.run.families
    return decide(summary, gates, {name: hidden_keys(families, name) for name in names},
                  {name: families[name].headline for name in names if name in families})


def decide(summary: RunSummary, gates: list[GateResult], hidden: dict[str, frozenset[str]] | None = None,
           headlines: dict[str, tuple[str, ...]] | None = None) -> Decision:
    """The Decision block of a summary: gates, then each family's headline metrics."""
    comparison = summary.comparison
    families = []
    for name in summary.run.families:
        section = summary.families[name]
        tree = section.tree()
        rows = headline_rows(name, section, comparison, (headlines or {}).get(name, ()), tree)
        every = {path for path, _ in metric_rows(tree, hidden=(hidden or {}).get(name, frozenset()))}
        shown = rows[:HEADLINE_ROWS]
        more = (every | {r.path for r in rows}) - {r.path for r in shown}
        families.append(FamilyHeadline(name, counts_text(section), shown, len(rows) - len(shown), len(more)))
    decision = Decision([gate_line(g) for g in gates], families, complete=summary.complete,
                        stopped=_stopped_text(summary.run.stopped or {}), flips=flips(summary, gates))
    if comparison:
        differ = comparison.get("judges_differ") or []
        note = "; ".join(f"{d.get('field')}: `{d.get('current')}` here, `{d.get('baseline')}` in the baseline"
                         for d in differ)
        if not comparison.get("compared"):
            note = ("not compared: the judges differ (" + note + ")" if note
                    else f"**not compared**: {why_not(comparison)}")
        elif note:
            note = "compared although the judges differ (" + note + ")"
        origin = f" ({comparison['origin']})" if comparison.get("origin") else ""
        notes = [line for name, compared in sorted((comparison.get("families") or {}).items())
                 if isinstance(compared, dict) and (line := case_note(name, compared)) is not None]
        decision = replace(decision, baseline=str(comparison.get("baseline", "")) + origin, baseline_note=note,
                           case_notes=notes,
                           compare_confidence=float(comparison.get("confidence") or 0.95))
    return decision


def gate_target(gate: str) -> tuple[str, str, bool] | None:
    """(family, metric key as the comparison writes it, whether the gate reads the change) of a gate."""
    left = _left(gate)
    if left is None or len(left) < 2:
        return None
    delta = "delta" in left[1:]
    steps = left[1:left.index("delta", 1)] if delta else left[1:]
    steps = steps[:-1] if len(steps) > 1 and steps[-1] in BOUNDS else steps
    return left[0], path_text(steps), delta


def lower_is_better(gates: list[GateResult]) -> set[tuple[str, str]]:
    """(family, metric key) pairs a `<=` or `<` gate bounds from above: a rise is worse there."""
    found = set()
    for g in gates:
        target, op = gate_target(g.gate), _OP.search(g.gate)
        if target is not None and op is not None and op.group(0) in ("<=", "<"):
            found.add(target[:2])
    return found


def flips(summary: RunSummary, gates: list[GateResult]) -> list[Flips]:
    """Each compared family's flipped cases (the comparison's `changed_cases`): decisive flips (0 to 1
    or back) before partial moves, the worse direction first within each: a drop, or a rise where a
    gate says lower is better. Nothing when the comparison has none."""
    families = ((summary.comparison or {}).get("families")) or {}
    lower = lower_is_better(gates)
    found = []
    for name, compared in families.items():
        listed = compared.get("changed_cases") if isinstance(compared, dict) else None
        if not isinstance(listed, list):
            continue
        cases = []
        for entry in listed:
            change = entry.get("change")
            rise_is_worse = (name, str(entry.get("metric", ""))) in lower
            worse = change is not None and (change > 0 if rise_is_worse else change < 0)
            cases.append(FlippedCase(str(entry.get("case_id", "")), str(entry.get("metric", "")),
                                     entry.get("baseline"), entry.get("current"), change, worse,
                                     decisive(entry.get("baseline"), entry.get("current")),
                                     entry.get("baseline_answer"), entry.get("current_answer"),
                                     entry.get("baseline_reason"), entry.get("current_reason")))
        # Right to wrong first, then the other decisive flips, then partial moves (noise), worse first.
        cases.sort(key=lambda c: (not c.decisive, not c.worse, -abs(c.change) if c.change is not None else 0.0))
        found.append(Flips(name, cases, int(compared.get("changed_total") or len(cases))))
    return found


def _stopped_text(stopped: dict[str, Any]) -> str:
    if not stopped:
        return ""
    done, total = stopped.get("tests_finished"), stopped.get("tests_collected")
    progress = f" after {done} of {total} tests" if done is not None and total else ""
    progress = progress or (f" after {done} tests" if done is not None else "")
    planned = stopped.get("planned_verdicts")
    salvaged = f" ({planned} verdicts from planned cases whose tests had not run)" if planned else ""
    return f"stopped by {stopped.get('by', 'an interruption')}{progress}{salvaged}"
