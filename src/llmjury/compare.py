"""Paired comparison of a run with a baseline run: each family's headline metrics on the cases both
runs share, their difference with a paired interval, and the cases only one run has.

A headline metric is recomputed on a subset of cases by the family's own `aggregate` over its
typed verdicts restricted to those cases, so every family (a user's too) is compared the same way.
The interval comes from one of two methods, named in each delta's `method`:

* **paired bootstrap over shared cases**, vectorised, when the metric is an n-weighted mean of its
  per-case values (a rate or a mean score; checked on both runs, not assumed): each case is
  aggregated once, then resamples are weighted sums computed in one numpy product;
* **delete-a-group jackknife** otherwise (ratings, correlations) or when there are too many cases
  to aggregate one by one: a modest number of re-aggregations with one group of shared cases left
  out, paired by leaving the same group out of both runs. It needs no duplicated case ids, which a
  family's aggregate could silently collapse.

Before the jackknife, each metric is matched to the verdict kind that alone reproduces it (a
family's other kinds, such as replayed reference data, can cost far more to aggregate), so
re-aggregation reads only the verdicts that matter.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import ValidationError

from llmjury.aggregate import aggregate_family
from llmjury.errors import LLMJuryError
from llmjury.family import Family
from llmjury.headline import expand
from llmjury.saved import SavedRun
from llmjury.stats import t_quantile
from llmjury.verdicts import Verdict

#: The judge configuration fields that make two runs' verdicts incomparable when they differ.
JUDGE_FIELDS = ("provider", "model", "prompt", "parser", "temperature")
#: Bootstrap resamples of the vectorised path.
RESAMPLES = 2000
#: Above this many shared cases, aggregating each case alone costs too much: the jackknife is used.
MAX_CASE_AGGREGATES = 500
#: Groups of the delete-a-group jackknife (re-aggregations per run).
JACKKNIFE_GROUPS = 10
CONFIDENCE = 0.95
_PLAIN_STEP = re.compile(r"[A-Za-z_]\w*")

Leaves = dict[str, dict[str, Any]]


def metric_key(steps: Sequence[str]) -> str:
    """A headline metric's path as a gate writes it: `win_rate`, `rating[gpt-3.5-turbo]`."""
    text = steps[0]
    for step in steps[1:]:
        text += f".{step}" if _PLAIN_STEP.fullmatch(step) else f"[{step}]"
    return text


def headline_leaves(section: Mapping[str, Any], headline: Iterable[str]) -> Leaves:
    """Every metric (a dict with value and n) under the family's headline paths, by metric key."""
    return {metric_key(steps): metric for steps, metric in expand(section, headline)}


def judge_differences(current: Sequence[dict[str, Any]], baseline: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The judge configuration fields whose values differ between the runs, per family, on the
    verdicts of the cases both runs share."""
    def values(records: Sequence[dict[str, Any]], family: str, field: str) -> set[str]:
        return {_judge_field(r["judge"], field) for r in records if r["family"] == family}

    differences = []
    for family in sorted({r["family"] for r in current} & {r["family"] for r in baseline}):
        for field in JUDGE_FIELDS:
            now, before = values(current, family, field), values(baseline, family, field)
            if now != before:
                differences.append({"family": family, "field": field, "current": ", ".join(sorted(now)),
                                    "baseline": ", ".join(sorted(before))})
    return differences


def _judge_field(judge: Mapping[str, Any], field: str) -> str:
    provider, _, model = str(judge.get("provider", "")).partition(":")
    if field == "provider":
        return provider
    if field == "model":
        return model
    value = judge.get(field)
    return "" if value is None else str(value)


def compare_runs(current: Sequence[dict[str, Any]], baseline: SavedRun, families: Mapping[str, Family], *,
                 seed: int = 0, allow_judge_change: bool = False,
                 current_summary: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The summary's `comparison` section: judge differences, and per family each headline metric
    on both runs with its paired difference (nothing is compared when the judges differ, unless
    `allow_judge_change`)."""
    shared_ids = _ids(current) & _ids(baseline.records)
    differences = judge_differences([r for r in current if (r["family"], r["case_id"]) in shared_ids],
                                    [r for r in baseline.records if (r["family"], r["case_id"]) in shared_ids])
    compared = not differences or allow_judge_change
    section: dict[str, Any] = {"baseline": str(baseline.path), "judges_differ": differences,
                               "compared": compared, "families": {}}
    if not compared:
        return section
    names = sorted({r["family"] for r in current} | {r["family"] for r in baseline.records})
    for name in names:
        family = families.get(name)
        if family is None or not family.headline:
            continue
        mine = [r for r in current if r["family"] == name]
        theirs = [r for r in baseline.records if r["family"] == name]
        try:
            section["families"][name] = compare_family(
                family, mine, theirs, seed=seed, current_section=(current_summary or {}).get(name),
                baseline_section=(baseline.summary or {}).get(name))
        except (LLMJuryError, ValidationError) as exc:  # a record the family cannot read: named, the rest kept
            section.setdefault("errors", {})[name] = f"{name} not compared: {exc}"
    return section


def _ids(records: Iterable[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(r["family"], r["case_id"]) for r in records}


def compare_family(family: Family, current: Sequence[dict[str, Any]], baseline: Sequence[dict[str, Any]], *,
                   seed: int = 0, current_section: Mapping[str, Any] | None = None,
                   baseline_section: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """One family's headline metrics on the shared cases of two runs, with paired differences.

    A run's saved section stands for its shared-case figures when every one of its cases is shared
    (the usual pull-request case), which spares a full re-aggregation."""
    now_ids, before_ids = {r["case_id"] for r in current}, {r["case_id"] for r in baseline}
    shared = sorted(now_ids & before_ids)
    counts = {"shared_cases": len(shared), "only_current": len(now_ids - before_ids),
              "only_baseline": len(before_ids - now_ids)}
    keep = set(shared)
    sides = [_Side(family, [family.typed(r) for r in records if r["case_id"] in keep],
                   saved if saved is not None and ids <= keep else None)
             for records, ids, saved in ((current, now_ids, current_section),
                                         (baseline, before_ids, baseline_section))]
    now, before = sides
    keys = sorted(set(now.points) | set(before.points))
    if not shared:
        return {key: {"current": None, "baseline": None,
                      "delta": _delta(None, None, None, 0, "no shared cases"), **counts} for key in keys}
    deltas = _bootstrap(sides, keys, shared, seed) if len(shared) <= MAX_CASE_AGGREGATES else {}
    missing = [key for key in keys if key not in deltas]
    if missing:
        why = "not a mean of per-case values" if len(shared) <= MAX_CASE_AGGREGATES \
            else f"more than {MAX_CASE_AGGREGATES} shared cases"
        kinds = _relevant_kinds(now, missing)
        for side in sides:
            side.restrict(kinds)
        deltas |= _jackknife(sides, missing, shared, seed, why)
    return {key: {"current": _value(now.points.get(key)), "baseline": _value(before.points.get(key)),
                  "delta": deltas[key], **counts} for key in keys}


class _Side:
    """One run's verdicts on the shared cases, and its headline metrics on them."""

    def __init__(self, family: Family, verdicts: list[Verdict], saved: Mapping[str, Any] | None) -> None:
        self.family = family
        self.verdicts = verdicts
        self.points = headline_leaves(saved, family.headline) if saved is not None else _safe(self.leaves, verdicts)

    def leaves(self, verdicts: Sequence[Verdict]) -> Leaves:
        """The headline metrics of these verdicts, through the family's own aggregate."""
        section = aggregate_family(self.family, verdicts).model_dump(mode="json")
        return headline_leaves(section, self.family.headline)

    def restrict(self, kinds: set[str] | None) -> None:
        if kinds is not None:
            self.verdicts = [v for v in self.verdicts if v.kind in kinds]


def _relevant_kinds(side: _Side, keys: Sequence[str]) -> set[str] | None:
    """The verdict kinds that, each alone, reproduce these headline metrics on the current run, or None
    (all kinds). Probed on one run: both runs' figures come from the same family code."""
    kinds = sorted({v.kind for v in side.verdicts})
    if len(kinds) < 2:
        return None
    alone = {kind: _safe(side.leaves, [v for v in side.verdicts if v.kind == kind]) for kind in kinds}
    needed: set[str] = set()
    for key in keys:
        found = [kind for kind in kinds if _same(side.points.get(key), alone[kind].get(key))]
        if not found:
            return None
        needed.add(found[0])
    return needed


def _safe(aggregate: Any, verdicts: Sequence[Verdict]) -> Leaves:
    """A family's aggregate may refuse a subset (too few models, no data of a kind): no figures then."""
    try:
        return aggregate(verdicts)
    except Exception:  # any failure of a family's aggregate on a subset means "no figure"
        return {}


def _same(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    if a is None or b is None or a.get("n") != b.get("n"):
        return False
    x, y = a.get("value"), b.get("value")
    return x == y or (x is not None and y is not None and math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12))


def _value(metric: Mapping[str, Any] | None) -> float | None:
    return None if metric is None else metric.get("value")


def _bootstrap(sides: Sequence[_Side], keys: Sequence[str], shared: Sequence[str], seed: int) -> dict[str, dict]:
    """Paired bootstrap over shared cases for the metrics that are n-weighted means of their per-case
    values on both runs: each case aggregated once, every resample a weighted sum (numpy)."""
    totals = []  # per side: {key: (numerator per case, n per case)}
    for side in sides:
        by_case: dict[str, list[Verdict]] = {}
        for verdict in side.verdicts:
            by_case.setdefault(verdict.case_id, []).append(verdict)
        per_case = [_safe(side.leaves, by_case.get(case_id, [])) if case_id in by_case else {}
                    for case_id in shared]
        side_totals = {}
        for key in keys:
            n = np.array([(leaves.get(key) or {}).get("n", 0) for leaves in per_case], dtype=float)
            value = np.array([(leaves.get(key) or {}).get("value") or 0.0 for leaves in per_case], dtype=float)
            side_totals[key] = (value * n, n)
        totals.append(side_totals)
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(len(shared), np.full(len(shared), 1 / len(shared)), size=RESAMPLES).astype(float)
    deltas = {}
    for key in keys:
        if not all(_additive(side.points.get(key), t[key]) for side, t in zip(sides, totals, strict=True)):
            continue
        (num_a, n_a), (num_b, n_b) = totals[0][key], totals[1][key]
        with np.errstate(invalid="ignore", divide="ignore"):
            draws = (weights @ num_a) / (weights @ n_a) - (weights @ num_b) / (weights @ n_b)
        draws = draws[np.isfinite(draws)]
        point = _difference(sides[0].points.get(key), sides[1].points.get(key))
        low, high = (np.percentile(draws, [2.5, 97.5]) if len(draws) and point is not None else (None, None))
        deltas[key] = _delta(point, low, high, len(shared),
                             f"paired bootstrap over shared cases, {RESAMPLES} resamples (mean of per-case values)")
    return deltas


def _additive(point: Mapping[str, Any] | None, totals: tuple[np.ndarray, np.ndarray]) -> bool:
    """Is the metric the n-weighted mean of its per-case values (so resamples are weighted sums)?"""
    if point is None:
        return False
    numerators, ns = totals
    if ns.sum() != point.get("n"):
        return False
    value = point.get("value")
    if value is None:
        return bool(ns.sum() == 0)
    return math.isclose(numerators.sum(), value * ns.sum(), rel_tol=1e-9, abs_tol=1e-9)


def _jackknife(sides: Sequence[_Side], keys: Sequence[str], shared: Sequence[str], seed: int,
               why: str) -> dict[str, dict]:
    """Delete-a-group jackknife: re-aggregate both runs with the same group of shared cases left out."""
    groups = min(len(shared), JACKKNIFE_GROUPS)
    order = np.random.default_rng(seed).permutation(len(shared))
    replicates: list[tuple[Leaves, Leaves]] = []
    for group in np.array_split(order, groups) if groups >= 2 else []:
        out = {shared[i] for i in group}
        replicates.append(tuple(_safe(side.leaves, [v for v in side.verdicts if v.case_id not in out])
                                for side in sides))  # type: ignore[arg-type]
    method = f"delete-a-group jackknife, {groups} groups of shared cases, re-aggregated ({why})"
    deltas = {}
    for key in keys:
        point = _difference(sides[0].points.get(key), sides[1].points.get(key))
        values = [d for now, before in replicates if (d := _difference(now.get(key), before.get(key))) is not None]
        low = high = None
        if point is not None and len(values) >= 2:
            g = len(values)
            spread = math.sqrt((g - 1) / g * float(np.sum((np.array(values) - np.mean(values)) ** 2)))
            half = t_quantile(0.5 + CONFIDENCE / 2, g - 1) * spread
            low, high = point - half, point + half
        deltas[key] = _delta(point, low, high, len(shared), method)
    return deltas


def _difference(now: Mapping[str, Any] | None, before: Mapping[str, Any] | None) -> float | None:
    a, b = _value(now), _value(before)
    return None if a is None or b is None else a - b


def _delta(value: float | None, low: Any, high: Any, n: int, method: str) -> dict[str, Any]:
    def clean(x: Any) -> float | None:
        return None if x is None or not math.isfinite(float(x)) else float(x)

    return {"value": clean(value), "low": clean(low), "high": clean(high), "n": int(n), "method": method}


def comparison_lines(comparison: Mapping[str, Any], rows: int = 8) -> list[str]:
    """The comparison as terminal lines: judge differences, then up to `rows` headline metrics per
    family, saying how many more `summary.json` holds."""
    lines = [f"compared with baseline {comparison['baseline']}"]
    for diff in comparison["judges_differ"]:
        lines.append(f"  judges differ: {diff['family']} {diff['field']}: "
                     f"{diff['current'] or '-'} now, {diff['baseline'] or '-'} in the baseline")
    lines += [f"  {message}" for message in comparison.get("errors", {}).values()]
    if not comparison["compared"]:
        lines.append("  not compared: the judges differ (--llm-baseline-allow-judge-change compares them anyway)")
    for name, metrics in comparison["families"].items():
        if len(metrics) > rows:
            lines.append(f"  {name}: {len(metrics) - rows} more headline metrics under comparison in summary.json")
        for key, row in list(metrics.items())[:rows]:
            d = row["delta"]
            interval = "" if d["low"] is None else f" [{_fmt(d['low'])}, {_fmt(d['high'])}]"
            lines.append(f"  {name}.{key}: {_fmt(row['baseline'])} -> {_fmt(row['current'])}, "
                         f"delta {_fmt(d['value'])}{interval} on {row['shared_cases']} shared cases "
                         f"({row['only_current']} only now, {row['only_baseline']} only in the baseline)")
    return lines


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4g}"
