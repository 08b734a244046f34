"""The arena's run files in seed 002's layout: each dataset's battles as results and cache CSVs,
plus a CSV per leaderboard, so seed 002's own tools read a run of llmjury."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import numpy as np

from llmjury.families.arena import layout
from llmjury.families.arena.judge import score_text
from llmjury.families.arena.ratings import online_elo
from llmjury.families.arena.report import Verdicts, battles_of, winner_of
from llmjury.families.arena.results import BATTLE, ArenaSection, BattleResult
from llmjury.judgement.verdicts import Verdict
from llmjury.tables import csv_table

#: Characters a leaderboard's file name may not hold.
_NOT_IN_FILE_NAMES = re.compile(r"[^A-Za-z0-9._-]+")


def files(section: ArenaSection, verdicts: Verdicts) -> dict[str, str]:
    """Seed 002's results and cache files, one dataset's battles each, plus a leaderboard CSV each.

    The live judge's battles of the leading dataset go to `results/<experiment>/`, those of any
    other dataset to `results/<experiment>-<dataset>/`; each dataset's cache to `cache/<dataset>/`.
    Human labels and recorded verdicts are not the run's battles and are left out."""
    out: dict[str, str] = {}
    main = (section.main or "").split("/")[0]
    by_run: dict[tuple[str, str], list[Verdict]] = defaultdict(list)
    for v in verdicts:
        if v.kind == BATTLE:
            by_run[(v.attributes.get("experiment", "default"), str(v.attributes.get("dataset")))].append(v)
    for (experiment, dataset), vs in sorted(by_run.items()):
        folder = experiment if dataset == main else f"{experiment}-{dataset}"
        out.update(experiment_files(f"arena/results/{folder}", vs))
        out.update(cache_files(f"arena/cache/{dataset}", vs))
    for name, board in section.leaderboards.items():
        rows = [{"model": m, "rank": board.rank[m].value, "bt_rating": board.rating[m].value,
                 "bt_low": board.rating[m].low, "bt_high": board.rating[m].high, "elo_rating": board.elo[m].value,
                 "elo_low": board.elo[m].low, "elo_high": board.elo[m].high, "battles": board.rating[m].n}
                for m in board.order]
        out[leaderboard_file(name)] = csv_table(rows)
    return out


def leaderboard_file(name: str) -> str:
    """The CSV of the leaderboard `name` (`<dataset>/<judge>`): anything but letters, digits, `.`,
    `_` and `-` becomes `_`, because a recorded judge's `recorded:gpt-4` or a jury's label would put
    a colon, a `+` or spaces in the file name, which Windows, zip tools and shells refuse or mangle."""
    return f"arena/leaderboard_{_NOT_IN_FILE_NAMES.sub('_', name).strip('_')}.csv"


def battle_rows(verdicts: Verdicts) -> list[dict[str, Any]]:
    """One row per battle, in seed 002's battle-record columns."""
    rows = []
    for v in sorted(verdicts, key=lambda v: v.case_id):
        a = v.attributes
        winner = (winner_of(v) or "") if v.valid else ""
        rows.append({"model_a": a["model_a"], "model_b": a["model_b"], "winner": winner,
                     "judger": v.judge.provider.partition(":")[2] or v.judge.provider,
                     "tstamp": a.get("tstamp", ""), "question": a["question"], "answer_a": a.get("answer_a", ""),
                     "answer_b": a.get("answer_b", ""),
                     "gpt_4_response": str({"is_valid": v.valid, "response": "\n---\n".join(v.raw)}),
                     "gpt_4_score": score_text(winner) if winner else "", "is_valid": v.valid, **by_order(v)})
    return rows


def by_order(verdict: Verdict) -> dict[str, str]:
    """The judge's winner and response in each answer order (`ab`: answer_a shown first), a juror's
    label before each when a jury judged; empty for an order not judged."""
    runs = verdict.result.runs if isinstance(verdict.result, BattleResult) else []
    jury = len({r.juror for r in runs}) > 1
    row = {}
    for order in ("ab", "ba"):
        mine = [r for r in runs if r.order == order]
        row[f"winner_{order}"] = " | ".join((f"{r.juror}: " if jury else "") + (r.winner or "") for r in mine)
        row[f"judge_response_{order}"] = "\n---\n".join(
            (f"[{r.juror}]\n" if jury else "") + (r.response or r.error or "") for r in mine)
    return row


def experiment_files(folder: str, verdicts: Verdicts) -> dict[str, str]:
    """One experiment's results folder: questions, models, battles, outcomes and Elo ratings."""
    table = battle_rows(verdicts)
    valid = [row for row in table if row["is_valid"]]
    scored = [v for v in verdicts if v.valid and winner_of(v) is not None]
    questions = list(dict.fromkeys(row["question"] for row in table))
    models = list(dict.fromkeys([row["model_a"] for row in table] + [row["model_b"] for row in table]))
    elo = np.round(online_elo(battles_of(scored)), 2) if scored else np.empty(0)
    names = battles_of(scored).models if scored else []
    # best first, ties in the order pandas' sort_values(ascending=False) gave them (reversed quicksort)
    best = np.arange(len(elo))[::-1][elo[::-1].argsort(kind="quicksort")][::-1]
    return {
        f"{folder}/questions.csv": csv_table([{"question": q} for q in questions], ["question"]),
        f"{folder}/models.csv": csv_table([{"model": m} for m in models], ["model"]),
        f"{folder}/battle_arrangement.csv": csv_table(table, layout.ARRANGEMENT_COLUMNS),
        f"{folder}/battle_records.csv": csv_table(table, layout.RECORD_COLUMNS),
        f"{folder}/battle_outcomes.csv": csv_table(valid, layout.OUTCOME_COLUMNS),
        f"{folder}/elo_rating.csv": csv_table([{"model": names[i], "elo_rating": float(elo[i])} for i in best],
                                              ["model", "elo_rating"]),
    }


def cache_files(folder: str, verdicts: Verdicts) -> dict[str, str]:
    """q_and_as.csv (question + one column per model) and the battle records, seed 002's cache."""
    answers: dict[str, dict[str, str]] = defaultdict(dict)
    for v in verdicts:
        a = v.attributes
        for side in ("a", "b"):
            if a.get(f"answer_{side}") is not None:
                answers[a["question"]][a[f"model_{side}"]] = a[f"answer_{side}"]
    return {f"{folder}/q_and_as.csv": csv_table([{"question": q, **row} for q, row in answers.items()]),
            f"{folder}/battle_records.csv": csv_table(battle_rows(verdicts), layout.RECORD_COLUMNS)}
