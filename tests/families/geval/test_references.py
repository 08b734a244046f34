"""Reference tables appear only for the datasets that gave the run cases."""

from __future__ import annotations

import pytest

from llmjury.families.geval.report import aggregate, markdown
from llmjury.families.geval.results import ScoreResult
from llmjury.judgement.verdicts import JudgeConfig, Verdict


def verdicts(dataset: str) -> list[Verdict]:
    return [Verdict(case_id=f"{dataset}-{i}", family="geval", kind="judge", judge=JudgeConfig(provider="offline"),
                    result=ScoreResult(score=float(i % 3 + 1), method="sampling"),
                    attributes={"dataset": dataset, "item": f"{dataset}-{i}", "context_id": f"c{i}",
                                "system_id": None, "task": "response", "criterion": "overall",
                                "human": float(i % 4)}) for i in range(6)]


@pytest.mark.parametrize(("datasets", "tables"), [
    (["persona_chat"], set()),
    (["dstc9"], {"seed_004"}),
    (["topical_chat"], {"seed_004", "g_eval_paper", "unieval", "closer_look"}),
    (["persona_chat", "dstc9"], {"seed_004"}),
])
def test_a_reference_table_is_shown_only_when_its_dataset_is_in_the_run(datasets, tables):
    section = aggregate([v for name in datasets for v in verdicts(name)])
    assert set(section.references) == tables
    text = markdown(section)
    assert ("Reference figures" in text) == bool(tables)
    assert ("UniEval (maszhongming" in text) == ("unieval" in tables)
