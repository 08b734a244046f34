"""Verdicts read from files, with no model call: a pairwise items file's human labels and recorded
per-order verdicts, seed 002 outcome files, Chatbot Arena logs and MT-Bench judgements.

The eval reads a pairwise items file through `pair_records` (one test); `llmjury replay arena
PATH` reads any of these through `read`, telling the formats apart by their fields.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from llmjury.cases import slug
from llmjury.errors import DatasetError
from llmjury.families.arena import importers, pairs
from llmjury.families.arena.cases import FAMILY, DatasetFile
from llmjury.families.arena.layout import records
from llmjury.families.arena.options import ArenaOptions
from llmjury.families.arena.results import HUMAN, RECORDED, HumanLabel, RecordedVerdict, Winner
from llmjury.family import Replayed
from llmjury.judgement.jury import Jury, Outcome
from llmjury.judgement.verdicts import JudgeConfig, Verdict

HUMAN_PREFIX, RECORDED_PREFIX = "human:", "recorded:"


def _attributes(dataset: str, question: str, index: int, model_a: str, model_b: str, **extra: Any) -> dict[str, Any]:
    return {"dataset": dataset, "question": question, "question_index": index, "model_a": model_a,
            "model_b": model_b, "round": 0, **extra}


def pair_verdicts(items: list[pairs.PairItem], dataset: str) -> list[Verdict]:
    """Each item's human label and recorded judge verdict, keyed by the item's case id (the id its
    live battle has too). A recorded verdict's orders that disagree make a tie (MT-Bench's rule)."""
    out = []
    for index, item in enumerate(items):
        attributes = _attributes(dataset, item.prompt, index, item.model_a, item.model_b, item=item.id,
                                 answer_a=item.answer_a, answer_b=item.answer_b)
        if item.label is not None:
            out.append(Verdict(case_id=item.case_id(dataset), family=FAMILY, kind=HUMAN,
                               judge=JudgeConfig(provider=f"{HUMAN_PREFIX}{dataset}"),
                               result=HumanLabel(winner=item.label), attributes=attributes))
        orders = [w for w in (item.verdict_ab, item.verdict_ba) if w is not None]
        if orders:
            winner: Winner = orders[0] if len(set(orders)) == 1 else "tie"
            out.append(Verdict(case_id=item.case_id(dataset), family=FAMILY, kind=RECORDED,
                               judge=JudgeConfig(provider=f"{RECORDED_PREFIX}{item.judge}", runs=len(orders)),
                               result=RecordedVerdict(winner=winner, ab=item.verdict_ab, ba=item.verdict_ba),
                               attributes=attributes))
    return out


async def pair_records(case: DatasetFile, jury: Jury) -> Outcome:
    """The human labels and recorded verdicts of a pairwise items file (no model call), read
    through the run's declared mapping and per-order verdict files."""
    options = jury.options(FAMILY, ArenaOptions)
    items, _ = pairs.load(Path(case.path), case.dataset, options)
    return Outcome(pair_verdicts(items, case.dataset))


def outcome_verdicts(path: Path, dataset: str) -> list[Verdict]:
    """Seed 002 outcome or record files and Chatbot Arena logs: one recorded battle per row, the
    judge named by `judger` (else the dataset); rows marked invalid stay, unscored."""
    out = []
    for number, row in enumerate(importers.outcome_rows(path)):
        judge = JudgeConfig(provider=f"{RECORDED_PREFIX}{row['judger'] or dataset}")
        extra = {k: row[k] for k in ("answer_a", "answer_b", "tstamp") if row[k]}
        battle = partial(Verdict, case_id=f"{slug(dataset)}-{number:05d}", family=FAMILY, kind=RECORDED, judge=judge,
                         attributes=_attributes(dataset, row["question"], number, row["model_a"], row["model_b"],
                                                **extra))
        if row["valid"]:
            out.append(battle(result=RecordedVerdict(winner=row["winner"])))
        else:
            out.append(battle(valid=False, error="refused: recorded as is_valid=False"))
    return out


def mtbench_verdicts(path: Path, dataset: str) -> list[Verdict]:
    """MT-Bench judgements (first turn): human votes as labels, GPT-4 pair judgements as recorded
    verdicts with both orders; each pair keyed by question and alphabetical model order. Every
    human vote is a battle of the human leaderboard; per-pair agreement reads one label per pair
    (the last vote), where FastChat's compute_agreement compares with each vote."""
    out = []
    for row in map(importers.canonical_row, importers.mtbench_judgements(path)):
        case_id = f"{slug(dataset)}-q{slug(row['question'])}-{slug(row['model_a'])}-vs-{slug(row['model_b'])}"
        attributes = _attributes(dataset, row["question"], 0, row["model_a"], row["model_b"])
        if "winner_ab" in row:
            out.append(Verdict(case_id=case_id, family=FAMILY, kind=RECORDED,
                               judge=JudgeConfig(provider=f"{RECORDED_PREFIX}{row['judge']}", runs=2),
                               result=RecordedVerdict(winner=row["winner"], ab=row["winner_ab"], ba=row["winner_ba"]),
                               attributes=attributes))
        else:
            out.append(Verdict(case_id=case_id, family=FAMILY, kind=HUMAN,
                               judge=JudgeConfig(provider=f"{HUMAN_PREFIX}{row['judge']}"),
                               result=HumanLabel(winner=row["winner"]), attributes=attributes))
    return out


def read(path: Path, options: ArenaOptions) -> Replayed:
    """Every recorded verdict in `path`, its format told by its fields; the dataset is named by
    `arena.pairs_name`, else the file's stem. Pairwise items come with their load report."""
    dataset = slug(options.pairs_name or path.stem)
    found = records(path)
    first = found[0][1] if found else {}
    loading = []
    if importers.is_mtbench(first):
        verdicts = mtbench_verdicts(path, dataset)
    elif importers.is_outcome(first):
        verdicts = outcome_verdicts(path, dataset)
    elif pairs.has_pair_fields(first, options.pair_mapping()):
        items, report = pairs.load(path, dataset, options)
        verdicts, loading = pair_verdicts(items, dataset), [report]
    else:
        raise DatasetError(str(path), 0, f"not a recorded verdict file: fields {sorted(first)}; expected pairwise "
                                         "items (prompt, answer_a, answer_b, label, verdict_ab, verdict_ba), seed "
                                         "002 outcomes (model_a, model_b, winner) or MT-Bench judgements")
    if not verdicts:
        raise DatasetError(str(path), None, "no verdict to replay: no item has a label or a recorded verdict")
    return Replayed(verdicts, loading)
