"""G-Eval aggregates: meta-evaluation per judge x dataset x task x criterion, the human ceiling on
the same targets, and the reference figures (seed 004's E1-E3, the G-Eval paper, UniEval)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from importlib import resources

from llmjury.families.geval.meta import meta_evaluate
from llmjury.families.geval.results import (
    Agreement,
    Ceiling,
    Correlations,
    GEvalSection,
    MetaEvaluation,
    Reference,
    Validity,
)
from llmjury.families.geval.scored_items import on_scored_items
from llmjury.judgement.verdicts import Verdict
from llmjury.model import Metric
from llmjury.results.repairs import repairs_by_judge, with_counts

HIDDEN_FROM_TABLES = ("meta", "human_ceiling", "judge_validity")
ANNOTATOR = "human:annotator-"


def references() -> dict[str, Reference]:
    """The published figures the report sets beside ours (package data)."""
    text = resources.files("llmjury").joinpath("data/geval_references.json").read_text(encoding="utf-8")
    return {name: Reference.model_validate(ref) for name, ref in json.loads(text).items()}


def references_for(datasets: set[str]) -> dict[str, Reference]:
    """The published figures of the datasets that gave this run cases: a PersonaChat-only run sets no
    Topical-Chat or DSTC9 table beside its own figures."""
    return {name: ref for name, ref in references().items() if datasets & set(ref.datasets)}


def group_key(verdict: Verdict) -> str:
    a = verdict.attributes
    return f"{verdict.judge.provider}/{a['dataset']}/{a['task']}/{a['criterion']}"


def aggregate(verdicts: Sequence[Verdict]) -> GEvalSection:
    """Every judge's meta-evaluation, the ceiling and the reference judges on the items the judge scored."""
    judged = {verdict.attributes["dataset"] for verdict in verdicts}
    measured, bounded = on_scored_items(verdicts)
    groups: dict[str, list[Verdict]] = defaultdict(list)
    for verdict in measured:
        groups[group_key(verdict)].append(verdict)
    meta = {key: meta_evaluate(group) for key, group in sorted(groups.items())}
    ceiling = {target: c.model_copy(update={"judged_items": bounded.get(target)})
               for target, c in human_ceiling(meta, measured).items()}
    return GEvalSection(meta=meta, references=references_for(judged), human_ceiling=ceiling or None,
                        judge_validity=judge_validity(meta, ceiling), repairs=repairs_by_judge(verdicts))


def judge_validity(meta: dict[str, MetaEvaluation], ceiling: dict[str, Ceiling]) -> dict[str, Validity]:
    """Per judge (model, recorded or deepeval) and target: pooled Spearman with its interval, beside
    the human ceiling for the same dataset, task and criterion where the data gives one."""
    out = {}
    for key, m in meta.items():
        provider, _, target = key.partition("/")
        if provider.startswith("human:") or m.pooled is None:
            continue
        same = ceiling.get(target)
        out[key] = Validity(spearman=m.pooled.spearman, pearson=m.pooled.pearson,
                            human_ceiling_spearman=same.pooled.spearman if same and same.pooled else None,
                            human_ceiling_items=same.items if same and same.pooled else None)
    return out


def human_ceiling(meta: dict[str, MetaEvaluation], verdicts: Sequence[Verdict]) -> dict[str, Ceiling]:
    """Per dataset, task and criterion: the mean over annotators (people, where the file names them)
    of one annotator's correlation with the mean of the others (pooled and per context). An annotator
    whose correlation is undefined on their items (all one rating) is left out of the mean; `items`
    counts the items any annotator rated."""
    by_target: dict[str, list[MetaEvaluation]] = defaultdict(list)
    for key, m in meta.items():
        provider, _, target = key.partition("/")
        if provider.startswith(ANNOTATOR) and m.pooled is not None and _defined(m.pooled):
            by_target[target].append(m)
    rated: dict[str, set[str]] = defaultdict(set)
    for verdict in verdicts:
        if verdict.judge.provider.startswith(ANNOTATOR):
            rated[group_key(verdict).partition("/")[2]].add(str(verdict.attributes["item"]))
    out = {}
    for target, ms in sorted(by_target.items()):
        pooled = _mean_agreement([m.pooled for m in ms if m.pooled is not None])
        per_context = _mean_agreement([m.per_context for m in ms if m.per_context is not None
                                       and _defined(m.per_context)])
        out[target] = Ceiling(pooled=pooled, per_context=per_context, annotators=len(ms), items=len(rated[target]))
    return out


def _defined(view: Correlations) -> bool:
    return all(getattr(view, kind).value is not None for kind in ("pearson", "spearman", "kendall"))


def _mean_agreement(views: Sequence[Correlations]) -> Agreement | None:
    kinds = ("pearson", "spearman", "kendall")
    metrics: dict[str, list[Metric]] = {kind: [getattr(view, kind) for view in views] for kind in kinds}
    if not views or any(m.value is None for ms in metrics.values() for m in ms):
        return None
    return Agreement(**{kind: sum(float(m.value or 0.0) for m in ms) / len(ms) for kind, ms in metrics.items()})


def _fmt(m: Metric | None) -> str:
    if m is None or m.value is None:
        return "n/a"
    if m.low is None or m.high is None:
        return f"{m.value:.4f}"
    return f"{m.value:.4f} [{m.low:.3f}, {m.high:.3f}]"


def markdown(section: GEvalSection) -> str:
    lines = ["| judge / dataset / task / criterion | items | pooled r | pooled ρ | pooled τ | per-context r | "
             "per-context ρ | per-context τ | system r | system ρ |", "|---|---|---|---|---|---|---|---|---|---|"]
    for key, m in section.meta.items():
        pooled, per, system = m.pooled, m.per_context, m.system_level
        cells = [_fmt(None if pooled is None else pooled.pearson), _fmt(None if pooled is None else pooled.spearman),
                 _fmt(None if pooled is None else pooled.kendall), _fmt(None if per is None else per.pearson),
                 _fmt(None if per is None else per.spearman), _fmt(None if per is None else per.kendall),
                 _fmt(None if system is None else system.pearson), _fmt(None if system is None else system.spearman)]
        lines.append(f"| `{key}` | {m.items} | {' | '.join(cells)} |")
    if section.human_ceiling:
        lines += ["", "**Human ceiling** (each annotator against the mean of the others, averaged, on the "
                  "items the judge scored where it scored any, else on every rated item; set a judge's "
                  "correlation beside it)", "",
                  "| dataset / task / criterion | items | annotators | pooled r | pooled ρ | pooled τ | "
                  "per-context r | per-context τ |", "|---|---|---|---|---|---|---|---|"]
        nan = Agreement(pearson=float("nan"), spearman=float("nan"), kendall=float("nan"))
        for target, c in section.human_ceiling.items():
            pooled_a, per_a = c.pooled or nan, c.per_context or nan
            on = "" if c.judged_items is None else " (the judge's)"
            lines.append(f"| `{target}` | {c.items}{on} | {c.annotators} | {pooled_a.pearson:.3f} | "
                         f"{pooled_a.spearman:.3f} | {pooled_a.kendall:.3f} | {per_a.pearson:.3f} | "
                         f"{per_a.kendall:.3f} |")
    if section.references:
        lines += ["", "**Reference figures**", ""]
    for ref in section.references.values():
        lines += [f"{ref.note}:", "", "| | " + " | ".join(ref.columns) + " |", "|---|" + "---|" * len(ref.columns)]
        lines += [f"| {name} | " + " | ".join(f"{v:g}" for v in values) + " |" for name, values in ref.rows.items()]
        lines.append("")
    return with_counts("\n".join(lines), section.repairs)


def files(verdicts: Sequence[Verdict]) -> dict[str, str]:
    """The evaluation steps each judge used, one reviewable file per task x criterion."""
    out: dict[str, str] = {}
    for verdict in verdicts:
        steps = verdict.attributes.get("steps_text")
        if steps:
            out[f"geval/steps/{verdict.attributes['task']}-{verdict.attributes['criterion']}.txt"] = steps + "\n"
    return out
