"""The items a ceiling or a reference judge is measured on: those the judge scored.

A judge's correlation rests on the items it scored (a run of `-k`, `--llm-sample` or unscored
answers leaves some out); the human ceiling and the recorded reference judges (UniEval, DEP,
Chiang & Lee's answers) set beside it must rest on the same items, or the comparison mixes two
samples. So, per dataset, task and criterion the judge scored anything on, annotators' and recorded
judges' verdicts on other items are set aside. The judge is the live one (`kind` `judge`); in a
replay without one, the recorded judges' own scored items bound the ceiling. A recorded judge that
shares no item with the live judge keeps its own items (its `items` count says how many).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from llmjury.judgement.verdicts import Verdict

#: Verdict kinds measured on the judge's items, and the kinds whose scored items bound them (in order).
BOUNDED = ("annotator", "recorded")
JUDGES = ("judge", "recorded")


def target(verdict: Verdict) -> str:
    """`dataset/task/criterion`."""
    a = verdict.attributes
    return f"{a['dataset']}/{a['task']}/{a['criterion']}"


def scored_items(verdicts: Sequence[Verdict]) -> dict[str, set[str]]:
    """Per target, the items the judge scored: the live judge's, else (a replay) the recorded judges'."""
    by_kind: dict[str, dict[str, set[str]]] = {kind: defaultdict(set) for kind in JUDGES}
    for v in verdicts:
        if v.kind in by_kind and v.valid and v.result is not None:
            by_kind[v.kind][target(v)].add(str(v.attributes["item"]))
    live, recorded = by_kind["judge"], by_kind["recorded"]
    return {t: live.get(t) or recorded[t] for t in set(live) | set(recorded)}


def on_scored_items(verdicts: Sequence[Verdict]) -> tuple[list[Verdict], dict[str, int]]:
    """The verdicts with annotators and reference judges kept to the judge's items, and per target
    the number of items that bound them."""
    scored = scored_items(verdicts)
    live = {target(v) for v in verdicts if v.kind == "judge" and v.valid}
    # A recorded judge with no item among the judge's (the offline suite's sample of Chiang & Lee's
    # answers) keeps its own items: set aside whole, it would vanish from the report unsaid.
    overlapping = {(v.judge.provider, target(v)) for v in verdicts
                   if v.kind == "recorded" and str(v.attributes["item"]) in scored.get(target(v), set())}
    kept = []
    for v in verdicts:
        t = target(v) if v.kind in BOUNDED else None
        bounded = t in scored and (v.kind == "annotator" or (t in live and (v.judge.provider, t) in overlapping))
        if bounded and str(v.attributes["item"]) not in scored[str(t)]:
            continue
        kept.append(v)
    return kept, {t: len(items) for t, items in sorted(scored.items())}
