"""The judge's canary in a run with a baseline (`--llm-canary`): asked at the session end, reported
as the summary's `judge.drift` section before the gates read it (llmjury.judgement.canary,
llmjury.results.drift)."""

from __future__ import annotations

import pytest

from llmjury.judgement.canary import CANARY, ask_again, canary, judge_for, judge_requests, model_judges
from llmjury.model import RunSummary
from llmjury.results.drift import drift_section
from llmjury.results.gates import Gate
from llmjury.running.settings import Settings, whole_number
from llmjury.saved import SavedRun
from llmjury.session.runner import TestRunner

#: The first steps of a gate path on the judge's drift.
DRIFT_PATH = ("judge", "drift")


class JudgeCanary:
    """The canary of one run: its size, the baseline it asks about, and the settings naming the judge."""

    def __init__(self, settings: Settings, baseline: SavedRun, size: int) -> None:
        self.settings, self.baseline, self.size = settings, baseline, size

    @classmethod
    def of(cls, config: pytest.Config, settings: Settings, baseline: SavedRun | None,
           gates: list[Gate]) -> JudgeCanary | None:
        """The run's canary, or None (no baseline, or `--llm-canary 0`); a drift gate with no canary
        is a usage error at start-up, not a failed gate after the run is paid for."""
        raw, what = config.getoption("llm_canary"), "--llm-canary"
        if raw is None:
            raw, what = config.getini("llm_canary") or None, "ini llm_canary"
        try:
            size = CANARY if raw is None else whole_number(raw, what, minimum=0)
        except Exception as exc:
            raise pytest.UsageError(str(exc)) from None
        if baseline is None or size == 0:
            drift_gates = [g.text for g in gates if g.left[:2] == DRIFT_PATH]
            if drift_gates:
                why = "--llm-canary is 0" if baseline is not None else "no --llm-baseline is given"
                raise pytest.UsageError(f"gate {drift_gates[0]!r}: the judge's drift is measured on a canary of the "
                                        f"baseline's judge requests, and {why}")
            return None
        return cls(settings, baseline, size)

    def add(self, summary: RunSummary, runner: TestRunner) -> RunSummary:
        """The summary with its `judge.drift` section: the canary asked of this run's judge."""
        if not model_judges(self.baseline.records):
            return summary  # the baseline's decisions were computed or asserted: no judge to drift
        run_id = self.baseline.summary.run.id if self.baseline.summary is not None else None
        sample = canary(judge_requests(self.settings.location, self.baseline.records, run_id), self.settings.seed,
                        self.size)
        asked = []
        if sample:
            engine = runner.jury.engine
            asked = engine.run(ask_again(sample, lambda task: judge_for(
                lambda family: self.settings.provider_for("judge", family), task), engine.provider))
        return summary.model_copy(update={"judge": drift_section(asked, self.size)})

    def added(self, summary: RunSummary, runner: TestRunner) -> RunSummary:
        """`add`, or the summary as it was with the reason the canary could not be asked: a store that
        cannot be read must not cost the run its report."""
        try:
            return self.add(summary, runner)
        except Exception as exc:  # any failure of the canary leaves the run's own figures whole
            return summary.model_copy(update={"judge": {"drift": {"error": f"{type(exc).__name__}: {exc}"}}})
