"""The controller's role: gather every test's verdicts and, at the session end, report the run.

The controller is xdist's controller, or the only process under `-n 0`: one code path for both. It
counts the tests that reported, keeps their verdicts (a rerun replaces, never adds), and at the session
end collects them with the figures of every process, builds the typed `RunSummary`, checks the gates
against it, writes the run folder and sets the gates' exit status.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any

import pytest

from llmjury.collector import held_off
from llmjury.errors import ConfigError
from llmjury.family import AnyFamily
from llmjury.judgement.verdicts import Verdict
from llmjury.loading import LoadReport, merge
from llmjury.model import GateResult, RunSummary, StoreFacts
from llmjury.pricing import PriceTable
from llmjury.redact import redact_spec
from llmjury.results.drift import drift_lines
from llmjury.results.exit_status import GateExit, gate_exit_status
from llmjury.results.gates import Gate
from llmjury.results.sequential_gates import sequential_lines
from llmjury.running.cache import CacheMode, forget_unanswered, remove_scratch
from llmjury.running.handoff import OutcomeHandoff, forget_run
from llmjury.running.ledger import usage_by_provider, usage_by_role
from llmjury.running.settings import Settings
from llmjury.saved import SavedRun
from llmjury.session.drift import JudgeCanary
from llmjury.session.frozen import freeze_at_exit, judging, settle_before_cleanup
from llmjury.session.item_outcomes import ItemOutcomes
from llmjury.session.item_verdicts import carried
from llmjury.session.progress import JUDGING
from llmjury.session.runner import TestRunner
from llmjury.session.sequential import SequentialEnd
from llmjury.session.stops import Stops
from llmjury.session.watch import RunWatch
from llmjury.session.xdist_hooks import FromWorkers
from llmjury.store.outage import StoreOutageError

#: Colours of the terminal summary's decision lines, by their first word.
SUMMARY_MARKUP = {"PASS": {"green": True}, "FAIL": {"red": True, "bold": True}, "INCONCLUSIVE": {"yellow": True},
                  "INCOMPLETE": {"red": True, "bold": True}}


@dataclass(frozen=True)
class Collected:
    """Everything the run produced, gathered from every process: what the summary is built from."""

    records: list[dict[str, Any]]
    typed: dict[str, list[Verdict]]  # by family
    #: Why the run ended before its last test, with how far it got; None for a whole run.
    stopped: dict[str, Any] | None
    usage: dict[str, dict[str, float]]
    roles: dict[str, Any]
    loading: list[LoadReport]


class Controller:
    """Registered only where the run reports (not in an xdist worker)."""

    def __init__(self, config: pytest.Config, settings: Settings, gates: list[Gate], families: dict[str, AnyFamily],
                 runner: TestRunner, parts: ControllerParts) -> None:
        self.config, self.settings, self.gates, self.families = config, settings, gates, families
        self.runner, self.run_id = runner, runner.share.run_id
        self.stops, self.from_workers, self.watch = parts.stops, parts.from_workers, parts.watch
        self.gate_exit, self.item_outcomes, self.baseline = parts.gate_exit, parts.item_outcomes, parts.baseline
        self.sequential, self.canary = parts.sequential, parts.canary
        self.started = time.time()
        self.records: dict[str, list[dict[str, Any]]] = {}
        self.tests_finished = 0
        self.summary_lines: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """A test's teardown report carries its verdicts (llmjury.session.runner), from any worker."""
        if report.when != "teardown":
            return
        self.tests_finished += 1
        verdicts = carried(report)
        if verdicts:
            self.records[report.nodeid] = verdicts  # a rerun replaces, never adds

    # tryfirst: a stopped xdist run writes its report before xdist's teardown waits for the workers
    # (their figures never come once the controller's loop is interrupted); a whole run is unchanged,
    # its workers were down before the session finished.
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """The run's end, with the garbage collector held off while the report is built (llmjury.collector)."""
        with held_off():
            self.finish(session)

    def finish(self, session: pytest.Session) -> None:
        """Collect, build the RunSummary, check the gates, write, set the exit status."""
        collected = self.collect(session)
        if collected is None:
            return  # nothing of llmjury's ran
        summary = self.summarize(collected)
        if self.canary is not None and collected.stopped is None:  # the judge's drift, before the gates read it
            summary = self.canary.added(summary, self.runner)
        results = [gate.check(summary, uncertain=self.settings.gate_uncertain) for gate in self.gates]
        if self.sequential is not None:  # --llm-sequential: the gates on their confidence sequences
            summary, results = self.sequential.end(summary, collected.records, results)
        self.summary_lines = [*self.write(summary, collected, results), *drift_lines(summary.judge),
                              *sequential_lines(summary.sequential)]
        self.gate_exit.status = gate_exit_status(results)

    def collect(self, session: pytest.Session) -> Collected | None:
        """The verdicts and figures of every process; None when the session judged nothing. A stopped
        run of llmjury's tests says so even when nothing had finished."""
        jury = self.runner.built_jury
        if jury is not None:
            jury.engine.land()  # a run stopping on its store: what its calls paid for is counted and kept
            ledger, roles = usage_by_provider(jury.engine.ledger), usage_by_role(jury.engine.roles)
            self.from_workers.learned(jury.engine.adaptations())
        else:
            ledger, roles = {}, {}
        loading = merge([*self.runner.loading, *self.from_workers.loading])
        records = [r for nodeid in sorted(self.records) for r in self.records[nodeid]]
        stopped = self.stopped(session)
        if stopped is not None:
            planned = self.finished_planning(records)
            records += planned
            stopped["planned_verdicts"] = len(planned)
        ledgers = [ledger, *self.from_workers.ledgers]
        if not records and not any(ledgers) and (stopped is None or not self.judged()):
            return None
        freeze_at_exit()
        # Imported here: statistics and tables are needed only when there is something to report.
        from llmjury.results import aggregate

        return Collected(records, aggregate.typed_verdicts(records, self.families), stopped,
                         aggregate.merge_usage(*ledgers), aggregate.merge_roles(roles, *self.from_workers.roles),
                         loading)

    def summarize(self, collected: Collected) -> RunSummary:
        """The typed summary of the run, compared with the baseline when there is one, with no
        runner's absolute path in it."""
        from llmjury.model import BudgetFacts
        from llmjury.results import aggregate

        budget = self.watch.summary(collected.records).get("budget")  # the budget's facts, when the run had one
        summary = aggregate.summarize(
            collected.records, {**self.run_info(), "stopped": collected.stopped}, collected.usage,
            PriceTable.load(self.settings.prices), self.families, collected.loading, collected.typed,
            roles=collected.roles, complete=collected.stopped is None,
            budget=None if budget is None else BudgetFacts.model_validate(budget))
        if self.baseline is not None:
            from llmjury.results.compare import compare_runs

            # The comparison reads this run's sections, so it joins the summary once they exist.
            comparison = compare_runs(
                collected.records, self.baseline, self.families, current_summary=summary,
                allow_judge_change=self.config.getoption("llm_baseline_allow_judge_change"),
                confidence=self.settings.compare_confidence, max_changed=self.settings.compare_max_changed)
            summary = summary.model_copy(update={"comparison": comparison})
        return summary.portable(self.config.rootpath)

    def write(self, summary: RunSummary, collected: Collected, results: list[GateResult]) -> list[str]:
        """Write the run folder; returns what the terminal summary says of the run."""
        from llmjury.reporting.reports import terminal_lines, write_run

        root = self.config.rootpath
        run_dir = write_run(self.settings.reports, summary, collected.records, results, self.families,
                            collected.typed, baseline=self.baseline.records if self.baseline is not None else None,
                            root=root)
        lines = terminal_lines(summary, results, run_dir, self.families, root)
        if summary.comparison is not None:
            from llmjury.reporting.compare_terminal import comparison_lines

            lines += comparison_lines(summary.comparison)
        return lines

    def judged(self) -> bool:
        """Did this session select llmjury's tests (this process's, or any worker's)? A project's own
        tests, stopped, get no report."""
        return judging(self.config) or JUDGING.marked(self.run_id)

    def stopped(self, session: pytest.Session) -> dict[str, Any] | None:
        """Why the run ended before its last test, with how far it got; None for a whole run. Whatever
        stopped it (a signal, -x, an internal error, a crashed worker), a run in which a selected test
        never reported is not whole."""
        by = self.stops.by or session.shouldstop or session.shouldfail or "; ".join(self.from_workers.crashed)
        selected = len(session.items) or self.from_workers.collected or None
        if not by and selected is not None and self.tests_finished < selected:
            by = f"{selected - self.tests_finished} of {selected} selected tests never reported"
        if not by:
            return None
        return {"by": by if isinstance(by, str) else "an early stop", "tests_finished": self.tests_finished,
                "tests_collected": selected}

    def finished_planning(self, reported: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Verdicts that planning finished but no test reported, because the run stopped first: from
        this process's planner, and from what xdist workers handed on in the run's SQLite file."""
        planner = self.runner.built_planner
        found = planner.finished() if planner is not None else []
        if self.from_workers.workers:
            location = self.settings.answers(self.run_id)
            if location.kind != "sqlite" or location.path.exists():
                with contextlib.suppress(StoreOutageError, ConfigError):  # a store given up on: the planner's only
                    handoff = OutcomeHandoff(location, self.run_id, 0)
                    try:
                        found += [r for payload in handoff.handed_on() for r in payload.get("verdicts", [])]
                    finally:
                        handoff.close()
        seen = {json.dumps(r, sort_keys=True) for r in reported}
        new = []
        for record in found:
            key = json.dumps(record, sort_keys=True)
            if key not in seen:
                seen.add(key)
                new.append(record)
        return new

    def run_info(self) -> dict[str, Any]:
        """The summary's `run` section: what was run, how, and when."""
        s = self.settings
        return {
            "id": self.run_id, "started": _iso(self.started), "finished": _iso(time.time()),
            "judge": redact_spec(s.judge.text),
            "roles": {role: redact_spec(spec.text) for role, spec in s.roles.items()},
            "cache_mode": s.cache_mode.value, "seed": s.seed, "judge_runs": s.judge_runs,
            "judge_output": s.judge_output, "sample": s.sample,
            "workers": self.from_workers.workers or 1,
            "args": [redact_spec(arg) for arg in self.config.invocation_params.args],
            "adaptations": self.from_workers.adaptations,
            "store": StoreFacts.merged([self.runner.store_facts(), *self.from_workers.store]),
            "llmjury_version": version("llmjury"),
        }

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The run's decision lines, coloured by their first word, after pytest's own summary."""
        lines = self.summary_lines + self.item_outcomes.summary_lines()
        if lines:
            terminalreporter.section("llmjury")
            for line in lines:
                terminalreporter.write_line(line, **SUMMARY_MARKUP.get(line.split(" ", 1)[0], {}))

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """The workers are gone and the report is written: close, and clear the run's scratch state."""
        self.runner.close()  # first: its cancelled work may still hand on through the hand-off
        judged = self.judged()
        JUDGING.clear(self.run_id)
        if self.settings.cache_mode is CacheMode.OFF:
            remove_scratch(self.settings.cache_path, self.run_id)
        else:
            # A store out of reach keeps this run's rows; no later run reads them.
            with contextlib.suppress(StoreOutageError, ConfigError):
                if self.from_workers.workers:
                    forget_run(self.settings.location, self.run_id)
                forget_unanswered(self.settings.location, self.run_id)
        settle_before_cleanup(config, judged)


@dataclass(frozen=True)
class ControllerParts:
    """The plugins and state the controller reads at the session end, registered beside it."""

    stops: Stops
    from_workers: FromWorkers
    watch: RunWatch
    gate_exit: GateExit
    item_outcomes: ItemOutcomes
    baseline: SavedRun | None
    sequential: SequentialEnd | None = None
    canary: JudgeCanary | None = None


def _iso(timestamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(timestamp))
