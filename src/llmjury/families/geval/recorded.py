"""Recorded judges on the suite's datasets: scores saved by another judge, read from a file and
put through the same meta-evaluation without calling a model.

UniEval's `predict_scores` file holds the same 360 Topical-Chat items with one score per dimension;
FlowScore's scores come with the DSTC9 items.
"""

from __future__ import annotations

from pathlib import Path

from llmjury.cases import Case, slug
from llmjury.datasets import dialogue_items
from llmjury.datasets.dialogue_items import DialogueItem
from llmjury.datasets.files import read_json
from llmjury.errors import DatasetError
from llmjury.families.geval.criteria import CRITERIA
from llmjury.families.geval.datasets import FAMILY, find, load
from llmjury.families.geval.options import GEvalOptions
from llmjury.families.geval.results import ScoreResult
from llmjury.judgement.jury import Jury, Outcome
from llmjury.judgement.verdicts import JudgeConfig, Verdict
from llmjury.running.settings import Settings


class RecordedCase(Case):
    """All items of one recorded file for one criterion (one test, many verdicts: no call is made)."""

    family: str = FAMILY
    path: str
    judge_name: str
    criterion: str

    def marks(self) -> list[str]:
        return [FAMILY, "recorded", f"criterion_{self.criterion}", "geval_topical_chat"]


def recorded_cases(options: GEvalOptions, settings: Settings) -> list[RecordedCase]:
    """UniEval's recorded scores, one case per criterion, when Topical-Chat is judged and the file is found."""
    path = find(options, settings, "unieval")
    if path is None or "topical_chat" not in options.selected or not (options.unieval or path.exists()):
        return []
    return [RecordedCase(id=f"recorded-unieval-{c}", path=str(path), judge_name="unieval", criterion=c)
            for c in CRITERIA]


def unieval_scores(path: Path, criterion: str) -> list[tuple[DialogueItem, float]]:
    """(item, recorded score) for every item of a UniEval-style predictions file."""
    items = dialogue_items.topical_chat(path)
    raw = read_json(path)
    out = []
    for i, (item, row) in enumerate(zip(items, raw, strict=True)):
        try:
            out.append((item, float(row["predict_scores"][criterion])))
        except (KeyError, TypeError, ValueError) as exc:
            raise DatasetError(str(path), i, f"no recorded {criterion} score ({exc})") from exc
    return out


def recorded_verdict(case_id: str, judge: JudgeConfig, item: DialogueItem, task: str, criterion: str,
                     score: float) -> Verdict:
    """A recorded score of one item as a verdict the meta-evaluation reads like a judge's."""
    return Verdict(case_id=case_id, family=FAMILY, kind="recorded", judge=judge,
                   result=ScoreResult(score=score, method="recorded"),
                   attributes={"dataset": item.dataset, "item": item.id, "context_id": item.context_id,
                               "system_id": item.system_id, "task": task, "criterion": criterion,
                               "human": item.human.get(criterion)})


def judge_config(name: str, scoring: str = "recorded") -> JudgeConfig:
    return JudgeConfig(provider=f"recorded:{slug(name)}", parser="recorded", scoring=scoring)


async def replay(case: RecordedCase, jury: Jury) -> Outcome:
    judge = judge_config(case.judge_name)
    return Outcome([recorded_verdict(f"{item.id}-response-{case.criterion}", judge, item, "response", case.criterion,
                                     score) for item, score in unieval_scores(Path(case.path), case.criterion)])


class FlowScoreCase(Case):
    """FlowScore's recorded scores on the DSTC9 items (negated: lower FlowScore is better)."""

    family: str = FAMILY

    def marks(self) -> list[str]:
        return [FAMILY, "recorded", "geval_dstc9", "whole_dialogue", "criterion_overall"]


def flowscore_cases(options: GEvalOptions) -> list[FlowScoreCase]:
    return [FlowScoreCase(id="recorded-flowscore-dstc9")] if "dstc9" in options.selected else []


async def replay_flowscore(case: FlowScoreCase, jury: Jury) -> Outcome:
    judge = judge_config("flowscore", "recorded (negated)")
    items, _ = load("dstc9", jury.options(FAMILY, GEvalOptions), jury.settings)
    return Outcome([recorded_verdict(f"{item.id}-flowscore", judge, item, "dialogue", "overall",
                                     -float(item.extra["flowscore"])) for item in items if "flowscore" in item.extra])
