"""Arena aggregates: leaderboards with intervals, win-rate matrices, agreement with humans, and
seed 002's result and cache files.

Bradley-Terry is the primary rating (`arena.rating[model]`, `arena.rank[model]`); online Elo with
FastChat's parameters sits beside it (`arena.elo[model]`): online Elo depends on battle order, so
its value is the mean over 20 seeded orders, and elo_rating.csv keeps the seed's single pass in
case-id order. Intervals: 200 multinomial bootstrap rounds for Bradley-Terry, 20 resampling rounds for
Elo, seed 0.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from llmjury.families.arena import layout
from llmjury.families.arena.judge import score_text
from llmjury.families.arena.llmbar import published, replay_metrics
from llmjury.families.arena.prd import REFERENCE, human_majority, reviewer_agreement
from llmjury.families.arena.ratings import (
    Battles,
    bootstrap_bradley_terry,
    bootstrap_elo,
    bradley_terry,
    empirical_win_rates,
    interval,
    online_elo,
    permuted_elo,
    predicted_win_rates,
    win_counts,
)
from llmjury.jurors import juror_agreement
from llmjury.stats import metric, proportion

Records = list[dict[str, Any]]
HUMAN_PREFIX = "human:"
HIDDEN_FROM_TABLES = ("leaderboards", "llmbar", "prd")  # rendered by markdown() below
BT_ROUNDS, ELO_ROUNDS = 200, 20


def is_human(record: dict[str, Any]) -> bool:
    return record["judge"]["provider"].startswith(HUMAN_PREFIX)


def battles_of(records: Records) -> Battles:
    ordered = sorted(records, key=lambda r: r["case_id"])
    return Battles.from_rows([r["attributes"]["model_a"] for r in ordered],
                             [r["attributes"]["model_b"] for r in ordered], [r["result"]["winner"] for r in ordered])


def anchor_of(records: Records, models: list[str]) -> tuple[int, float] | None:
    text = next((r["attributes"].get("anchor") for r in records if r["attributes"].get("anchor")), None)
    if not text:
        return None
    name, _, rating = text.partition("=")
    return (models.index(name), float(rating)) if name in models else None


def leaderboard(records: Records) -> dict[str, Any]:
    """Ratings, ranks, counts and matrices for one set of valid battles."""
    battles = battles_of(records)
    models = battles.models
    anchor = anchor_of(records, models)
    bt = bradley_terry(win_counts(battles), anchor=anchor)
    bt_samples = bootstrap_bradley_terry(battles, rounds=BT_ROUNDS, anchor=anchor)
    bt_low, bt_high = interval(bt_samples)
    elo = permuted_elo(battles, permutations=ELO_ROUNDS)
    elo_low, elo_high = interval(bootstrap_elo(battles, rounds=ELO_ROUNDS))
    ranks = (-bt).argsort().argsort() + 1
    rank_samples = (-bt_samples).argsort(axis=1).argsort(axis=1) + 1
    rank_low, rank_high = interval(rank_samples)
    games = np.bincount(np.concatenate([battles.a, battles.b]), minlength=len(models))
    winners = [r["result"]["winner"] for r in records]
    order = [models[i] for i in np.argsort(-bt)]
    return {
        "battles": len(battles),
        "anchor": "mean 1000" if anchor is None else f"{models[anchor[0]]}={anchor[1]:g}",
        "rating": {m: metric(bt[i], bt_low[i], bt_high[i], games[i], "bradley-terry, bootstrap")
                   for i, m in enumerate(models)},
        "elo": {m: metric(elo[i], elo_low[i], elo_high[i], games[i],
                          "online elo (k=4): mean over 20 orders, bootstrap interval")
                for i, m in enumerate(models)},
        "rank": {m: metric(ranks[i], rank_low[i], rank_high[i], games[i], "bradley-terry rank, bootstrap")
                 for i, m in enumerate(models)},
        "order": order,
        "tie_rate": proportion(sum(w.startswith("tie") for w in winners), len(winners)),
        "win_rates": _matrix(empirical_win_rates(battles), models),
        "predicted_win_rates": _matrix(predicted_win_rates(bt), models),
    }


def _matrix(values: np.ndarray, models: list[str]) -> dict[str, dict[str, float | None]]:
    return {a: {b: (None if np.isnan(values[i, j]) or i == j else round(float(values[i, j]), 4))
                for j, b in enumerate(models)} for i, a in enumerate(models)}


def prd_section(groups: dict[str, Records], boards: dict[str, Any]) -> dict[str, Any]:
    """Each PRD reviewer against the human majority, and its ranking against the humans'."""
    majority = human_majority(groups["prd/human"])
    human_board = boards["prd/human"]
    out: dict[str, Any] = {"human_majority_rule": "strict plurality of all annotator votes from both orders, "
                                                  "else tie", "reference": REFERENCE, "reviewers": {}}
    for name, rs in sorted(groups.items()):
        if not name.startswith("prd/recorded:"):
            continue
        reviewer = name.removeprefix("prd/recorded:prd-")
        board = boards[name]
        models = sorted(board["rating"])
        rho = stats.spearmanr([board["rating"][m]["value"] for m in models],
                              [human_board["rating"][m]["value"] for m in models])
        out["reviewers"][reviewer] = {**reviewer_agreement(rs, majority), "order": board["order"],
                                      "spearman_with_human_ranking": float(rho.statistic), "models": len(models)}
    out["human_order"] = human_board["order"]
    return out


def llmbar_section(records: Records) -> dict[str, Any]:
    """Replayed LLMBar judges beside the published Acc. / Agr. per set, judge and strategy."""
    groups: dict[str, Records] = defaultdict(list)
    for r in records:
        a = r["attributes"]
        groups[f"{a['set']}/{a['llmbar_judge']}/{a['strategy']}"].append(r)
    out = {}
    for key, rs in sorted(groups.items()):
        ours = replay_metrics(rs)
        reference = published(Path(rs[0]["attributes"]["statistics"]))
        out[key] = {**ours, "published_accuracy_percent": reference["accuracy_percent"],
                    "published_agreement_percent": reference["agreement_percent"]}
    return out


def aggregate(records: Records) -> dict[str, Any]:
    llmbar = [r for r in records if r["attributes"].get("benchmark") == "llmbar"]
    records = [r for r in records if r["attributes"].get("benchmark") != "llmbar"]
    valid = [r for r in records if r["valid"]]
    groups: dict[str, Records] = defaultdict(list)
    for r in valid:
        provider = r["judge"]["provider"]
        kind = "human" if is_human(r) else provider if provider.startswith("recorded:") else "judge"
        groups[f"{r['attributes']['dataset']}/{kind}"].append(r)
    boards = {name: leaderboard(rs) for name, rs in sorted(groups.items()) if len(rs) > 0}
    judged = [name for name in boards if name.endswith("/judge")]
    section: dict[str, Any] = {}
    if judged:
        main = max(judged, key=lambda name: (not name.startswith("mrbench"), boards[name]["battles"]))
        section["main"] = main
        section.update({k: boards[main][k] for k in ("rating", "elo", "rank", "tie_rate")})
        judged_records = groups[main]
        section["longer_wins_rate"] = longer_wins(judged_records)
        self_preference = judge_self_preference(judged_records)
        if self_preference:
            section["self_preference"] = self_preference
        section["swap_consistency"] = proportion(
            sum(r["result"].get("consistent", True) for r in judged_records if r["result"].get("counted_runs", 1) > 1),
            sum(r["result"].get("counted_runs", 1) > 1 for r in judged_records))
    validity: dict[str, Any] = {}
    if "mrbench/judge" in groups and "mrbench/human" in groups:
        validity["mrbench"] = against_humans(groups["mrbench/judge"], groups["mrbench/human"],
                                             boards["mrbench/judge"], boards["mrbench/human"])
    if "prd/human" in groups:
        validity["prd"] = prd_section(groups, boards)
    juried = [r for name in judged for r in groups[name] if "jurors" in r["result"]]
    if juried:
        humans = {r["case_id"]: r["result"]["winner"] for r in groups.get("mrbench/human", [])}
        section["jury"] = juror_agreement(juried, humans or None)
    if llmbar:
        validity["llmbar"] = llmbar_section(llmbar)
    if validity:
        section["judge_validity"] = validity
    section["leaderboards"] = boards
    return section


def longer_wins(records: Records) -> dict[str, Any]:
    """Among decisive battles between answers of different length, how often the longer won."""
    longer = total = 0
    for r in records:
        a, winner = r["attributes"], r["result"]["winner"]
        la, lb = len(a.get("answer_a") or ""), len(a.get("answer_b") or "")
        if winner in ("model_a", "model_b") and la != lb:
            total += 1
            longer += (winner == "model_a") == (la > lb)
    return proportion(longer, total)


def judge_self_preference(records: Records) -> dict[str, Any] | None:
    """When the judge's own model is also a contestant: how often it wins the battles it judges,
    beside how often the other contestants win theirs (half is a fair share against a random
    opponent; ties count half)."""
    judge_model = records[0]["judge"]["provider"].partition(":")[2] if records else ""
    own = [r for r in records if judge_model in (r["attributes"]["model_a"], r["attributes"]["model_b"])]
    if not judge_model or not own:
        return None
    wins = sum(1.0 if r["result"]["winner"] == ("model_a" if r["attributes"]["model_a"] == judge_model else "model_b")
               else 0.5 if r["result"]["winner"].startswith("tie") else 0.0 for r in own)
    return {"model": judge_model, "own_battles_win_rate": metric(wins / len(own), None, None, len(own),
                                                                  "share of its own battles the judge gave itself")}


def agreement(first: dict[str, str], second: dict[str, str]) -> dict[str, Any]:
    """Agreement of two judges on the battles both decided, as the MT-Bench paper reports it:
    with ties (any label containing "tie" is a tie) and without (battles where either says tie dropped)."""
    common = sorted(set(first) & set(second))
    tie = lambda w: "tie" if "tie" in w else w  # noqa: E731
    pairs = [(tie(first[k]), tie(second[k])) for k in common]
    decisive = [(a, b) for a, b in pairs if a != "tie" and b != "tie"]
    return {"with_ties": proportion(sum(a == b for a, b in pairs), len(pairs)),
            "without_ties": proportion(sum(a == b for a, b in decisive), len(decisive))}


def against_humans(judge: Records, human: Records, judge_board: dict[str, Any],
                   human_board: dict[str, Any]) -> dict[str, Any]:
    """Per-battle verdicts and rankings of the LLM judge beside the human labels on MRBench
    (the two leaderboards are the ones the section already computed)."""
    judge_votes = {r["case_id"]: r["result"]["winner"] for r in judge}
    human_votes = {r["case_id"]: r["result"]["winner"] for r in human}
    human_same = leaderboard([r for r in human if r["case_id"] in judge_votes])
    models = sorted(set(judge_board["rating"]) & set(human_board["rating"]))
    judge_r = [judge_board["rating"][m]["value"] for m in models]
    human_r = [human_board["rating"][m]["value"] for m in models]
    rho = stats.spearmanr(judge_r, human_r)
    tau = stats.kendalltau(judge_r, human_r)
    return {
        "dataset": "MRBench V1: preference = higher summed human annotation score",
        "battles": len(judge_votes),
        "agreement": agreement(judge_votes, human_votes),
        "ranking": {"models": len(models), "spearman": float(rho.statistic), "spearman_p": float(rho.pvalue),
                    "kendall": float(tau.statistic), "kendall_p": float(tau.pvalue)},
        "judge_order": judge_board["order"], "human_order": human_board["order"],
        "human_order_same_battles": human_same["order"],
    }


def markdown(section: dict[str, Any]) -> str:
    lines: list[str] = []
    validity = section.get("judge_validity", {})
    if validity.get("llmbar"):
        lines += ["### LLMBar judges replayed (Acc. / Agr., %): ours beside published", "",
                  "| set / judge / strategy | n | Acc. | published | Agr. | published | unparsed |",
                  "|---|---|---|---|---|---|---|"]
        for key, m in validity["llmbar"].items():
            lines.append(f"| `{key}` | {m['positional_agreement']['n']} | {100 * m['accuracy']:.1f} | "
                         f"{m['published_accuracy_percent']:.1f} | {100 * m['positional_agreement']['value']:.1f} | "
                         f"{m['published_agreement_percent']:.1f} | {m['unparsed']} |")
        lines.append("")
    for name, board in section.get("leaderboards", {}).items():
        lines += [f"### Leaderboard `{name}` ({board['battles']} battles; Bradley-Terry anchored at {board['anchor']})",
                  "", "| rank | model | Bradley-Terry [95% CI] | online Elo [95% CI] | battles |",
                  "|---|---|---|---|---|"]
        for model in board["order"]:
            bt, elo, rank = board["rating"][model], board["elo"][model], board["rank"][model]
            lines.append(f"| {rank['value']:.0f} | `{model}` | {bt['value']:.0f} [{bt['low']:.0f}, {bt['high']:.0f}] | "
                         f"{elo['value']:.0f} [{elo['low']:.0f}, {elo['high']:.0f}] | {bt['n']} |")
        lines.append("")
    prd = validity.get("prd")
    if prd:
        lines += ["### PRD reviewers against the human majority (ours | curators' reference)", "",
                  "| reviewer | agreement with ties | without ties | swap consistency | Spearman vs human ranking |",
                  "|---|---|---|---|---|"]
        for reviewer, m in prd["reviewers"].items():
            ref = prd["reference"].get(reviewer, (None, None, None))
            cells = [f"{m[k]['value']:.3f} \\| {r if r is not None else 'n/a'}" for k, r in
                     zip(("agreement_with_ties", "agreement_without_ties", "swap_consistency"), ref, strict=True)]
            lines.append(f"| {reviewer} | " + " | ".join(cells) + f" | {m['spearman_with_human_ranking']:.3f} |")
        lines += ["", f"Human order: {', '.join(prd['human_order'])}", ""]
    mrbench = validity.get("mrbench")
    if mrbench:
        agree, ranking = mrbench["agreement"], mrbench["ranking"]
        lines += ["### Judge against human labels (MRBench)", "",
                  f"Per battle: {_pct(agree['with_ties'])} agreement with ties, {_pct(agree['without_ties'])} "
                  f"without ties. Ranking of {ranking['models']} tutors: Spearman {ranking['spearman']:.3f}, "
                  f"Kendall {ranking['kendall']:.3f}.", "",
                  f"Human order: {', '.join(mrbench['human_order'])}  ",
                  f"Judge order: {', '.join(mrbench['judge_order'])}", ""]
    return "\n".join(lines)


def _pct(m: dict[str, Any]) -> str:
    return "n/a" if m["value"] is None else f"{m['value']:.1%} [{m['low']:.1%}, {m['high']:.1%}] (n={m['n']})"


def files(section: dict[str, Any], records: Records) -> dict[str, str]:
    """Seed 002's results and cache files for every judged experiment, plus a leaderboard CSV."""
    out: dict[str, str] = {}
    judged = [r for r in records if not is_human(r) and r["attributes"].get("dataset") not in ("mrbench", None)]
    by_experiment: dict[str, Records] = defaultdict(list)
    for r in judged:
        by_experiment[r["attributes"].get("experiment", "default")].append(r)
    for experiment, rs in sorted(by_experiment.items()):
        out.update(experiment_files(f"arena/results/{experiment}", rs))
        dataset = rs[0]["attributes"]["dataset"]
        out.update(cache_files(f"arena/cache/{dataset}", rs))
    for name, board in section.get("leaderboards", {}).items():
        rows = [{"model": m, "rank": board["rank"][m]["value"], "bt_rating": board["rating"][m]["value"],
                 "bt_low": board["rating"][m]["low"], "bt_high": board["rating"][m]["high"],
                 "elo_rating": board["elo"][m]["value"], "elo_low": board["elo"][m]["low"],
                 "elo_high": board["elo"][m]["high"], "battles": board["rating"][m]["n"]} for m in board["order"]]
        out[f"arena/leaderboard_{name.replace('/', '_')}.csv"] = pd.DataFrame(rows).to_csv(index=False)
    return out


def battle_rows(records: Records) -> pd.DataFrame:
    rows = []
    for r in sorted(records, key=lambda r: r["case_id"]):
        a = r["attributes"]
        winner = r["result"].get("winner", "") if r["valid"] else ""
        rows.append({"model_a": a["model_a"], "model_b": a["model_b"], "winner": winner,
                     "judger": r["judge"]["provider"].partition(":")[2] or r["judge"]["provider"],
                     "tstamp": a.get("tstamp", ""), "question": a["question"], "answer_a": a.get("answer_a", ""),
                     "answer_b": a.get("answer_b", ""),
                     "gpt_4_response": str({"is_valid": r["valid"], "response": "\n---\n".join(r["raw"])}),
                     "gpt_4_score": score_text(winner) if winner else "", "is_valid": r["valid"]})
    return pd.DataFrame(rows, columns=layout.RECORD_COLUMNS)


def experiment_files(folder: str, records: Records) -> dict[str, str]:
    table = battle_rows(records)
    valid = table[table["is_valid"]]
    questions = list(dict.fromkeys(table["question"]))
    models = list(dict.fromkeys(list(table["model_a"]) + list(table["model_b"])))
    elo = online_elo(battles_of([r for r in records if r["valid"]])) if len(valid) else []
    names = battles_of([r for r in records if r["valid"]]).models if len(valid) else []
    return {
        f"{folder}/questions.csv": pd.DataFrame({"question": questions}).to_csv(index=False),
        f"{folder}/models.csv": pd.DataFrame({"model": models}).to_csv(index=False),
        f"{folder}/battle_arrangement.csv": layout.write_csv(table, layout.ARRANGEMENT_COLUMNS),
        f"{folder}/battle_records.csv": layout.write_csv(table, layout.RECORD_COLUMNS),
        f"{folder}/battle_outcomes.csv": layout.write_csv(valid, layout.OUTCOME_COLUMNS),
        f"{folder}/elo_rating.csv": pd.DataFrame({"model": names, "elo_rating": np.round(elo, 2)})
        .sort_values("elo_rating", ascending=False).to_csv(index=False),
    }


def cache_files(folder: str, records: Records) -> dict[str, str]:
    """q_and_as.csv (question + one column per model) and the battle records, seed 002's cache."""
    answers: dict[str, dict[str, str]] = defaultdict(dict)
    for r in records:
        a = r["attributes"]
        for side in ("a", "b"):
            if a.get(f"answer_{side}") is not None:
                answers[a["question"]][a[f"model_{side}"]] = a[f"answer_{side}"]
    wide = pd.DataFrame([{"question": q, **row} for q, row in answers.items()])
    return {f"{folder}/q_and_as.csv": wide.to_csv(index=False),
            f"{folder}/battle_records.csv": layout.write_csv(battle_rows(records), layout.RECORD_COLUMNS)}
