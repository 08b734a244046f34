"""A recorded judge: scores read from a file, keyed by item, through the same meta-evaluation.

Reads UniEval's `predict_scores` file (the same 360 Topical-Chat items, one score per dimension)
or any earlier run's `verdicts.jsonl` (G-Eval verdicts), so saved outputs are re-scored without
calling a model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from llmjury.cases import Case, slug
from llmjury.datasets import dialogue_items
from llmjury.datasets.files import read_jsonl
from llmjury.errors import DatasetError
from llmjury.families.geval.cases import FAMILY
from llmjury.jury import Jury, Outcome
from llmjury.verdicts import JudgeConfig, Verdict

UNIEVAL = dialogue_items.FIXTURES / "topical_chat_usr" / "unieval_predictions.json"


class RecordedCase(Case):
    """All items of one recorded file for one criterion (one test, many verdicts: no call is made)."""

    family: str = FAMILY
    path: str
    judge_name: str
    criterion: str

    def marks(self) -> list[str]:
        return [FAMILY, "recorded", f"criterion_{self.criterion}", "geval_topical_chat"]


def recorded_cases(path: Path = UNIEVAL, judge_name: str = "unieval",
                   criteria: tuple[str, ...] = dialogue_items.USR_DIMENSIONS) -> list[RecordedCase]:
    return [RecordedCase(id=f"recorded-{slug(judge_name)}-{c}", path=str(path), judge_name=judge_name, criterion=c)
            for c in criteria]


def unieval_scores(path: Path, criterion: str) -> list[tuple[dialogue_items.DialogueItem, float]]:
    """(item, recorded score) for every item of a UniEval-style predictions file."""
    items = dialogue_items.topical_chat(path)
    raw = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for i, (item, row) in enumerate(zip(items, raw, strict=True)):
        try:
            out.append((item, float(row["predict_scores"][criterion])))
        except (KeyError, TypeError, ValueError) as exc:
            raise DatasetError(str(path), i, f"no recorded {criterion} score ({exc})") from exc
    return out


def verdict_scores(path: Path, criterion: str) -> list[dict[str, Any]]:
    """G-Eval verdict records of an earlier run for one criterion (valid ones only)."""
    records = [record for _, record in read_jsonl(path)]
    return [r for r in records if r["family"] == FAMILY and r["valid"]
            and r["attributes"].get("criterion") == criterion and "score" in r["result"]]


async def replay(case: RecordedCase, jury: Jury) -> Outcome:
    path = Path(case.path)
    judge = JudgeConfig(provider=f"recorded:{case.judge_name}", parser="recorded", scoring="recorded")
    if path.suffix == ".jsonl":
        verdicts = [Verdict(case_id=r["case_id"], family=FAMILY, judge=judge, result={"score": r["result"]["score"],
                                                                                        "method": "recorded"},
                            attributes=r["attributes"]) for r in verdict_scores(path, case.criterion)]
        return Outcome(verdicts)
    verdicts = []
    for item, score in unieval_scores(path, case.criterion):
        verdicts.append(Verdict(
            case_id=f"{item.id}-response-{case.criterion}", family=FAMILY, judge=judge,
            result={"score": score, "method": "recorded"},
            attributes={"dataset": item.dataset, "item": item.id, "context_id": item.context_id,
                        "system_id": item.system_id, "task": "response", "criterion": case.criterion,
                        "human": item.human.get(case.criterion)}))
    return Outcome(verdicts)


class FlowScoreCase(Case):
    """FlowScore's recorded scores on the DSTC9 items (negated: lower FlowScore is better)."""

    family: str = FAMILY

    def marks(self) -> list[str]:
        return [FAMILY, "recorded", "geval_dstc9", "whole_dialogue", "criterion_overall"]


async def replay_flowscore(case: FlowScoreCase, jury: Jury) -> Outcome:
    from llmjury.families.geval.cases import load_items
    from llmjury.families.geval.pipeline import options

    judge = JudgeConfig(provider="recorded:flowscore", parser="recorded", scoring="recorded (negated)")
    verdicts = []
    for item in load_items("dstc9", options(jury)):
        if "flowscore" not in item.extra:
            continue
        verdicts.append(Verdict(
            case_id=f"{item.id}-flowscore", family=FAMILY, judge=judge,
            result={"score": -float(item.extra["flowscore"]), "method": "recorded"},
            attributes={"dataset": item.dataset, "item": item.id, "context_id": item.context_id,
                        "system_id": item.system_id, "task": "dialogue", "criterion": "overall",
                        "human": item.human["overall"]}))
    return Outcome(verdicts)
