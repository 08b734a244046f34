"""G-Eval for dialogue (seed 004) and its meta-evaluation against human scores.

Each Topical-Chat / DSTC9 item x task x criterion is a case scored by the judge; UniEval's recorded
scores replay through the same meta-evaluation; deepeval's GEval scores a subset with the same
provider, steps and criteria, when deepeval is installed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import llmjury
from llmjury.assertions import assert_scored
from llmjury.families.geval import FAMILY, dep
from llmjury.families.geval.cases import GEvalCase, geval_cases
from llmjury.families.geval.ceiling import annotators, ceiling_cases
from llmjury.families.geval.closer_look import closer_look_cases
from llmjury.families.geval.closer_look import replay as closer_look_replay
from llmjury.families.geval.meta import correlations, meta_evaluate
from llmjury.families.geval.options import GEvalOptions
from llmjury.families.geval.pipeline import judge_item
from llmjury.families.geval.recorded import (
    RecordedCase,
    flowscore_cases,
    recorded_cases,
    replay,
    replay_flowscore,
    unieval_scores,
)
from llmjury.families.geval.report import references
from llmjury.plugin import options_of, settings_of


def options(config: pytest.Config) -> GEvalOptions:
    opts = options_of(config, FAMILY)
    assert isinstance(opts, GEvalOptions)
    return opts


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


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    opts, settings = options(metafunc.config), settings_of(metafunc.config)
    if metafunc.function is test_geval_item:
        cases, loaded = geval_cases(opts, settings)
        llmjury.generate(metafunc, cases, loaded=loaded)
    elif metafunc.function in (test_recorded_judge, test_unieval_replay_reproduces_the_published_table):
        llmjury.generate(metafunc, recorded_cases(opts, settings))
    elif metafunc.function is test_closer_look_replay:
        llmjury.generate(metafunc, closer_look_cases(opts, settings))
    elif metafunc.function is test_human_ceiling:
        llmjury.generate(metafunc, ceiling_cases(opts, settings))
    elif metafunc.function is test_flowscore_recorded_judge:
        llmjury.generate(metafunc, flowscore_cases(opts))
    elif metafunc.function is test_dep_recorded_judge:
        llmjury.generate(metafunc, dep.dep_cases(opts, settings))
    elif metafunc.function is test_deepeval_geval:
        # Without deepeval (the plain install) there is nothing to compare: no cases, one skip.
        wanted = importlib.util.find_spec("deepeval") is not None
        llmjury.generate(metafunc, deepeval_subset(geval_cases(opts, settings)[0], opts) if wanted else [])


@llmjury.pipeline(judge_item)
def test_geval_item(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


@llmjury.pipeline(replay)
def test_recorded_judge(outcome: llmjury.Outcome) -> None:
    assert len(outcome.verdicts) == 360


@llmjury.pipeline(closer_look_replay)
def test_closer_look_replay(outcome: llmjury.Outcome) -> None:
    """gpt-3.5's 20 recorded G-Eval answers per item, through the paper's parser or ours."""
    assert outcome.verdicts and all(v.judge.n == 20 for v in outcome.verdicts)


@llmjury.pipeline(annotators)
def test_human_ceiling(outcome: llmjury.Outcome) -> None:
    """Every annotator of every item with several ratings, each against the mean of the others."""
    assert outcome.verdicts and all(v.attributes["human"] is not None for v in outcome.verdicts)
    assert len({v.judge.provider for v in outcome.verdicts}) >= 2


@llmjury.pipeline(replay_flowscore)
def test_flowscore_recorded_judge(outcome: llmjury.Outcome) -> None:
    """FlowScore on the DSTC9 items the suite uses (the shipped sample: 20 dialogues per chatbot)."""
    assert {v.attributes["system_id"] for v in outcome.verdicts} == {f"chatbot{i}" for i in range(1, 12)}


@llmjury.pipeline(dep.replay)
def test_dep_recorded_judge(outcome: llmjury.Outcome) -> None:
    """DEP's recorded ratings reproduce the curators' dialogue- and system-level figures."""
    case_id = outcome.verdicts[0].case_id
    meta = meta_evaluate(outcome.verdicts)
    assert meta.pooled is not None
    if case_id.startswith("dep-dstc9-score"):
        assert meta.items == 1796 and meta.system_level is not None
        assert meta.pooled.pearson.value == pytest.approx(0.2742, abs=5e-5)
        assert meta.pooled.spearman.value == pytest.approx(0.2575, abs=5e-5)
        assert meta.system_level.pearson.value == pytest.approx(0.9718, abs=5e-5)
        assert meta.system_level.spearman.value == pytest.approx(0.9545, abs=5e-5)
    elif case_id.startswith("dep-fed"):
        assert meta.pooled.pearson.value == pytest.approx(0.6467, abs=5e-5)
        assert meta.pooled.spearman.value == pytest.approx(0.6810, abs=5e-5)
    else:
        assert meta.items == 2016  # our parse of the judge's words scores every row


def _deepeval_pipeline(case, jury):
    from llmjury.families.geval.deepeval_compare import deepeval_geval

    return deepeval_geval(case, jury)


@llmjury.pipeline(_deepeval_pipeline)
def test_deepeval_geval(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


def test_unieval_replay_reproduces_the_published_table(case: RecordedCase) -> None:
    """Recorded UniEval scores through our meta-evaluation give UniEval's published table to 1e-6."""
    dimension = case.criterion
    pairs = unieval_scores(Path(case.path), dimension)
    predicted = np.array([score for _, score in pairs])
    human = np.array([item.human[dimension] for item, _ in pairs])
    ours = correlations(predicted, human)
    published = references()["unieval"].rows[dimension]
    assert [ours["pearson"], ours["spearman"], ours["kendall"]] == pytest.approx(published, abs=1e-6)
