"""G-Eval's case sets: the judged items, the recorded judges (UniEval, gpt-3.5's G-Eval answers,
FlowScore, DEP), the human ceiling and deepeval's GEval on a subset, read from this run's options."""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping

from llmjury.families.geval import ceiling, closer_look, deepeval_compare, dep, pipeline, recorded
from llmjury.families.geval.cases import GEvalCase, geval_cases
from llmjury.families.geval.options import GEvalOptions
from llmjury.family import CaseLoad, CaseSet
from llmjury.running.settings import Settings


class DeepevalCase(GEvalCase):
    """A G-Eval case also scored by deepeval's GEval, marked `deepeval`."""

    def marks(self) -> list[str]:
        return [*super().marks(), "deepeval"]


def deepeval_subset(cases: list[GEvalCase], opts: GEvalOptions) -> list[DeepevalCase]:
    """The first item of each context, then the rest, up to `deepeval_items` per dataset (overall,
    next response). Items with an empty response are left out: deepeval refuses to score them."""
    candidates = [c for c in cases if c.criterion == "overall" and c.task == "response" and c.item.response.strip()]
    chosen = []
    for dataset in opts.selected:
        by_dataset = [c for c in candidates if c.item.dataset == dataset]
        first = {c.item.context_id: c for c in reversed(by_dataset)}
        leading = {c.id for c in first.values()}
        ordered = list(first.values()) + [c for c in by_dataset if c.id not in leading]
        chosen += [DeepevalCase(id=c.id, item=c.item, task=c.task, criterion=c.criterion)
                   for c in ordered[: opts.deepeval_items]]
    return chosen


def items(options: GEvalOptions, settings: Settings) -> CaseLoad:
    """Every selected dataset's items x tasks x criteria, for the judge."""
    return geval_cases(options, settings)


def deepeval_items(options: GEvalOptions, settings: Settings) -> CaseLoad:
    """A subset for deepeval's GEval; without deepeval (the plain install) none, so one skip."""
    if importlib.util.find_spec("deepeval") is None:
        return [], []
    return deepeval_subset(geval_cases(options, settings)[0], options), []


def unieval(options: GEvalOptions, settings: Settings) -> CaseLoad:
    """UniEval's recorded scores, one case per criterion."""
    return recorded.recorded_cases(options, settings), []


def closer_look_files(options: GEvalOptions, settings: Settings) -> CaseLoad:
    """gpt-3.5's recorded G-Eval answers, one case per dimension and parser."""
    return closer_look.closer_look_cases(options, settings), []


def ceiling_sets(options: GEvalOptions, settings: Settings) -> CaseLoad:
    """One case per dataset and criterion with several human ratings per item."""
    return ceiling.ceiling_cases(options, settings), []


def flowscore(options: GEvalOptions, settings: Settings) -> CaseLoad:
    """FlowScore's recorded scores on DSTC9."""
    return recorded.flowscore_cases(options), []


def dep_replays(options: GEvalOptions, settings: Settings) -> CaseLoad:
    """DEP's recorded ratings."""
    return dep.dep_cases(options, settings), []


def case_sets() -> Mapping[str, CaseSet[GEvalOptions]]:
    """G-Eval's case sets, by the name its eval tests give."""
    return {
        "items": CaseSet(items, pipeline.judge_item),
        "recorded": CaseSet(unieval, recorded.replay),
        "unieval": CaseSet(unieval),
        "closer_look": CaseSet(closer_look_files, closer_look.replay),
        "human_ceiling": CaseSet(ceiling_sets, ceiling.annotators),
        "flowscore": CaseSet(flowscore, recorded.replay_flowscore),
        "dep": CaseSet(dep_replays, dep.replay),
        "deepeval": CaseSet(deepeval_items, deepeval_compare.deepeval_geval),
    }
