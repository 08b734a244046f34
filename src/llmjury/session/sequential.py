"""A sequential run's hooks (`--llm-sequential`): its looks for the planner, the tests skipped as
decided, and at the end the gates read on their confidence sequences and the cost of the decision.

Registered only when the run is sequential (llmjury.plugin); the statistics live in
llmjury.sequential and llmjury.results.sequential_gates, the batches in
llmjury.judgement.sequential_planner.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from llmjury.model import GateResult, RunSummary
from llmjury.results.sequential_gates import METHOD, SequentialGates
from llmjury.running.settings import Settings
from llmjury.saved import SavedRun
from llmjury.sequential.order import batches
from llmjury.sequential.settings import SequentialSettings
from llmjury.session.item_verdicts import carried
from llmjury.session.startup import StartUp

#: How a test skipped by the decision's reason starts (llmjury.results.sequential_gates.all_decided).
DECIDED = "decided:"


class RunLooks:
    """The planner's looks: the run's seeded batches, and whether every gate is decided."""

    def __init__(self, settings: Settings, gates: SequentialGates) -> None:
        self.seed, self.gates = settings.seed, gates
        self.size = (settings.sequential or SequentialSettings()).batch

    def batches(self, case_ids: Sequence[str]) -> list[list[str]]:
        """The cases in seeded order, cut into batches."""
        return batches(case_ids, self.seed, self.size)

    def decided(self, records: Sequence[dict[str, Any]]) -> str | None:
        """The reason every gate is decided on these records, or None."""
        return self.gates.all_decided(records)


def sequential_gates(start: StartUp, baseline: SavedRun | None) -> SequentialGates | None:
    """The run's gates as confidence sequences at the comparison's level under `--llm-sequential`, else None."""
    settings = start.settings
    if settings.sequential is None:
        return None
    return SequentialGates(start.gates, start.families, seed=settings.seed, confidence=settings.compare_confidence,
                           scales=settings.sequential.scales, baseline=None if baseline is None else baseline.records)


class SequentialEnd:
    """Registered where the run reports: counts the tests skipped as decided, and at the end reads
    the gates on their sequences and states what the decision cost and saved."""

    def __init__(self, settings: Settings, gates: SequentialGates) -> None:
        self.settings, self.gates = settings, gates
        self.decided_tests = 0
        self.judged_tests = 0

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """A test skipped because every gate was decided before its batch is counted, never dropped."""
        if report.when in ("setup", "call") and report.skipped and DECIDED in str(report.longrepr):
            self.decided_tests += 1
        elif report.when == "teardown" and carried(report):
            self.judged_tests += 1

    def end(self, summary: RunSummary, records: Sequence[dict[str, Any]],
            results: list[GateResult]) -> tuple[RunSummary, list[GateResult]]:
        """The gates on their sequences, and the summary's `sequential` section."""
        sequential = self.settings.sequential or SequentialSettings()
        read = self.gates.results(records, results, uncertain=self.settings.gate_uncertain)
        looks = self.gates.look(records)
        calls = sum(float(p.get("calls") or 0) for p in summary.usage.providers.values())
        cost = summary.usage.total_cost_usd
        per_test = (calls / self.judged_tests, cost / self.judged_tests) if self.judged_tests else (0.0, 0.0)
        section = {
            "method": METHOD, "confidence": self.gates.confidence, "batch": sequential.batch,
            "seed": self.settings.seed, "decided": self.decided_tests > 0,
            "tests_judged": self.judged_tests, "tests_decided": self.decided_tests,
            "gates": [{"gate": g.gate, "n": g.n, "value": g.value, "low": g.low, "high": g.high,
                       "decided": g.outcome, "not_sequential": g.not_sequential} for g in looks],
            "cost": {"calls": calls, "cost_usd": cost,
                     "calls_saved": per_test[0] * self.decided_tests,
                     "cost_saved_usd": per_test[1] * self.decided_tests},
        }
        return summary.model_copy(update={"sequential": section, "gates": read}), read
