"""report.html's comparison view: each compared headline metric on the baseline and on this run, and
its change drawn as an interval against zero and against every gate on that change.

Drawn as small inline SVG (templates/compare.html.j2, positions computed here), not with matplotlib:
one row per metric, each on its own scale (a rating moves by tens, a rate by hundredths), and every
label escaped like the rest of the page. It needs only the summary's `comparison` section, so a
user's family gets it too.
"""

from __future__ import annotations

from dataclasses import dataclass

from llmjury.reporting.templates import templates
from llmjury.results.decision import Decision, GateLine, gate_target, sig3, signed

WIDTH, HEIGHT, PAD = 300, 42, 14
#: Colours by gate status; an interval with no gate on it is drawn neutral.
COLOURS = {"pass": "#176f2c", "fail": "#b00020", "inconclusive": "#8a5a00", "": "#1f5fa8"}


@dataclass(frozen=True)
class Compared:
    """One headline metric of a family, on both runs, with its change and the gates on that change."""

    family: str
    path: str
    baseline: float | None
    current: float | None
    change: float | None
    low: float | None
    high: float | None
    mde: float | None
    gates: list[GateLine]


def compared_rows(decision: Decision) -> list[Compared]:
    """Every headline row the comparison computed a change for, with the delta gates that read it."""
    rows = []
    for family in decision.families:
        for row in family.rows:
            if row.change is None:
                continue
            gates = [g for g in decision.gates if gate_target(g.gate) == (family.family, row.path, True)]
            c = row.change
            rows.append(Compared(family.family, row.path, c.baseline_value, c.current_value, c.value, c.low, c.high,
                                 c.mde, gates))
    return rows


def view(decision: Decision) -> str:
    """The comparison view's HTML (templates/compare.html.j2), or a line saying why there is none."""
    rows = compared_rows(decision) if decision.baseline else []
    return templates().get_template("compare.html.j2").render(
        decision=decision, rows=[(r, bar(r)) for r in rows], sig3=sig3, signed=signed).rstrip("\n")


@dataclass(frozen=True)
class Mark:
    """A vertical line on the change's scale (zero, or a gate's threshold) and its label."""

    x: float
    y1: float
    y2: float
    colour: str
    text: str
    text_y: float
    text_colour: str
    gate: str = ""
    right: bool = False


@dataclass(frozen=True)
class Bar:
    """Where the change's drawing puts its marks, interval (x, width) and point, and its words."""

    marks: list[Mark]
    interval: tuple[float, float] | None
    point: float
    colour: str
    label: str
    width: int = WIDTH
    height: int = HEIGHT


def bar(r: Compared) -> Bar | None:
    """The change's interval (a bar), its point (a dot), zero (grey) and each gate's threshold (dashed,
    coloured by the gate's outcome), on a scale that holds them all; None when there is no change."""
    if r.change is None:
        return None
    limits = [g.limit for g in r.gates if g.limit is not None]
    marks = [x for x in (r.change, r.low, r.high, 0.0, *limits) if x is not None]
    lo, hi = min(marks), max(marks)
    span = (hi - lo) or 1.0
    lo, hi = lo - 0.08 * span, hi + 0.08 * span

    def x(v: float) -> float:
        return round(PAD + (v - lo) / (hi - lo) * (WIDTH - 2 * PAD), 1)

    status = next((g.status for g in r.gates if g.status == "fail"), r.gates[0].status if r.gates else "")
    colour = COLOURS.get(status, COLOURS[""])
    drawn = [Mark(x(0.0), 12, HEIGHT - 12, "#999", "0", HEIGHT - 2, "#777")]
    for i, g in enumerate(r.gates):
        if g.limit is None:
            continue
        stroke = COLOURS.get(g.status, COLOURS[""])
        # labels alternate above and below the bar, and read inwards from either edge, so two close
        # thresholds do not print over each other
        drawn.append(Mark(x(g.limit), 11, HEIGHT - 11, stroke, f"{g.op} {sig3(g.limit)}",
                          9 if i % 2 == 0 else HEIGHT - 2, stroke, g.gate, x(g.limit) > WIDTH / 2))
    interval = None if r.low is None or r.high is None else (x(r.low), max(x(r.high) - x(r.low), 1.0))
    label = f"change {signed(r.change)}" + ("" if r.low is None else f" [{signed(r.low)}, {signed(r.high)}]")
    return Bar(drawn, interval, x(r.change), colour, label)
