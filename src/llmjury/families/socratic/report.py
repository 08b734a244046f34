"""Socratic aggregates: seed 000's tables, seed 003's JSON, intervals, position bias, and the
judge's agreement with MRBench's human preferences."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from llmjury.jurors import juror_agreement
from llmjury.majority import robust_verdict
from llmjury.stats import length_controlled_rate, proportion, sign_test

Records = list[dict[str, Any]]
HIDDEN_FROM_TABLES = ("seed003", "counted_runs")
OURS, BASELINE, TIE = "ours", "baseline", "tie"


def aggregate(records: Records) -> dict[str, Any]:
    simulated = [r for r in records if r["attributes"].get("source") == "simulated"]
    real = [r for r in records if r["attributes"].get("source") == "mathdial"]
    human = [r for r in records if r["attributes"].get("source") == "mrbench"]
    section: dict[str, Any] = {}
    if simulated:
        section.update(comparison(simulated))
    if real:
        section["mathdial"] = {k: v for k, v in comparison(real).items() if k not in ("seed003", "by_subject")}
    if human:
        section["judge_validity"] = agreement_with_humans(human)
    return section


def comparison(records: Records) -> dict[str, Any]:
    valid = [r for r in records if r["valid"]]
    winners = Counter(r["result"]["winner"] for r in valid)
    confidence = Counter(r["result"]["confidence"] for r in valid)
    n = len(valid)
    section: dict[str, Any] = {
        "win_rate": proportion(winners[OURS], n),
        "baseline_win_rate": proportion(winners[BASELINE], n),
        "tie_rate": proportion(winners[TIE], n),
        "decisive_win_rate": proportion(winners[OURS], winners[OURS] + winners[BASELINE]),
        "sign_test": sign_test(winners[OURS], winners[BASELINE]),
        "unanimous_rate": proportion(confidence["unanimous"], n),
        "final_verdicts": {"ours": winners[OURS], "baseline": winners[BASELINE], "tie": winners[TIE]},
        "confidence": {k: confidence[k] for k in ("unanimous", "majority", "no_consensus")},
        "counted_runs": dict(sorted(Counter(r["result"]["counted_runs"] for r in valid).items())),
        **position_bias(valid),
        "longer_wins_rate": longer_wins(valid),
        "length_controlled_win_rate": length_controlled(valid),
        "by_subject": {s: proportion(sum(r["result"]["winner"] == OURS for r in rs), len(rs))
                       for s, rs in sorted(group(valid, "subject").items())},
        "seed003": robust_summary(per_run_labels(records), total_subsets=len(records), **labels_of(records)),
    }
    aspects = aspect_rates(valid)
    if aspects:
        section["aspects"] = aspects
    if any("jurors" in r["result"] for r in valid):
        section["jury"] = juror_agreement(valid)
    return section


def group(records: Records, attribute: str) -> dict[str, Records]:
    groups: dict[str, Records] = {}
    for r in records:
        groups.setdefault(str(r["attributes"].get(attribute)), []).append(r)
    return groups


def position_bias(valid: Records) -> dict[str, Any]:
    """Does the preference survive a swap? Agreement over every pair of runs that put the two
    replies in opposite slots."""
    agree = pairs = 0
    for r in valid:
        runs = [run for run in r["result"]["runs"] if run["preferred"] is not None]
        for i, first in enumerate(runs):
            for second in runs[i + 1:]:
                same_juror = first.get("juror") == second.get("juror")
                if same_juror and first["ours_position"] != second["ours_position"]:
                    pairs += 1
                    agree += first["preferred"] == second["preferred"]
    return {"position_consistency": proportion(agree, pairs)}


def longer_wins(valid: Records) -> dict[str, Any]:
    """Among decisive verdicts between replies of different length, how often the longer won."""
    longer = total = 0
    for r in valid:
        winner, attrs = r["result"]["winner"], r["attributes"]
        ours, base = attrs.get("ours_chars"), attrs.get("baseline_chars")
        if winner in (OURS, BASELINE) and ours is not None and base is not None and ours != base:
            total += 1
            longer += (winner == OURS) == (ours > base)
    return proportion(longer, total)


def length_controlled(valid: Records) -> dict[str, Any]:
    """Our win rate had both replies been equally long (ties count half)."""
    rows = [r for r in valid if r["attributes"].get("ours_chars") is not None]
    outcome = np.array([{OURS: 1.0, BASELINE: 0.0}.get(r["result"]["winner"], 0.5) for r in rows])
    diff = np.array([r["attributes"]["ours_chars"] - r["attributes"]["baseline_chars"] for r in rows], dtype=float)
    return length_controlled_rate(outcome, diff)


def aspect_rates(valid: Records) -> dict[str, Any]:
    rates: dict[str, Any] = {}
    names = sorted({a for r in valid for a in (r["result"].get("aspects") or {})})
    for aspect in names:
        results = [r["result"]["aspects"][aspect] for r in valid if (r["result"].get("aspects") or {}).get(aspect)]
        wins = Counter(x["winner"] for x in results)
        rates[aspect] = {"win_rate": proportion(wins[OURS], len(results)),
                         "baseline_win_rate": proportion(wins[BASELINE], len(results)),
                         "tie_rate": proportion(wins[TIE], len(results))}
    return rates


def per_run_labels(records: Records) -> list[dict[str, str | None]]:
    """One dict per judge run: subset id → that run's label (None where the run was unscored)."""
    k = max((len(r["result"].get("runs", [])) for r in records), default=0)
    runs: list[dict[str, str | None]] = [{} for _ in range(k)]
    for r in records:
        labels = names(r)
        for i, run in enumerate(r["result"].get("runs", [])):
            runs[i][r["case_id"]] = labels[run["preferred"]] if run.get("preferred") else None
    return runs


def names(record: dict[str, Any]) -> dict[str, str]:
    attrs = record["attributes"]
    return {OURS: attrs.get("ours_name", OURS), BASELINE: attrs.get("baseline_name", BASELINE), TIE: TIE}


def labels_of(records: Records) -> dict[str, str]:
    first = names(records[0]) if records else {OURS: OURS, BASELINE: BASELINE}
    return {"ours": first[OURS], "baseline": first[BASELINE]}


def robust_summary(runs: Sequence[dict[str, str | None]], *, total_subsets: int | None = None,
                   ours: str = OURS, baseline: str = BASELINE) -> dict[str, Any]:
    """Seed 003's output from any number of single-run evaluations (subset id → label or None),
    where `ours` and `baseline` are the labels the runs use for the two systems.

    Rates are over successful evaluations; `unanimous_agreement_rate` is over all subsets, as in
    the seed's example (150 of 200).
    """
    subsets = sorted({s for run in runs for s in run})
    aggregated: dict[str, Any] = {}
    for subset in subsets:
        votes = [run.get(subset) for run in runs if subset in run]
        counted = [v for v in votes if v is not None]
        majority = robust_verdict(counted)
        if majority is None:
            continue
        aggregated[subset] = {"verdicts": counted, "verdict_counts": dict(Counter(counted)),
                              "final_verdict": majority.winner, "confidence": majority.confidence}
    total = total_subsets if total_subsets is not None else len(subsets)
    finals = Counter(a["final_verdict"] for a in aggregated.values())
    confidences = Counter(a["confidence"] for a in aggregated.values())
    done = len(aggregated)
    return {
        "summary": {
            "evaluation_completed": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "num_evaluation_runs": len(runs),
            "total_subsets": total,
            "successful_evaluations": done,
            "final_verdict_distribution": dict(finals),
            "confidence_distribution": dict(confidences),
            "ours_win_rate": _rate(finals[ours], done),
            "baseline_win_rate": _rate(finals[baseline], done),
            "tie_rate": _rate(finals[TIE], done),
            "unanimous_agreement_rate": round(confidences["unanimous"] / total, 3) if total else 0.0,
        },
        "aggregated_results": aggregated,
    }


def _rate(count: int, done: int) -> float:
    return round(count / done, 3) if done else 0.0


def agreement_with_humans(records: Records) -> dict[str, Any]:
    """Judge vs MRBench human preference (tutor A in the "ours" slot)."""
    valid = [r for r in records if r["valid"]]
    mapping = {OURS: "a", BASELINE: "b", TIE: "tie"}
    pairs = [(mapping[r["result"]["winner"]], r["attributes"]["human"]) for r in valid]
    with_ties = sum(j == h for j, h in pairs)
    decisive = [(j, h) for j, h in pairs if j != "tie" and h != "tie"]
    humans = {r["case_id"]: {"a": OURS, "b": BASELINE, "tie": TIE}[r["attributes"]["human"]] for r in valid}
    jury = {"jury": juror_agreement(valid, humans)} if any("jurors" in r["result"] for r in valid) else {}
    return {
        **jury,
        "dataset": "MRBench V1 (human annotations; preference = higher summed annotation score)",
        "agreement_with_ties": proportion(with_ties, len(pairs)),
        "agreement_without_ties": proportion(sum(j == h for j, h in decisive), len(decisive)),
        "human_tie_rate": proportion(sum(h == "tie" for _, h in pairs), len(pairs)),
        "judge_tie_rate": proportion(sum(j == "tie" for j, _ in pairs), len(pairs)),
        **position_bias(valid),
        "chance_agreement_with_ties": _chance(pairs),
    }


def _chance(pairs: list[tuple[str, str]]) -> float | None:
    """Agreement expected if judge and humans were independent with these marginals."""
    if not pairs:
        return None
    judge, human = Counter(j for j, _ in pairs), Counter(h for _, h in pairs)
    n = len(pairs)
    return sum(judge[c] * human[c] for c in ("a", "b", "tie")) / (n * n)


def markdown(section: dict[str, Any]) -> str:
    lines: list[str] = []
    if "final_verdicts" in section:
        v, c = section["final_verdicts"], section["confidence"]
        n = sum(v.values()) or 1
        lines += ["| | wins | ratio |", "|---|---|---|"]
        lines += [f"| {label} | {v[key]} | {v[key] / n:.1%} |" for key, label in
                  (("ours", "ours"), ("baseline", "baseline"), ("tie", "tie"))]
        total = sum(c.values()) or 1
        lines += ["", "| verdict confidence | count | ratio |", "|---|---|---|"]
        lines += [f"| {label} | {c[key]} | {c[key] / total:.1%} |" for key, label in
                  (("unanimous", "unanimous"), ("majority", "majority (two agree)"),
                   ("no_consensus", "no consensus"))]
        st = section["sign_test"]
        p = "n/a" if st["p_value"] is None else f"{st['p_value']:.3g}"
        lines += ["", f"Sign test on decisive verdicts: {st['wins']} wins, {st['losses']} losses, p = {p}."]
    if "judge_validity" in section:
        jv = section["judge_validity"]
        chance = jv["chance_agreement_with_ties"]
        lines += ["", "### Judge validity (MRBench human preferences)", "",
                  f"Agreement with humans: {_pct(jv['agreement_with_ties'])} with ties, "
                  f"{_pct(jv['agreement_without_ties'])} without ties; chance level with ties "
                  f"{'n/a' if chance is None else f'{chance:.1%}'}; position consistency "
                  f"{_pct(jv['position_consistency'])}."]
    return "\n".join(lines)


def _pct(metric: dict[str, Any]) -> str:
    if metric["value"] is None:
        return "n/a"
    return f"{metric['value']:.1%} [{metric['low']:.1%}, {metric['high']:.1%}] (n={metric['n']})"


def files(section: dict[str, Any], records: Records) -> dict[str, str]:
    """Seed 003's robust-evaluation JSON and one seed-style file per judge run."""
    out: dict[str, str] = {}
    simulated = [r for r in records if r["attributes"].get("source") == "simulated"]
    if "seed003" in section:
        out["socratic_robust_evaluation.json"] = json.dumps(section["seed003"], indent=2, ensure_ascii=False)
    for i, run in enumerate(per_run_labels(simulated), 1):
        out[f"socratic_run_{i}.json"] = json.dumps({"run": i, "evaluations": run}, indent=2, ensure_ascii=False)
    return out
