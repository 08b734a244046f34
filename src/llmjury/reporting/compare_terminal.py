"""The comparison with a baseline as terminal lines, shown after the run's own summary (and by
`llmjury compare`): judge differences, then each family's headline metrics with their paired
intervals and what their n can detect."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmjury.results.case_changes import case_note
from llmjury.results.compare import metric_rows


def comparison_lines(comparison: Mapping[str, Any], rows: int = 8) -> list[str]:
    """The comparison as terminal lines: judge differences, then up to `rows` headline metrics per
    family with what their n can detect, saying how many more `summary.json` holds."""
    lines = [f"compared with baseline {comparison['baseline']} ({100 * comparison['confidence']:g}% paired intervals)"]
    for diff in comparison["judges_differ"]:
        lines.append(f"  judges differ: {diff['family']} {diff['field']}: "
                     f"{diff['current'] or '-'} now, {diff['baseline'] or '-'} in the baseline")
    lines += [f"  {message}" for message in comparison.get("errors", {}).values()]
    if comparison.get("origin"):
        lines.append(f"  baseline from {comparison['origin']}")
    if not comparison["compared"] and comparison.get("not_compared", "judges_differ") == "judges_differ":
        lines.append("  not compared: the judges differ (--llm-baseline-allow-judge-change compares them anyway)")
    elif not comparison["compared"]:
        lines.append(f"  not compared: {comparison.get('why_not') or comparison['not_compared']}")
    for name, compared in comparison["families"].items():
        note = case_note(name, compared)
        if note is not None:
            lines.append(f"  cases, {note}")
        metrics = metric_rows(compared)
        if len(metrics) > rows:
            lines.append(f"  {name}: {len(metrics) - rows} more headline metrics under comparison in summary.json")
        for key, row in list(metrics.items())[:rows]:
            d = row["delta"]
            interval = "" if d["low"] is None else f" [{_fmt(d['low'])}, {_fmt(d['high'])}]"
            test = ""
            if d.get("discordant") is not None:
                test = (f", McNemar p {_fmt(d['p_value'])} ({d['discordant']['rose']} rose, "
                        f"{d['discordant']['fell']} fell)")
            lines.append(f"  {name}.{key}: {_fmt(row['baseline'])} -> {_fmt(row['current'])}, "
                         f"delta {_fmt(d['value'])}{interval}{test} on {row['shared_cases']} shared cases "
                         f"({row['only_current']} only now, {row['only_baseline']} only in the baseline)")
            if d.get("mde") is not None:
                needs = "" if d.get("cases_needed") is None else \
                    f"; a {_fmt(d['margin'])} margin needs ~{d['cases_needed']} shared cases"
                lines.append(f"    smallest detectable change at n={d['n']}: {_fmt(d['mde'])}{needs}")
        if compared.get("changed_total"):
            lines.append(f"  {name}: {compared['changed_total']} case value(s) changed, listed largest drop first "
                         f"in summary.json (comparison.families.{name}.changed_cases)")
    return lines


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4g}"
