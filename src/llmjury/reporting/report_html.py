"""`report.html`: the run's decision, what changed against the baseline (`report_compare`), the
plots people would rather look at than read, and every case's texts (`report_cases`), rendered
from a jinja2 template (`templates/report.html.j2`, autoescaped) into one self-contained file
(inline SVG, inline CSS, one inline filter script, no network) that opens in any browser and
survives being attached to a CI run.

Plots are drawn with matplotlib's object API (`Figure`, never pyplot's global state) and saved as
SVG with a fixed hash salt, so the same summary gives the same bytes; labels stay SVG text that the
browser draws with its own fonts (half the size and time of glyph outlines, and nothing to fetch).
matplotlib is imported here only, and this module only when a report is written.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from markupsafe import Markup

from llmjury.family import AnyFamily, Family, Plot
from llmjury.model import GateResult, RunSummary
from llmjury.reporting import report_cases, report_compare
from llmjury.reporting.offline_banner import offline_banner
from llmjury.reporting.templates import templates
from llmjury.results import repairs
from llmjury.results.decision import (
    decision_of,
    hidden_keys,
    is_metric,
    metric_rows,
    metric_text,
    sig3,
    signed,
)

Point = tuple[str, dict[str, Any]]

#: The page's template and style sheet, shipped beside the prompts (package data).
TEMPLATE, CSS = "report.html.j2", "report.css"


def page(summary: RunSummary, gates: list[GateResult], families: Mapping[str, AnyFamily],
         records: Sequence[Mapping[str, Any]] = (), baseline: Sequence[Mapping[str, Any]] | None = None,
         root: Path | None = None, *, shown: Sequence[report_cases.FamilyCases] | None = None) -> str:
    """The whole page (templates/report.html.j2): banners, the Decision block with the flipped cases
    (each run's answer and the judge's reason), the comparison view, the plots, every metric per
    family, then the cases (this run's verdict records beside the baseline's, or the cases `shown`
    when the report was built a family at a time, with no baseline)."""
    run = summary.run
    decision = decision_of(summary, gates, families)
    environment = templates()
    details = [{"name": name, "rows": metric_rows(summary.families[name].tree(), hidden=hidden_keys(families, name)),
                "repairs": Markup(repairs.html_table(summary.families[name].tree()))} for name in run.families]
    plots = [Plot(plot.id, plot.caption, Markup(plot.svg))
             for plot in plots_of(summary) + family_plots(summary, families)]
    if shown is not None:
        cases = Markup(report_cases.render(shown, compared=False)) if any(block.cases for block in shown) else ""
    else:
        cases = Markup(report_cases.view(records, baseline, decision.flips, root or Path.cwd())) if records else ""
    return environment.get_template(TEMPLATE).render(
        run=run, decision=decision, details=details, plots=plots, cases=cases,
        style=Markup(environment.loader.get_source(environment, CSS)[0]) if environment.loader else "",
        policy=Markup(f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
               f"script-src '{report_cases.script_hash()}'"),
        offline=offline_banner(summary).removeprefix("> ").replace("**", ""),
        what_changed=Markup(report_compare.view(decision)), figure=_figure, signed=signed, metric_text=metric_text)


def family_plots(summary: RunSummary, families: Mapping[str, AnyFamily]) -> list[Plot]:
    """Each family's own figures (`Family.figures`), its ids prefixed with its name so none collide."""
    plots = []
    for name in summary.run.families:
        family = families.get(name)
        if family is None or name not in summary.families or type(family).figures is Family.figures:
            continue  # no figures of its own: its section need not be read back
        section = family.section.model_validate(summary.families[name].figures)
        plots += [Plot(f"{name}-{plot.id}", plot.caption, plot.svg) for plot in family.figures(section)]
    return plots


def _figure(x: Any) -> str:
    return sig3(x) if isinstance(x, int | float) and not isinstance(x, bool) else str(x)


# -- what each plot shows, read from the summary -------------------------------------------------
#: The family sections as summary.json holds them, by family name (`sections`).
Sections = Mapping[str, Mapping[str, Any]]


def sections(summary: RunSummary) -> dict[str, dict[str, Any]]:
    """Each family's section as summary.json holds it: the plots below read figures by their names."""
    return {name: section.tree() for name, section in summary.families.items()}


def leaderboards(summary: Sections) -> list[tuple[str, list[Point]]]:
    """Arena ratings with their intervals: the main leaderboard, then each named one."""
    arena = summary.get("arena") or {}
    boards = []
    if isinstance(arena.get("rating"), dict):
        boards.append((f"arena {arena.get('main', '')}".strip(), _metrics(arena["rating"])))
    for name, board in (arena.get("leaderboards") or {}).items():
        if name != arena.get("main") and isinstance(board, dict) and isinstance(board.get("rating"), dict):
            boards.append((f"arena {name}", _metrics(board["rating"])))
    return [(title, points) for title, points in boards if points]


def subset_win_rates(summary: Sections) -> list[Point]:
    """Socratic win rates: overall, per dataset, per subject."""
    socratic = summary.get("socratic") or {}
    points: list[Point] = []
    if is_metric(socratic.get("win_rate")):
        points.append(("all", socratic["win_rate"]))
    for key, value in socratic.items():
        if isinstance(value, dict) and is_metric(value.get("win_rate")):
            points.append((f"dataset {key}", value["win_rate"]))
    points += [(f"subject {k}", m) for k, m in _metrics(socratic.get("by_subject") or {})]
    return [(label, m) for label, m in points if m.get("value") is not None]


def judge_vs_human(summary: Sections) -> list[tuple[str, dict[str, Any], float]]:
    """G-Eval judges' Spearman correlation with humans beside the humans' own agreement (the ceiling),
    for every judge, dataset and dimension that has both."""
    validity = (summary.get("geval") or {}).get("judge_validity") or {}
    return [(label, entry["spearman"], float(entry["human_ceiling_spearman"])) for label, entry in validity.items()
            if isinstance(entry, dict) and is_metric(entry.get("spearman"))
            and entry["spearman"].get("value") is not None and entry.get("human_ceiling_spearman") is not None]


def position_consistency(summary: Sections) -> list[Point]:
    """How often a judge gives the same verdict with the answers' order swapped, per judge."""
    arena = summary.get("arena") or {}
    points: list[Point] = []
    if is_metric(arena.get("swap_consistency")):
        points.append(("arena: this run's judge", arena["swap_consistency"]))
    validity = arena.get("judge_validity") or {}
    for judge, figures in ((validity.get("prd") or {}).get("reviewers") or {}).items():
        if isinstance(figures, dict) and is_metric(figures.get("swap_consistency")):
            points.append((f"PRD {judge}", figures["swap_consistency"]))
    for label, figures in (validity.get("llmbar") or {}).items():
        if isinstance(figures, dict) and is_metric(figures.get("positional_agreement")):
            points.append((label, figures["positional_agreement"]))
    socratic = summary.get("socratic") or {}
    if is_metric(socratic.get("position_consistency")):
        points.append(("socratic: this run's judge", socratic["position_consistency"]))
    return [(label, m) for label, m in points if m.get("value") is not None]


def _metrics(node: Mapping[str, Any]) -> list[Point]:
    return [(key, m) for key, m in node.items() if is_metric(m) and m.get("value") is not None]


# -- drawing --------------------------------------------------------------------------------------
def plots_of(summary: RunSummary) -> list[Plot]:
    """Every plot this summary has the figures for."""
    by_family = sections(summary)
    plots = []
    for i, (title, points) in enumerate(leaderboards(by_family)):
        plots.append(Plot(f"leaderboard-{i}", f"Leaderboard {title}: rating with its 95% interval (whiskers)",
                          _whiskers(points, "rating", sort=True)))
    subsets = subset_win_rates(by_family)
    if subsets:
        plots.append(Plot("subset-win-rates", "Socratic win rate of our teacher, overall and by subset, with 95% "
                          "intervals; the dashed line is parity (0.5)", _whiskers(subsets, "win rate", parity=0.5)))
    judged = judge_vs_human(by_family)
    if judged:
        plots.append(Plot("judge-vs-human", "G-Eval: each judge's Spearman correlation with the human ratings "
                          "(whiskers: 95% interval) against the human ceiling (agreement among the annotators); "
                          "on the diagonal a judge agrees with humans as well as they agree with each other",
                          _ceiling_scatter(judged)))
    consistency = position_consistency(by_family)
    if consistency:
        plots.append(Plot("position-consistency", "Position consistency: the share of cases judged the same with "
                          "the answers swapped, per judge, with 95% intervals", _whiskers(consistency, "consistency")))
    return plots


def _svg(figure: Any) -> str:
    """A figure as inline SVG (no XML prolog), reproducible. Its margins are set where it was drawn
    (`_margins`): matplotlib's tight bounding box would draw it twice, once to measure it."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "llmjury", "svg.fonttype": "none"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def _margins(figure: Any, left_labels: Sequence[str], fontsize: float, *, left_title: bool = False) -> None:
    """Room for the y tick labels (measured from the font, as they are drawn), the x axis below and its
    label, and the y axis label when there is one: what a tight bounding box left around the axes."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    measure, font = TextToPath(), FontProperties(size=fontsize)
    widest = max((measure.get_text_width_height_descent(label, font, ismath=False)[0] for label in left_labels),
                 default=0.0) / 72  # points to inches
    width, height = figure.get_size_inches()
    left = widest + 0.2 + (0.3 if left_title else 0.0)
    figure.subplots_adjust(left=left / width, right=1 - 0.15 / width, bottom=0.5 / height, top=1 - 0.1 / height)


def _whiskers(points: list[Point], xlabel: str, sort: bool = False, parity: float | None = None) -> str:
    """Horizontal dots with interval whiskers, one row per label."""
    from matplotlib.figure import Figure

    if sort:
        points = sorted(points, key=lambda p: p[1]["value"])
    labels = [label for label, _ in points]
    values = [m["value"] for _, m in points]
    lower = [m["value"] - m["low"] if m.get("low") is not None else 0.0 for _, m in points]
    upper = [m["high"] - m["value"] if m.get("high") is not None else 0.0 for _, m in points]
    figure = Figure(figsize=(8, 0.32 * len(points) + 1.2))
    ax = figure.subplots()
    ax.errorbar(values, range(len(points)), xerr=[lower, upper], fmt="o", color="#1f5fa8", ecolor="#7a9cc6",
                capsize=3)
    ax.set_yticks(range(len(points)), labels, fontsize=8)
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", alpha=0.3)
    if parity is not None:
        ax.axvline(parity, linestyle="--", color="#888")
    if not sort:
        ax.invert_yaxis()  # read top-down in the order given; a sorted board has its best on top
    _margins(figure, labels, 8)
    return _svg(figure)


def _ceiling_scatter(judged: list[tuple[str, dict[str, Any], float]]) -> str:
    """Judge correlation (y, with whiskers) against the human ceiling (x), one colour per judge."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8, 6))
    ax = figure.subplots()
    by_judge: dict[str, list[tuple[dict[str, Any], float]]] = {}
    for label, metric, ceiling in judged:
        by_judge.setdefault(label.split("/")[0], []).append((metric, ceiling))
    for judge, points in by_judge.items():
        xs = [c for _, c in points]
        ys = [m["value"] for m, _ in points]
        lower = [m["value"] - m["low"] if m.get("low") is not None else 0.0 for m, _ in points]
        upper = [m["high"] - m["value"] if m.get("high") is not None else 0.0 for m, _ in points]
        ax.errorbar(xs, ys, yerr=[lower, upper], fmt="o", capsize=2, label=judge, alpha=0.8)
    ax.plot([-1, 1], [-1, 1], linestyle="--", color="#888", label="human ceiling")
    ax.set_xlim(max(-1.0, min(c for _, _, c in judged) - 0.1), 1.0)
    ax.set_ylim(-1.0, 1.0)
    ax.set_xlabel("human ceiling (Spearman among annotators)")
    ax.set_ylabel("judge vs humans (Spearman)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    _margins(figure, ["\N{MINUS SIGN}1.00"], 10, left_title=True)  # the widest tick label of [-1, 1]
    return _svg(figure)
