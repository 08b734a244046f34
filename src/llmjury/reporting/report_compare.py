"""report.html's comparison view: each compared headline metric on the baseline and on this run, and
its change drawn as an interval against zero and against every gate on that change.

Drawn as small inline SVG written here, not with matplotlib: one row per metric, each on its own
scale (a rating moves by tens, a rate by hundredths), and every label escaped like the rest of
the page. It needs only the summary's `comparison` section, so a user's family gets it too.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

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
    """The comparison view's HTML, or a line saying why there is none."""
    if not decision.baseline:
        return "<p>This run was not compared with a baseline (<code>--llm-baseline</code>).</p>"
    rows = compared_rows(decision)
    if not rows:
        return "<p>No headline metric was compared with the baseline.</p>"
    head = (f"<tr><th>metric</th><th>baseline</th><th>this run</th><th>{escape(decision.change_label)}</th>"
            "<th>the change against 0 (grey) and each gate (dashed)</th><th>gates</th></tr>")
    body = "".join(_row(r) for r in rows)
    return f'<table id="comparison"><thead>{head}</thead><tbody>{body}</tbody></table>'


def _row(r: Compared) -> str:
    ci = "" if r.low is None or r.high is None else f" [{signed(r.low)}, {signed(r.high)}]"
    mde = f"<br><small>detects ±{escape(sig3(abs(r.mde)))}</small>" if r.mde is not None else ""
    gates = "<br>".join(f'<span class="{escape(g.status)}">{escape(g.status.upper())}</span> '
                        f"<code>{escape(g.gate)}</code>" for g in r.gates) or "none"
    return (f'<tr data-family="{escape(r.family)}"><td><code>{escape(r.family)}.{escape(r.path)}</code></td>'
            f"<td>{escape(sig3(r.baseline))}</td><td>{escape(sig3(r.current))}</td>"
            f"<td>{escape(signed(r.change) + ci)}{mde}</td><td>{bar(r)}</td><td>{gates}</td></tr>")


def bar(r: Compared) -> str:
    """The change's interval (a bar), its point (a dot), zero (grey) and each gate's threshold (dashed,
    coloured by the gate's outcome), on a scale that holds them all."""
    if r.change is None:
        return "n/a"
    limits = [g.limit for g in r.gates if g.limit is not None]
    marks = [x for x in (r.change, r.low, r.high, 0.0, *limits) if x is not None]
    lo, hi = min(marks), max(marks)
    span = (hi - lo) or 1.0
    lo, hi = lo - 0.08 * span, hi + 0.08 * span

    def x(v: float) -> float:
        return round(PAD + (v - lo) / (hi - lo) * (WIDTH - 2 * PAD), 1)

    status = next((g.status for g in r.gates if g.status == "fail"), r.gates[0].status if r.gates else "")
    colour = COLOURS.get(status, COLOURS[""])
    parts = [f'<line x1="{x(0.0)}" y1="12" x2="{x(0.0)}" y2="{HEIGHT - 12}" stroke="#999"/>',
             f'<text x="{x(0.0)}" y="{HEIGHT - 2}" font-size="9" fill="#777" text-anchor="middle">0</text>']
    for i, g in enumerate(r.gates):
        if g.limit is None:
            continue
        stroke = COLOURS.get(g.status, COLOURS[""])
        parts.append(f'<line x1="{x(g.limit)}" y1="11" x2="{x(g.limit)}" y2="{HEIGHT - 11}" stroke="{stroke}" '
                     f'stroke-dasharray="4 3" stroke-width="1.5"><title>{escape(g.gate)}</title></line>')
        # labels alternate above and below the bar, and read inwards from either edge, so two close
        # thresholds do not print over each other
        right = x(g.limit) > WIDTH / 2
        anchor = f'x="{x(g.limit) - 2}" text-anchor="end"' if right else f'x="{x(g.limit) + 2}"'
        y = 9 if i % 2 == 0 else HEIGHT - 2
        parts.append(f'<text {anchor} y="{y}" font-size="9" fill="{stroke}">'
                     f"{escape(g.op)} {escape(sig3(g.limit))}</text>")
    if r.low is not None and r.high is not None:
        parts.append(f'<rect x="{x(r.low)}" y="{HEIGHT / 2 - 4}" width="{max(x(r.high) - x(r.low), 1.0)}" '
                     f'height="8" fill="{colour}" fill-opacity="0.35" stroke="{colour}"/>')
    parts.append(f'<circle cx="{x(r.change)}" cy="{HEIGHT / 2}" r="4" fill="{colour}"/>')
    label = escape(f"change {signed(r.change)}" + ("" if r.low is None else f" [{signed(r.low)}, {signed(r.high)}]"))
    return (f'<svg class="change" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
            f'aria-label="{label}"><title>{label}</title>{"".join(parts)}</svg>')
