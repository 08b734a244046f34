"""G-Eval aggregates: meta-evaluation per judge x dataset x task x criterion, beside the
reference figures (seed 004's E1-E3, the G-Eval paper, UniEval)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from llmjury.families.geval.meta import meta_evaluate

REFERENCES = Path(__file__).resolve().parents[2] / "data" / "geval_references.json"
HIDDEN_FROM_TABLES = ("meta", "human_ceiling", "judge_validity")


def group_key(record: dict[str, Any]) -> str:
    a = record["attributes"]
    return f"{record['judge']['provider']}/{a['dataset']}/{a['task']}/{a['criterion']}"


def aggregate(records: list[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        groups[group_key(r)].append(r)
    meta = {key: meta_evaluate(rs) for key, rs in sorted(groups.items())}
    section: dict[str, Any] = {"meta": meta, "references": json.loads(REFERENCES.read_text(encoding="utf-8"))}
    ceiling = human_ceiling(meta)
    if ceiling:
        section["human_ceiling"] = ceiling
    section["judge_validity"] = judge_validity(meta, ceiling)
    return section


def judge_validity(meta: dict[str, Any], ceiling: dict[str, Any]) -> dict[str, Any]:
    """Per judge (model, recorded or deepeval) and target: pooled Spearman with its interval, beside
    the human ceiling for the same target where the data gives one."""
    out: dict[str, Any] = {}
    for key, m in meta.items():
        provider, _, target = key.partition("/")
        if provider.startswith("human:") or "pooled" not in m:
            continue
        entry = {"spearman": m["pooled"]["spearman"], "pearson": m["pooled"]["pearson"]}
        if target in ceiling and "pooled" in ceiling[target]:
            entry["human_ceiling_spearman"] = ceiling[target]["pooled"]["spearman"]
            entry["human_ceiling_items"] = ceiling[target]["items"]
        out[key] = entry
    return out


def human_ceiling(meta: dict[str, Any]) -> dict[str, Any]:
    """Per dataset, task and criterion: the mean over annotators of one annotator's correlation
    with the mean of the others (pooled and per context)."""
    by_target: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for key, m in meta.items():
        provider, _, target = key.partition("/")
        if provider.startswith("human:annotator-") and "pooled" in m:
            by_target[target].append(m)
    out = {}
    for target, ms in sorted(by_target.items()):
        out[target] = {view: {kind: sum(m[view][kind]["value"] for m in ms) / len(ms)
                              for kind in ("pearson", "spearman", "kendall")}
                       for view in ("pooled", "per_context") if all(view in m for m in ms)}
        out[target]["annotators"] = len(ms)
        out[target]["items"] = ms[0]["items"]
    return out


def _fmt(m: dict[str, Any] | None) -> str:
    if not m or m.get("value") is None:
        return "n/a"
    if m.get("low") is None:
        return f"{m['value']:.4f}"
    return f"{m['value']:.4f} [{m['low']:.3f}, {m['high']:.3f}]"


def markdown(section: dict[str, Any]) -> str:
    lines = ["| judge / dataset / task / criterion | items | pooled r | pooled ρ | pooled τ | per-context r | "
             "per-context ρ | per-context τ | system r | system ρ |", "|---|---|---|---|---|---|---|---|---|---|"]
    for key, m in section["meta"].items():
        pooled, per, system = m.get("pooled", {}), m.get("per_context", {}), m.get("system_level", {})
        lines.append(f"| `{key}` | {m['items']} | {_fmt(pooled.get('pearson'))} | {_fmt(pooled.get('spearman'))} | "
                     f"{_fmt(pooled.get('kendall'))} | {_fmt(per.get('pearson'))} | {_fmt(per.get('spearman'))} | "
                     f"{_fmt(per.get('kendall'))} | {_fmt(system.get('pearson'))} | {_fmt(system.get('spearman'))} |")
    if section.get("human_ceiling"):
        lines += ["", "**Human ceiling** (each annotator against the mean of the others, averaged; "
                  "set a judge's correlation beside it)", "",
                  "| dataset / task / criterion | pooled r | pooled ρ | pooled τ | per-context r | per-context τ |",
                  "|---|---|---|---|---|---|"]
        for target, c in section["human_ceiling"].items():
            pooled, per = c.get("pooled", {}), c.get("per_context", {})
            lines.append(f"| `{target}` | {pooled.get('pearson', float('nan')):.3f} | "
                         f"{pooled.get('spearman', float('nan')):.3f} | {pooled.get('kendall', float('nan')):.3f} | "
                         f"{per.get('pearson', float('nan')):.3f} | {per.get('kendall', float('nan')):.3f} |")
    lines += ["", "**Reference figures**", ""]
    for ref in section["references"].values():
        lines += [f"{ref['note']}:", "", "| | " + " | ".join(ref["columns"]) + " |",
                  "|---|" + "---|" * len(ref["columns"])]
        lines += [f"| {name} | " + " | ".join(f"{v:g}" for v in values) + " |" for name, values in ref["rows"].items()]
        lines.append("")
    return "\n".join(lines)


def files(section: dict[str, Any], records: list[dict[str, Any]]) -> dict[str, str]:
    """The evaluation steps each judge used, one reviewable file per task x criterion."""
    out: dict[str, str] = {}
    for r in records:
        steps = r["attributes"].get("steps_text")
        if steps:
            out[f"geval/steps/{r['attributes']['task']}-{r['attributes']['criterion']}.txt"] = steps + "\n"
    return out
