"""An xdist worker's role: run its tests (llmjury.session.runner) and hand back what the controller reports.

A worker writes no report. What it learned reaches the controller only through xdist's `workeroutput`,
as plain JSON-able data (llmjury.session.xdist_hooks reads it): the usage ledger, the roles' models, the
datasets' load reports and what providers learned their servers do differently.
"""

from __future__ import annotations

import pytest

from llmjury.loading import merge
from llmjury.running.ledger import usage_by_provider, usage_by_role
from llmjury.session.frozen import judging, settle_before_cleanup
from llmjury.session.progress import JUDGING
from llmjury.session.runner import TestRunner
from llmjury.session.stops import STOPPED, Stops
from llmjury.session.xdist_hooks import ADAPTATIONS, LEDGER, LOADING, ROLES, STORE


class Worker:
    """Registered only in an xdist worker (`config.workerinput` is set)."""

    def __init__(self, config: pytest.Config, runner: TestRunner, stops: Stops) -> None:
        self.config, self.runner, self.stops = config, runner, stops

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Tell the controller, which collects nothing, that this run judges (for a stopped run's report)."""
        if judging(self.config):
            JUDGING.mark(self.runner.share.run_id)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Finish planning (a stopped run cancels what is left instead), then hand the figures back."""
        stopped = self.stops.by or session.shouldstop or session.shouldfail
        planner, jury = self.runner.built_planner, self.runner.built_jury
        if planner is not None and not stopped:
            planner.settle()
        if jury is not None:
            jury.engine.land()  # a run stopping on its store: what its calls paid for is counted and kept
        output = self.config.workeroutput  # type: ignore[attr-defined]
        output[STOPPED] = self.stops.by
        output[ADAPTATIONS] = jury.engine.adaptations() if jury is not None else {}
        output[STORE] = self.runner.store_facts().model_dump()
        output[LEDGER] = usage_by_provider(jury.engine.ledger) if jury is not None else {}
        output[ROLES] = usage_by_role(jury.engine.roles) if jury is not None else {}
        output[LOADING] = [report.model_dump() for report in merge(self.runner.loading)]

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """Close the engine and the hand-off before pytest's cleanup collects the run's garbage."""
        self.runner.close()
        settle_before_cleanup(config, judging(config))
