"""From verdict records to the summary: core counts for every family, plus each family's own
metrics from the aggregator it registers. Pure functions of records, so a saved
`verdicts.jsonl.gz` can be re-aggregated without a single model call."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from llmjury.family import AnyFamily
from llmjury.judgement.verdicts import ASSERTIONS, Verdict
from llmjury.loading import LoadReport
from llmjury.model import BudgetFacts, FamilySummary, RunInfo, RunSummary, Section, Usage
from llmjury.pricing import PriceTable
from llmjury.results.blas import one_blas_thread
from llmjury.results.causes import counted_cause, ordered
from llmjury.running.batch_lane import PENDING_CAUSE, pending_in_batch
from llmjury.running.budget import BUDGET_CAUSE, refused_by_budget
from llmjury.stats import proportion

Records = list[dict[str, Any]]
#: Each known family's verdicts with their results typed by its contract, in record order.
TypedVerdicts = Mapping[str, Sequence[Verdict]]
#: Per role, per provider: where the samples came from (`fresh_samples`, `replayed_samples`) and `policy`.
RoleUsage = dict[str, dict[str, dict[str, str | int]]]


def aggregate_family(family: AnyFamily, verdicts: Sequence[Verdict]) -> Section:
    """The family's aggregate, with BLAS on one thread (llmjury.results.blas)."""
    with one_blas_thread():
        section: Section = family.aggregate(verdicts)
    return section


def core_section(records: Records) -> dict[str, Any]:
    """Counts every family shares: cases, verdicts, how many were unscored and why, per judge.

    Unscored verdicts (refused or failed calls, answers the parser could not read) are an outcome:
    counted here and left out of every family rate, whose n is the scored count. `unscored_rate` is
    over the judges' verdicts: a test's own assertions (`check` verdicts) are always scored, and
    counting them would let a judge that answered nothing readable pass `unscored_rate<=0.05`.
    """
    valid = [r for r in records if r["valid"]]
    judged = [r for r in records if r["judge"]["provider"] != ASSERTIONS] or records
    reasons = Counter(unscored_cause(r.get("error")) for r in records if not r["valid"])
    causes = Counter(counted_cause(r.get("cause"), r.get("error")) for r in records if not r["valid"])
    verdicts = Counter(r["judge"]["provider"] for r in records)  # one pass, not one per judge
    unscored = Counter(r["judge"]["provider"] for r in records if not r["valid"])
    judges = sorted(verdicts)
    by_judge = {judge: proportion(unscored[judge], verdicts[judge]) for judge in judges}
    read: Counter[str] = Counter()
    for r in records:  # how each counted run's decision was read (llmjury.running.decision_field)
        read.update(r.get("read") or {})
    return {
        "cases": len({r["case_id"] for r in records}),
        "verdicts": len(records),
        "valid": len(valid),
        "unscored": len(records) - len(valid),
        "unscored_rate": proportion(sum(not r["valid"] for r in judged), len(judged)),
        "unscored_reasons": dict(sorted(reasons.items())),
        "unscored_causes": ordered(dict(causes)),
        "judges": judges,
        "unscored_by_judge": by_judge,
        "unscored_cases": sorted({r["case_id"] for r in records if not r["valid"]})[:200],
        "judge_config": _judge_configs(records),
        "decisions_read": dict(sorted(read.items())),
        "offline": any(r["judge"]["provider"].startswith("offline") for r in records),
    }


def unscored_cause(error: str | None) -> str:
    """The cause an unscored verdict is counted under: its error's first clause, or `budget` for a
    call the budget refused, whatever text the family wrapped around it."""
    if refused_by_budget(error):
        return BUDGET_CAUSE
    return PENDING_CAUSE if pending_in_batch(error) else (error or "").split(":")[0]


def typed_verdicts(records: Iterable[Mapping[str, Any]], families: Mapping[str, AnyFamily]) -> dict[str, list[Verdict]]:
    """Type every record of a known family once, for both the summary and the report files
    (validating tens of thousands of results is most of a session end's per-verdict cost)."""
    typed: dict[str, list[Verdict]] = {}
    for record in records:
        family = families.get(record["family"])
        if family is not None:
            typed.setdefault(family.name, []).append(family.typed(record))
    return typed


def summarize(records: Iterable[dict[str, Any]], run: dict[str, Any], usage: dict[str, dict[str, float]],
              prices: PriceTable, families: Mapping[str, AnyFamily],
              loading: Sequence[LoadReport] = (), typed: TypedVerdicts | None = None,
              roles: RoleUsage | None = None, *, complete: bool = True,
              budget: BudgetFacts | None = None) -> RunSummary:
    """The whole summary: run metadata, usage and cost, a section per family that ran, whether the
    run was complete and what its budget did (a baseline comparison is added by the caller, as it
    reads these sections).

    Each family aggregates its verdicts with their results typed by its contract (`typed`, from
    `typed_verdicts`, when the caller has them already); verdicts of a family the run does not
    know are counted but not aggregated."""
    by_family: dict[str, Records] = {}
    for record in sorted(records, key=lambda r: (r["family"], r["case_id"])):
        by_family.setdefault(record["family"], []).append(record)
    sections = {name: family_section(name, family_records, families.get(name), loading,
                                     None if typed is None else typed.get(name, ()))
                for name, family_records in sorted(by_family.items())}
    return run_summary(sections, run, usage, prices, loading, roles, complete=complete, budget=budget)


def family_section(name: str, records: Records, family: AnyFamily | None, loading: Sequence[LoadReport] = (),
                   typed: Sequence[Verdict] | None = None) -> FamilySummary:
    """One family's section of the summary, from its records in case order (and their typed
    verdicts, when the caller has them already): a summary is built a family at a time."""
    if family is not None and typed is None:
        typed = [family.typed(r) for r in records]
    return section_of(name, core_section(records), family, loading, typed or ())


def section_of(name: str, core: dict[str, Any], family: AnyFamily | None, loading: Sequence[LoadReport],
               typed: Sequence[Verdict]) -> FamilySummary:
    """One family's section from its core counts (`core_section`) and its typed verdicts (any order),
    for a caller that lets the records go before it aggregates.

    Aggregation's matrices are small (a bootstrap's 200 x 360 counts by 360 x 360 pair signs), and
    waking and syncing OpenBLAS's threads for them costs more than it saves, thirty times more when
    other processes load the cores (0.5 ms on one thread, 16 ms on two): BLAS runs on one thread here."""
    section = dict(core)
    if family is not None:
        # In case order (a stable sort: the records' order within a case).
        aggregated = aggregate_family(family, sorted(typed, key=lambda v: v.case_id))
        # Absent figures (None at the top) are left out; a metric's own `value: None` stays.
        section.update({k: v for k, v in aggregated.model_dump(mode="json").items() if v is not None})
        section["headline"] = list(family.headline)
    section["loading"] = [r.model_dump() for r in loading if r.family == name]
    return FamilySummary.model_validate(section)


def run_summary(sections: Mapping[str, FamilySummary], run: dict[str, Any], usage: dict[str, dict[str, float]],
                prices: PriceTable, loading: Sequence[LoadReport] = (), roles: RoleUsage | None = None, *,
                complete: bool = True, budget: BudgetFacts | None = None) -> RunSummary:
    """The summary around its family sections (in name order): run metadata, usage and cost."""
    # Offline: every family that asked a judge asked the heuristics (a test's own assertions ask none).
    judged = [section for section in sections.values()
              if any(config["provider"] != ASSERTIONS for config in section.judge_config)]
    offline = bool(judged) and all(section.offline for section in judged)
    return RunSummary(run=RunInfo.model_validate({**run, "families": sorted(sections), "offline": offline}),
                      usage=usage_section(usage, prices, roles or {}),
                      loading=[report.model_dump() for report in loading], families=dict(sorted(sections.items())),
                      complete=complete, budget=budget)


def usage_section(usage: dict[str, dict[str, float]], prices: PriceTable, roles: RoleUsage) -> Usage:
    """Usage and cost per provider, and per role where its samples came from (fresh or replayed) and why."""
    rows: dict[str, Any] = {}
    for provider, entry in sorted(usage.items()):
        cost = prices.cost(provider, int(entry.get("prompt_tokens", 0)), int(entry.get("completion_tokens", 0)))
        rows[provider] = {**entry, "cost_usd": cost}
        batched = int(entry.get("batch_prompt_tokens", 0)), int(entry.get("batch_completion_tokens", 0))
        if any(batched):  # through the provider's Batch API: at the batch rate, and what that saved
            at_batch, at_sync = prices.batch_cost(provider, *batched), prices.cost(provider, *batched)
            rows[provider]["cost_usd"] = None if cost is None or at_batch is None else cost + at_batch
            rows[provider]["batch_cost_usd"] = at_batch
            rows[provider]["batch_saving_usd"] = None if at_batch is None or at_sync is None else at_sync - at_batch
    known = [r["cost_usd"] for r in rows.values() if r["cost_usd"] is not None]
    return Usage(providers=rows, total_cost_usd=sum(known),
                 unpriced=sorted(p for p, r in rows.items() if r["cost_usd"] is None), roles=roles)


def merge_roles(*ledgers: RoleUsage) -> RoleUsage:
    """Add up per-role ledgers from several processes (`Engine.roles_dict`)."""
    merged: RoleUsage = {}
    for ledger in ledgers:
        for role, providers in ledger.items():
            for provider, entry in providers.items():
                row = merged.setdefault(role, {}).setdefault(provider, {"policy": entry["policy"],
                                                                        "fresh_samples": 0, "replayed_samples": 0})
                row["fresh_samples"] = int(row["fresh_samples"]) + int(entry["fresh_samples"])
                row["replayed_samples"] = int(row["replayed_samples"]) + int(entry["replayed_samples"])
    return {role: dict(sorted(providers.items())) for role, providers in sorted(merged.items())}


def added_usage(usages: Sequence[Usage]) -> Usage:
    """Reports' usage added up (a merge's shards, a re-aggregation's runs): calls, tokens and cost
    per provider, samples per role; an unpriced cost stays unknown."""
    providers: dict[str, dict[str, float | None]] = {}
    for usage in usages:
        for provider, row in usage.providers.items():
            total = providers.setdefault(provider, {})
            for key, value in row.items():
                unknown = value is None or (key in total and total[key] is None)
                total[key] = None if unknown else (total.get(key) or 0.0) + (value or 0.0)
    return Usage(providers=dict(sorted(providers.items())), total_cost_usd=sum(u.total_cost_usd for u in usages),
                 unpriced=sorted({p for usage in usages for p in usage.unpriced}),
                 roles=merge_roles(*(usage.roles for usage in usages)))


def merge_usage(*ledgers: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Add up per-provider ledgers from several processes."""
    merged: dict[str, Counter[str]] = {}
    for ledger in ledgers:
        for provider, entry in ledger.items():
            merged.setdefault(provider, Counter()).update(entry)
    return {p: dict(c) for p, c in sorted(merged.items())}


def _judge_configs(records: Records) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for r in records:
        key = json.dumps(r["judge"], sort_keys=True, default=repr)  # C-encoded: a tenth of repr(sorted(...))
        seen.setdefault(key, r["judge"])
    return list(seen.values())
