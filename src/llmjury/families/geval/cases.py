"""G-Eval cases: one (item, task, criterion) per test, named and marked after the item's dataset."""

from __future__ import annotations

from pydantic import ConfigDict

from llmjury.cases import Case, slug
from llmjury.datasets.dialogue_items import DialogueItem
from llmjury.errors import DatasetError
from llmjury.families.geval.criteria import CRITERIA
from llmjury.families.geval.datasets import FAMILY, load
from llmjury.families.geval.options import GEvalOptions, Task
from llmjury.loading import LoadReport
from llmjury.running.settings import Settings

TASK_MARKS = {"dialogue": "whole_dialogue", "response": "next_response"}


class GEvalCase(Case):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    family: str = FAMILY
    item: DialogueItem
    task: Task
    criterion: str

    def marks(self) -> list[str]:
        marks = [FAMILY, f"geval_{self.item.dataset}", TASK_MARKS[self.task], f"criterion_{self.criterion}"]
        if self.item.system_id:
            marks.append(f"system_{slug(self.item.system_id)}")
        return marks


def rated_criteria(items: list[DialogueItem]) -> list[str]:
    """The criteria every item of a dataset has a human rating for, in G-Eval's order."""
    return [c for c in CRITERIA if all(c in item.human for item in items)]


def geval_cases(options: GEvalOptions, settings: Settings) -> tuple[list[GEvalCase], list[LoadReport]]:
    """Every selected dataset's items x tasks x criteria, and the load report of each dataset."""
    cases, reports = [], []
    for dataset in options.selected:
        items, report = load(dataset, options, settings)
        reports.append(report)
        rated = rated_criteria(items)
        wanted = options.criteria(dataset) or rated
        missing = [c for c in wanted if c not in rated]
        if missing or not wanted:
            raise DatasetError(report.source, None, f"no human rating of {missing or 'any criterion'} on every "
                                                    f"item; the file rates {rated or 'nothing G-Eval judges'}, "
                                                    f"G-Eval judges {list(CRITERIA)}")
        for task in options.tasks(dataset):
            for criterion in wanted:
                cases += [GEvalCase(id=f"{item.id}-{task}-{criterion}", item=item, task=task, criterion=criterion)
                          for item in items]
    return cases, reports
