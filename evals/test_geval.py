"""G-Eval for dialogue (seed 004) and its meta-evaluation against human scores.

Each Topical-Chat / DSTC9 item x task x criterion is a case scored by the judge; UniEval's recorded
scores replay through the same meta-evaluation; deepeval's GEval scores a subset with the same
provider, steps and criteria, when deepeval is installed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import llmjury
from llmjury.assertions import assert_scored
from llmjury.families.geval.meta import correlations, meta_evaluate
from llmjury.families.geval.recorded import RecordedCase, unieval_scores
from llmjury.families.geval.report import references


@llmjury.case_set("geval", "items")
def test_geval_item(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


@llmjury.case_set("geval", "recorded")
def test_recorded_judge(outcome: llmjury.Outcome) -> None:
    assert len(outcome.verdicts) == 360


@llmjury.case_set("geval", "closer_look")
def test_closer_look_replay(outcome: llmjury.Outcome) -> None:
    """gpt-3.5's 20 recorded G-Eval answers per item, through the paper's parser or ours."""
    assert outcome.verdicts and all(v.judge.n == 20 for v in outcome.verdicts)


@llmjury.case_set("geval", "human_ceiling")
def test_human_ceiling(outcome: llmjury.Outcome) -> None:
    """Every annotator of every item with several ratings, each against the mean of the others."""
    assert outcome.verdicts and all(v.attributes["human"] is not None for v in outcome.verdicts)
    assert len({v.judge.provider for v in outcome.verdicts}) >= 2


@llmjury.case_set("geval", "flowscore")
def test_flowscore_recorded_judge(outcome: llmjury.Outcome) -> None:
    """FlowScore on the DSTC9 items the suite uses (the shipped sample: 20 dialogues per chatbot)."""
    assert {v.attributes["system_id"] for v in outcome.verdicts} == {f"chatbot{i}" for i in range(1, 12)}


@llmjury.case_set("geval", "dep")
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


@llmjury.case_set("geval", "deepeval")
def test_deepeval_geval(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


@llmjury.case_set("geval", "unieval")
def test_unieval_replay_reproduces_the_published_table(case: RecordedCase) -> None:
    """Recorded UniEval scores through our meta-evaluation give UniEval's published table to 1e-6."""
    dimension = case.criterion
    pairs = unieval_scores(Path(case.path), dimension)
    predicted = np.array([score for _, score in pairs])
    human = np.array([item.human[dimension] for item, _ in pairs])
    ours = correlations(predicted, human)
    published = references()["unieval"].rows[dimension]
    assert [ours["pearson"], ours["spearman"], ours["kendall"]] == pytest.approx(published, abs=1e-6)
