"""Paired comparison of a run with a baseline run: each family's headline metrics on the cases both
runs share, their difference with a paired interval, and the cases only one run has.

A headline metric is recomputed on a subset of cases by the family's own `aggregate` over its
typed verdicts restricted to those cases, so every family (a user's too) is compared the same way.
The interval comes from one of two methods, named in each delta's `method`; neither depends on a
seed, so the in-run comparison and `llmjury compare` give the same figures for the same two runs at
the same confidence level (`--llm-compare-confidence`, `llmjury compare --confidence`; 0.95 unless
given), which every delta records as its `confidence`:

* **paired, per case**, when the metric is an n-weighted mean of its per-case values (a rate or a
  mean score; checked on both runs, not assumed): each case is aggregated once, then
  `stats.paired_difference` gives Newcombe's paired-proportions interval and exact McNemar test
  for 0/1 values, a paired t interval otherwise, plus the smallest change detectable at this n;
  the cases whose value changed are listed for the reviewer;
* **delete-a-group jackknife** for the metrics the family declares smooth (ratings, correlations,
  ratios: `Family.interval_kinds`, decided by `llmjury.intervals`): a modest number of
  re-aggregations with one group of shared cases left out of both runs. Groups are fixed by a hash
  of the case id, their sizes differ by at most one and each is weighted by its size. It needs no
  duplicated case ids, which a family's aggregate could silently collapse;
* **no interval** otherwise, said in the delta's method: a maximum or a rank (the jackknife is
  inconsistent there), or a metric its family does not declare.

Before either, each metric is matched to the verdict kind that alone reproduces it (a family's
other kinds, such as replayed reference data, can cost far more to aggregate), so re-aggregation
reads only the verdicts that matter.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import ValidationError

from llmjury.errors import LLMJuryError
from llmjury.family import AnyFamily
from llmjury.headline import expand, path_text
from llmjury.intervals import comparison_method, declared_kind, equal_groups, grouped_jackknife
from llmjury.judgement.verdicts import Verdict
from llmjury.model import RunSummary
from llmjury.results.aggregate import aggregate_family
from llmjury.results.blas import one_blas_thread
from llmjury.results.case_changes import KEY, MAX_CHANGED, case_changes
from llmjury.results.comparability import judge_differences, not_compared, origin, shown_path
from llmjury.results.flip_evidence import PerCase, changed_cases, evidence
from llmjury.results.gates import parse_path
from llmjury.results.small_samples import NO_CHANGE, no_change_interval
from llmjury.saved import SavedRun
from llmjury.stats import CONFIDENCE, cases_needed, detectable_change, paired_difference, value_bounds

#: Groups of the delete-a-group jackknife (re-aggregations per run).
JACKKNIFE_GROUPS = 10
#: The margin whose cost in shared cases each delta states, as a share of the per-case values' range
#: (0.05 for a rate).
MARGIN = 0.05
#: Shared cases whose per-case figures are probed before all of them are aggregated one by one.
PROBE_CASES = 20
#: Changed cases listed per family (the count of all of them is `changed_total`).
CHANGED_CASES = 50

Leaves = dict[str, dict[str, Any]]


def metric_key(steps: Sequence[str]) -> str:
    """A headline metric's path as a gate writes it: `win_rate`, `rating[gpt-3.5-turbo]`."""
    return path_text(steps)


def headline_leaves(section: Mapping[str, Any], headline: Iterable[str]) -> Leaves:
    """Every metric (a dict with value and n) under the family's headline paths, by metric key."""
    return {metric_key(steps): metric for steps, metric in expand(section, headline)}


def compare_runs(current: Sequence[dict[str, Any]], baseline: SavedRun, families: Mapping[str, AnyFamily], *,
                 allow_judge_change: bool = False, current_summary: RunSummary | None = None,
                 confidence: float = CONFIDENCE, max_changed: float = MAX_CHANGED) -> dict[str, Any]:
    """The summary's `comparison` section: judge differences, and per family each headline metric
    on both runs with its paired difference and interval at `confidence` (nothing is compared when
    the judges differ, unless `allow_judge_change`). Every interval is seed-free, so no seed can
    move a gate's decision; the level is a value passed down, so two comparisons in one process
    never share it by accident."""
    if baseline.missing is not None:
        return not_compared(baseline, baseline.missing.reason or "absent", baseline.missing.message, confidence)
    shared_ids = _ids(current) & _ids(baseline.records)
    differences = judge_differences([r for r in current if (r["family"], r["case_id"]) in shared_ids],
                                    [r for r in baseline.records if (r["family"], r["case_id"]) in shared_ids])
    compared = not differences or allow_judge_change
    if not compared:
        fields = ", ".join(dict.fromkeys(d["field"] for d in differences))
        return not_compared(baseline, "judges_differ", f"the judges differ ({fields})", confidence) \
            | {"judges_differ": differences}
    section: dict[str, Any] = {"baseline": shown_path(baseline.path), "confidence": confidence,
                               "judges_differ": differences, "compared": compared, "families": {}}
    section |= origin(baseline)
    names = sorted({r["family"] for r in current} | {r["family"] for r in baseline.records})
    for name in names:
        family = families.get(name)
        if family is None or not family.headline:
            continue
        mine = [r for r in current if r["family"] == name]
        theirs = [r for r in baseline.records if r["family"] == name]
        try:
            section["families"][name] = compare_family(
                family, mine, theirs, current_section=_section(current_summary, name),
                baseline_section=_section(baseline.summary, name), confidence=confidence, max_changed=max_changed)
        except (LLMJuryError, ValidationError) as exc:  # a record the family cannot read: named, the rest kept
            section.setdefault("errors", {})[name] = f"{name} not compared: {exc}"
    return section


def _section(summary: RunSummary | None, name: str) -> dict[str, Any] | None:
    """A family's section of a run's summary as summary.json holds it, when the run has one."""
    section = summary.families.get(name) if summary is not None else None
    return section.tree() if section is not None else None


def _ids(records: Iterable[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(r["family"], r["case_id"]) for r in records}


def metric_rows(compared: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """A family's compared metrics, without its `changed_cases` list and `changed_total` count."""
    return {key: row for key, row in compared.items() if isinstance(row, dict) and "delta" in row}


def compare_family(family: AnyFamily, current: Sequence[dict[str, Any]], baseline: Sequence[dict[str, Any]], *,
                   current_section: Mapping[str, Any] | None = None,
                   baseline_section: Mapping[str, Any] | None = None,
                   confidence: float = CONFIDENCE, max_changed: float = MAX_CHANGED) -> dict[str, Any]:
    """One family's headline metrics on the shared cases of two runs, with paired differences at
    `confidence`, and (for metrics that are means of per-case values) the shared cases whose value
    changed. Cases whose content changed under the same id (`llmjury.results.case_changes`) are
    left out of the pairs and listed, with the dropped and added ones.

    A run's saved section stands for its shared-case figures when every one of its cases is shared
    (the usual pull-request case), which spares a full re-aggregation."""
    now_ids, before_ids = {r["case_id"] for r in current}, {r["case_id"] for r in baseline}
    changes = case_changes(current, baseline)
    shared = sorted(now_ids & before_ids - set(changes.changed))  # a reworded case is not the same case
    counts = {"shared_cases": len(shared), "only_current": len(now_ids - before_ids),
              "only_baseline": len(before_ids - now_ids)}
    moved = {KEY: changes.section(max_changed)}
    keep = set(shared)
    sides = [_Side(family, [family.typed(r) for r in records if r["case_id"] in keep],
                   saved if saved is not None and ids <= keep else None)
             for records, ids, saved in ((current, now_ids, current_section),
                                         (baseline, before_ids, baseline_section))]
    now, before = sides
    keys = sorted(set(now.points) | set(before.points))
    if not shared:
        return {key: {"current": None, "baseline": None,
                      "delta": _delta(None, None, None, 0, "no shared cases", confidence), **counts}
                for key in keys} | moved
    kinds = _relevant_kinds(now, keys)
    for side in sides:
        side.restrict(kinds)
    per_case = _per_case(sides, keys, shared)
    deltas = {key: paired_delta(_difference(now.points.get(key), before.points.get(key)), *per_case[key],
                                len(shared), confidence) for key in per_case}
    jackknifed = []
    for key in (key for key in keys if key not in deltas):
        how, reason = comparison_method(declared_kind(family.interval_kinds, parse_path(key, key)), per_case=False)
        if how == "jackknife":
            jackknifed.append(key)
        else:
            point = _difference(now.points.get(key), before.points.get(key))
            deltas[key] = _delta(point, None, None, len(shared), reason or "no interval", confidence)
    if jackknifed:
        deltas |= _jackknife(sides, jackknifed, shared, confidence)
    compared: dict[str, Any] = {key: {"current": _value(now.points.get(key)),
                                      "baseline": _value(before.points.get(key)), "delta": deltas[key], **counts}
                                for key in keys}
    if per_case:
        changed = changed_cases(per_case, shared)
        listed = [entry | evidence(entry["case_id"], entry["metric"], current, baseline)
                  for entry in changed[:CHANGED_CASES]]
        compared |= {"changed_cases": listed, "changed_total": len(changed)}
    return compared | moved


class _Side:
    """One run's verdicts on the shared cases, and its headline metrics on them."""

    def __init__(self, family: AnyFamily, verdicts: list[Verdict], saved: Mapping[str, Any] | None) -> None:
        self.family = family
        self.verdicts = verdicts
        self.points = headline_leaves(saved, family.headline) if saved is not None else _safe(self.leaves, verdicts)

    def leaves(self, verdicts: Sequence[Verdict]) -> Leaves:
        """The headline metrics of these verdicts, through the family's own aggregate (BLAS on one thread)."""
        section = aggregate_family(self.family, verdicts).model_dump(mode="json")
        return headline_leaves(section, self.family.headline)

    def case_leaves(self, shared: Iterable[str]) -> list[Leaves]:
        """Each shared case's headline metrics alone, under one BLAS limit for all of them (entering
        the limit per case cost more than many a family's aggregate)."""
        by_case: dict[str, list[Verdict]] = {}
        for verdict in self.verdicts:
            by_case.setdefault(verdict.case_id, []).append(verdict)

        def alone(verdicts: Sequence[Verdict]) -> Leaves:
            return headline_leaves(self.family.aggregate(verdicts).model_dump(mode="json"), self.family.headline)

        with one_blas_thread():
            return [_safe(alone, by_case[case_id]) if case_id in by_case else {} for case_id in shared]

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


def _safe(aggregate: Callable[[Sequence[Verdict]], Leaves], verdicts: Sequence[Verdict]) -> Leaves:
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


def _per_case(sides: Sequence[_Side], keys: Sequence[str], shared: Sequence[str]) -> dict[str, tuple[PerCase, PerCase]]:
    """Per-case figures of the metrics that are n-weighted means of their per-case values on both
    runs; the other metrics are left out (they need re-aggregation).

    On many cases a probe of the first PROBE_CASES shared cases goes first: a metric that is no
    mean of per-case values there (ratings) is no mean on all of them, and aggregating 25,000
    arena cases one by one to learn it cost more than the jackknife it then fell to."""
    if len(shared) > PROBE_CASES:
        probe = set(shared[:PROBE_CASES])
        keys = [key for key in keys if all(_additive(side.leaves([v for v in side.verdicts if v.case_id in probe])
                                                     .get(key), _totals(side.case_leaves(probe), [key])[key])
                                           for side in sides)]
        if not keys:
            return {}
    totals = [_totals(side.case_leaves(shared), keys) for side in sides]
    return {key: (totals[0][key], totals[1][key]) for key in keys
            if all(_additive(side.points.get(key), t[key]) for side, t in zip(sides, totals, strict=True))}


def _totals(per_case: Sequence[Leaves], keys: Sequence[str]) -> dict[str, PerCase]:
    """Each metric's per-case figures (value times n, and n) from each case's own headline metrics."""
    totals = {}
    for key in keys:
        n = np.array([(leaves.get(key) or {}).get("n", 0) for leaves in per_case], dtype=float)
        value = np.array([(leaves.get(key) or {}).get("value") or 0.0 for leaves in per_case], dtype=float)
        totals[key] = (value * n, n)
    return totals


def _additive(point: Mapping[str, Any] | None, totals: PerCase) -> bool:
    """Is the metric the n-weighted mean of its per-case values (so per-case statistics apply)?"""
    if point is None:
        return False
    numerators, ns = totals
    if ns.sum() != point.get("n"):
        return False
    value = point.get("value")
    if value is None:
        return bool(ns.sum() == 0)
    return math.isclose(numerators.sum(), value * ns.sum(), rel_tol=1e-9, abs_tol=1e-9)


def paired_delta(point: float | None, now: PerCase, before: PerCase, shared: int,
                 confidence: float = CONFIDENCE) -> dict[str, Any]:
    """A delta (as the comparison section holds it) from two runs' per-case figures: the paired
    interval at `confidence` and test, and what this n can detect at that level. Its n counts the
    cases scored in either run (a shared case neither run scored tells nothing); no detectable
    change is stated when even a change across the whole range of values would not be detected."""
    both = (now[1] > 0) & (before[1] > 0)
    one_sided = int(((now[1] > 0) != (before[1] > 0)).sum())
    if one_sided:  # like with like: a case scored on one side only (an answer judged there alone) is left out
        now, before = (now[0][both], now[1][both]), (before[0][both], before[1][both])
    found = paired_difference(*now, *before, confidence)
    if point is None or found is None:
        return _delta(point, None, None, shared, "paired, per case: a run has no value", confidence)
    if one_sided:
        point = found.value
    values = np.r_[now[0][now[1] > 0] / now[1][now[1] > 0], before[0][before[1] > 0] / before[1][before[1] > 0]]
    lowest, highest = value_bounds(values)
    span = highest - lowest
    low, high, method = found.low, found.high, found.method
    if _unchanged(now, before):  # no width from no change: what n allows instead (llmjury.results.small_samples)
        low, high = no_change_interval(found.n, span if span > 0 else 1.0, confidence)
        method = f"{method}; {NO_CHANGE}"
    margin = MARGIN * span if span > 0 else None
    mde = None if found.sd is None or found.n < 2 else detectable_change(found.sd, found.n, confidence)
    if one_sided:
        method = f"{method}; on the {found.n} cases scored in both runs ({one_sided} scored in one only left out)"
    return _delta(point, low, high, found.n, method, confidence, p_value=found.p_value,
                  discordant=found.discordant, mde=mde if mde is not None and mde <= span else None,
                  margin=margin, cases_needed=None if found.sd is None or margin is None
                  else cases_needed(found.sd, margin, confidence))


def _unchanged(now: PerCase, before: PerCase) -> bool:
    """Did every case keep its value (scored on the same sides, with the same per-case figure)?"""
    (num_now, n_now), (num_before, n_before) = now, before
    if not np.array_equal(n_now > 0, n_before > 0):
        return False
    both = n_now > 0
    return bool(np.allclose(num_now[both] / n_now[both], num_before[both] / n_before[both], rtol=1e-12, atol=1e-12))


def _jackknife(sides: Sequence[_Side], keys: Sequence[str], shared: Sequence[str],
               confidence: float) -> dict[str, dict[str, Any]]:
    """Delete-a-group jackknife: re-aggregate both runs with the same group of shared cases left out,
    for metrics their family declares smooth (ratings, correlations, ratios). The groups are fixed
    by a hash of the case ids, so the same two runs get the same interval, and their sizes differ
    by at most one case, each replicate weighted by the size it left out
    (`llmjury.intervals.grouped_jackknife`)."""
    order = sorted(shared, key=lambda case_id: hashlib.blake2b(case_id.encode(), digest_size=8).digest())
    groups = equal_groups(len(order), JACKKNIFE_GROUPS) if len(order) >= 2 else []
    replicates: list[tuple[Leaves, Leaves]] = []
    for group in groups:
        out = {order[i] for i in group}
        kept_now, kept_before = (_safe(side.leaves, [v for v in side.verdicts if v.case_id not in out])
                                 for side in sides)
        replicates.append((kept_now, kept_before))
    method = f"delete-a-group jackknife, {len(groups)} groups of shared cases (fixed by case id, sizes within " \
             "one, weighted by size), re-aggregated (not a mean of per-case values)"
    deltas: dict[str, dict[str, Any]] = {}
    for key in keys:
        point = _difference(sides[0].points.get(key), sides[1].points.get(key))
        values = [_difference(now.get(key), before.get(key)) for now, before in replicates]
        found = None
        if point is not None and None not in values:
            found = grouped_jackknife(point, [v for v in values if v is not None], [len(g) for g in groups],
                                      len(shared), confidence)
        if found is None:
            reason = "no interval: too few shared cases" if len(groups) < 2 else \
                "no interval: a re-aggregation without one group of cases had no value"
            deltas[key] = _delta(point, None, None, len(shared), f"{method}; {reason}", confidence)
            continue
        low, high, se = found
        mde = detectable_change(se * math.sqrt(len(shared)), len(shared), confidence) if se else None
        deltas[key] = _delta(point, low, high, len(shared), method, confidence, mde=mde)
    return deltas


def _difference(now: Mapping[str, Any] | None, before: Mapping[str, Any] | None) -> float | None:
    a, b = _value(now), _value(before)
    return None if a is None or b is None else a - b


def _delta(value: float | None, low: Any, high: Any, n: int, method: str, confidence: float, *,
           p_value: float | None = None, discordant: dict[str, int] | None = None, mde: float | None = None,
           margin: float | None = None, cases_needed: int | None = None) -> dict[str, Any]:
    """A delta as the summary holds it: the change, its interval and that interval's two-sided
    `confidence` level, and for reports the test's p-value,
    the discordant cases (0/1 values), the smallest change detectable at n (`mde`) and how many
    shared cases `margin` (5% of the values' range) would need."""
    def clean(x: Any) -> float | None:
        return None if x is None or not math.isfinite(float(x)) else float(x)

    return {"value": clean(value), "low": clean(low), "high": clean(high), "n": int(n), "method": method,
            "confidence": confidence, "p_value": clean(p_value), "discordant": discordant, "mde": clean(mde),
            "margin": clean(margin), "cases_needed": cases_needed}
