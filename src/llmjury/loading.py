"""What loading a dataset kept and what it dropped or merged, so nothing is left out silently.

A case set's loader returns its cases with the `LoadReport` of each file it read; the plugin keeps
the reports of the datasets whose cases the run selected (`-k`, `-m`, `--llm-sample`), carries
them from every worker to the controller, and the report and the terminal show them beside the
figures they affect.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field


class LoadReport(BaseModel):
    """One dataset file as loaded: items kept, and items dropped or merged by reason."""

    family: str
    dataset: str
    source: str
    kept: int
    dropped: dict[str, int] = Field(default_factory=dict)
    #: The file was named by an option (a user's own), not a copy the suite ships: the terminal
    #: always says what was loaded from it, not only when something was left out.
    given: bool = False

    @property
    def key(self) -> tuple[str, str, str]:
        return self.family, self.dataset, self.source

    def line(self) -> str:
        reasons = ", ".join(f"{count} {reason}" for reason, count in sorted(self.dropped.items()))
        left = f"; left out {sum(self.dropped.values())} ({reasons})" if self.dropped else "; none left out"
        return f"{self.family} dataset {self.dataset} ({self.source}): {self.kept} items{left}"


class LoadCounter:
    """A loader's tally: `drop(reason)` for each item left out or merged, then `report(...)`."""

    def __init__(self) -> None:
        self.dropped: Counter[str] = Counter()

    def drop(self, reason: str, count: int = 1) -> None:
        if count:
            self.dropped[reason] += count

    def report(self, family: str, dataset: str, source: object, kept: int) -> LoadReport:
        return LoadReport(family=family, dataset=dataset, source=str(source), kept=kept,
                          dropped=dict(sorted(self.dropped.items())))


def merge(reports: Iterable[LoadReport | dict[str, Any]]) -> list[LoadReport]:
    """One report per dataset file (every xdist worker loads the same files)."""
    unique: dict[tuple[str, str, str], LoadReport] = {}
    for report in reports:
        report = report if isinstance(report, LoadReport) else LoadReport.model_validate(report)
        unique.setdefault(report.key, report)
    return [unique[key] for key in sorted(unique)]


class Loaded:
    """One process's load reports, each with the cases made from its file, so a run reports the
    datasets its selected tests use rather than every file collection read.

    A case goes with the report of its dataset (its `dataset` field, or its `item`'s); a case with
    no dataset of its own goes with every report it was generated beside."""

    def __init__(self) -> None:
        self.reports: dict[tuple[str, str, str], LoadReport] = {}
        # The case objects themselves (not their ids): holding them keeps identities from being reused.
        self.cases: dict[tuple[str, str, str], list[object]] = {}

    def add(self, cases: Sequence[object], reports: Iterable[LoadReport]) -> None:
        reports = list(reports)
        for report in reports:
            self.reports.setdefault(report.key, report)
            linked = cases if len(reports) == 1 else [c for c in cases if _dataset_of(c) in (None, report.dataset)]
            self.cases.setdefault(report.key, []).extend(linked)

    def used(self, selected: Iterable[object], given: Collection[Path] = ()) -> list[LoadReport]:
        """Reports of the files a selected case came from, or that gave no case at all (nothing to
        select, and worth saying); those whose source is in `given` (files named by an option) marked."""
        chosen = {id(case) for case in selected}
        named = {path.resolve() for path in given}
        kept = [report.model_copy(update={"given": Path(report.source).resolve() in named})
                for key, report in self.reports.items()
                if not self.cases[key] or any(id(case) in chosen for case in self.cases[key])]
        return merge(kept)


def _dataset_of(case: object) -> str | None:
    for holder in (case, getattr(case, "item", None)):
        dataset = getattr(holder, "dataset", None)
        if isinstance(dataset, str):
            return dataset
    return None
