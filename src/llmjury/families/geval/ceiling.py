"""The human ceiling: how well one annotator agrees with the others, on the items being judged.

Every dataset whose items carry two or more ratings per dimension (USR's per-annotator release, your
rated items with several annotators, Topical-Chat with `geval.usr_annotations`) yields one "judge"
per annotator: each person scores the items they rated with their own rating against the mean of
the others as the human score. Annotators are the people the file names (USR's `annotators`, an
`annotator` column), so one person is one judge across every item they rated; only a file naming
no one numbers them by position. The same meta-evaluation gives each annotator's correlation, and their mean is
the ceiling a judge's correlation on the same dataset, task and criterion is set against.
"""

from __future__ import annotations

from collections.abc import Sequence

from llmjury.cases import Case, slug
from llmjury.datasets.dialogue_items import DialogueItem
from llmjury.families.geval.criteria import CRITERIA
from llmjury.families.geval.datasets import FAMILY, load
from llmjury.families.geval.options import GEvalOptions
from llmjury.families.geval.results import ScoreResult
from llmjury.judgement.jury import Jury, Outcome
from llmjury.judgement.verdicts import JudgeConfig, Verdict
from llmjury.running.settings import Settings


class CeilingCase(Case):
    family: str = FAMILY
    dataset: str
    criterion: str

    def marks(self) -> list[str]:
        return [FAMILY, "recorded", f"criterion_{self.criterion}", f"geval_{self.dataset}"]


def ceiling_cases(options: GEvalOptions, settings: Settings) -> list[CeilingCase]:
    """One case per selected dataset and criterion that some of its items have several ratings for."""
    cases = []
    for dataset in options.selected:
        items, _ = load(dataset, options, settings)
        rated = {criterion for item in items for criterion in item.ratings}
        cases += [CeilingCase(id=f"ceiling-{dataset}-{c}", dataset=dataset, criterion=c)
                  for c in CRITERIA if c in rated]
    return cases


async def annotators(case: CeilingCase, jury: Jury) -> Outcome:
    items, _ = load(case.dataset, jury.options(FAMILY, GEvalOptions), jury.settings)
    return Outcome(annotator_verdicts(items, case.criterion))


def annotator_verdicts(items: Sequence[DialogueItem], criterion: str) -> list[Verdict]:
    """Each annotator's rating of each item as a verdict, against the mean of the other annotators."""
    verdicts = []
    for item in items:
        ratings = item.ratings.get(criterion, {})
        for annotator, own in ratings.items():
            others = [x for who, x in ratings.items() if who != annotator]
            verdicts.append(Verdict(
                case_id=f"ceiling-{item.dataset}-{criterion}-{item.id}-a{slug(annotator)}", family=FAMILY,
                kind="annotator",
                judge=JudgeConfig(provider=f"human:annotator-{annotator}", scoring="leave one annotator out"),
                result=ScoreResult(score=own, method="annotator"),
                attributes={"dataset": item.dataset, "item": item.id, "context_id": item.context_id,
                            "system_id": item.system_id, "task": "response", "criterion": criterion,
                            "human": sum(others) / len(others)}))
    return verdicts
