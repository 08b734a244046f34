"""What loading a dataset kept and what it dropped or merged, so nothing is left out silently.

A loader returns its items with a `LoadReport`; the eval module passes it to `llmjury.generate`,
the plugin carries it from every worker to the controller, and the report and the terminal show
it beside the figures it affects.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, Field


class LoadReport(BaseModel):
    """One dataset file as loaded: items kept, and items dropped or merged by reason."""

    family: str
    dataset: str
    source: str
    kept: int
    dropped: dict[str, int] = Field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str]:
        return self.family, self.dataset, self.source

    def line(self) -> str:
        reasons = ", ".join(f"{count} {reason}" for reason, count in sorted(self.dropped.items()))
        left = f"; left out {sum(self.dropped.values())} ({reasons})" if self.dropped else ""
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


def merge(reports: Iterable[LoadReport | dict]) -> list[LoadReport]:
    """One report per dataset file (every xdist worker loads the same files)."""
    unique: dict[tuple[str, str, str], LoadReport] = {}
    for report in reports:
        report = report if isinstance(report, LoadReport) else LoadReport.model_validate(report)
        unique.setdefault(report.key, report)
    return [unique[key] for key in sorted(unique)]
