"""The pytest plugin's entry point (`pytest11`): it registers llmjury's plugins by the role of this process.

Roles are decided once, here: an xdist worker runs its tests and hands back what it learned
(llmjury.session.worker); the controller, or the only process under `-n 0`, gathers the verdicts and reports
the run (llmjury.session.controller, with llmjury.session.xdist_hooks when xdist is installed). Every process that
collects and runs tests has a runner (llmjury.session.runner). Options are declared and resolved in
llmjury.session.options, checked at start-up in llmjury.session.startup; the fixtures live in llmjury.session.fixtures.
"""

from __future__ import annotations

from functools import partial

import pytest

pytest.register_assert_rewrite("llmjury.assertions")

from llmjury.deprecated import options_of  # noqa: E402, F401  (llmjury 0.1's public name, warns until 0.3)
from llmjury.interrupts import Interrupts  # noqa: E402
from llmjury.redact import redact_log_records  # noqa: E402
from llmjury.results.exit_status import GateExit  # noqa: E402
from llmjury.results.sequential_gates import SequentialGates  # noqa: E402
from llmjury.session.batch_status import BatchStatus  # noqa: E402
from llmjury.session.case_sets import CaseSets  # noqa: E402
from llmjury.session.collection import CaseParameters, DataErrors, GateSelection, Sampling  # noqa: E402
from llmjury.session.controller import Controller, ControllerParts  # noqa: E402
from llmjury.session.drift import JudgeCanary  # noqa: E402
from llmjury.session.end_imports import SessionEndImports  # noqa: E402
from llmjury.session.frozen import give_back_frozen  # noqa: E402
from llmjury.session.item_outcomes import ItemOutcomes  # noqa: E402
from llmjury.session.item_verdicts import case_of, own_test, record_on, recorded  # noqa: E402
from llmjury.session.options import add_ini_lines, declare  # noqa: E402
from llmjury.session.refusals import UnansweredSkips  # noqa: E402
from llmjury.session.runner import RUNNER, Share, TestRunner  # noqa: E402
from llmjury.session.sequential import RunLooks, SequentialEnd, sequential_gates  # noqa: E402
from llmjury.session.sequential_items import SequentialItems  # noqa: E402
from llmjury.session.sharding import ShardRun, ShardSelection  # noqa: E402
from llmjury.session.startup import StartUp, read_baseline, start_up, warn_roles  # noqa: E402
from llmjury.session.stops import Stops  # noqa: E402
from llmjury.session.verdict_wire import VerdictWire  # noqa: E402
from llmjury.session.watch import RunWatch  # noqa: E402
from llmjury.session.worker import Worker  # noqa: E402
from llmjury.session.xdist_hooks import FromWorkers, WorkerStartupErrors, XdistController  # noqa: E402

#: The fixtures, a plugin module of their own (no other module imports it, so pytest imports it here).
pytest_plugins = ["llmjury.session.fixtures"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """llmjury's options and ini keys, declared before pytest parses the command line."""
    declare(parser)


def pytest_configure(config: pytest.Config) -> None:
    """Start-up: resolve and check the configuration, then register the plugins of this process's role."""
    # Registered before pytest's own unraisable-exception plugin adds its cleanup (this hook runs
    # first), so it runs after it: see llmjury.session.frozen.settle_before_cleanup.
    config.add_cleanup(partial(give_back_frozen, config))
    config.add_cleanup(redact_log_records())
    add_ini_lines(config)
    start = start_up(config)
    register = config.pluginmanager.register
    register(GateSelection(config, start.gates, start.families), "llmjury-gate-selection")
    register(DataErrors(config), "llmjury-data-errors")
    register(CaseParameters(), "llmjury-case-parameters")
    register(Sampling(start.settings), "llmjury-sampling")
    register(VerdictWire(), "llmjury-verdict-wire")  # a test's verdicts between xdist's processes
    if hasattr(config, "workerinput"):
        register_worker(config, start)
    else:
        register_controller(config, start)


def register_worker(config: pytest.Config, start: StartUp) -> None:
    """An xdist worker: it runs its share of the tests and hands its figures back."""
    stops, share = Stops(), Share.of(config)
    watch = RunWatch(config, start.settings, start.budget, share.run_id, lambda: 1)
    gates = sequential_gates(start, read_baseline(start) if start.settings.sequential else None)
    runner = register_runner(config, start, share, watch, gates)
    config.pluginmanager.register(stops, "llmjury-stops")
    config.pluginmanager.register(Worker(config, runner, stops), "llmjury-worker")
    if start.settings.shard is not None:  # --llm-shard: keep this shard's tests
        config.pluginmanager.register(ShardSelection(start.settings.shard), "llmjury-shard")
    register_outcomes(config, start)


def register_controller(config: pytest.Config, start: StartUp) -> None:
    """The process that reports: xdist's controller, or the only process under `-n 0`."""
    warn_roles(config, start)
    baseline = read_baseline(start)
    stops, share, from_workers = Stops(), Share.of(config), FromWorkers()
    watch = RunWatch(config, start.settings, start.budget, share.run_id, lambda: from_workers.workers or 1)
    # SIGINT and SIGTERM, where the run reports: registered before the session (see llmjury.interrupts).
    interrupts = Interrupts(stops.note)
    config.pluginmanager.register(interrupts, "llmjury-interrupts")
    # xdist's hooks are known whatever name its plugin was loaded under (`-p xdist`, or `-p xdist.plugin`
    # and PYTEST_PLUGINS=xdist.plugin where plugin autoload is off).
    xdist = hasattr(config.hook, "pytest_configure_node")
    if xdist:
        config.pluginmanager.register(interrupts.workers, "llmjury-interrupt-workers")
    gates = sequential_gates(start, baseline)
    runner = register_runner(config, start, share, watch, gates)
    config.pluginmanager.register(stops, "llmjury-stops")
    sequential = None if gates is None else SequentialEnd(start.settings, gates)
    if sequential is not None:  # --llm-sequential: tests skipped as decided, the decision's cost
        config.pluginmanager.register(sequential, "llmjury-sequential")
    gate_exit = GateExit()  # the gates' exit status, applied after every other session end
    config.pluginmanager.register(gate_exit, "llmjury-gate-exit")
    item_outcomes = register_outcomes(config, start)
    canary = JudgeCanary.of(config, start.settings, baseline, start.gates)  # the judge's drift, with a baseline
    parts = ControllerParts(stops, from_workers, watch, gate_exit, item_outcomes, baseline, sequential, canary)
    config.pluginmanager.register(Controller(config, start.settings, start.gates, start.families, runner, parts),
                                  "llmjury-controller")
    if start.settings.batched():  # what is left in the providers' batches, said at the end
        config.pluginmanager.register(BatchStatus(start.settings, share.run_id, gate_exit), "llmjury-batch-status")
    if start.settings.shard is not None:  # --llm-shard: keep this shard's tests, write shard.json
        config.pluginmanager.register(ShardRun(start.settings.shard, start.settings, share.run_id), "llmjury-shard")
    if xdist:
        config.pluginmanager.register(XdistController(share.run_id, from_workers), "llmjury-xdist")
        config.pluginmanager.register(WorkerStartupErrors(), "llmjury-worker-startup-errors")
        config.pluginmanager.register(SessionEndImports(), "llmjury-session-end-imports")


def register_runner(config: pytest.Config, start: StartUp, share: Share, watch: RunWatch,
                    gates: SequentialGates | None = None) -> TestRunner:
    """The test runner of this process, stashed for the fixtures, with its progress and budget watch
    (and a sequential run's looks at its gates)."""
    runner = TestRunner(config, start.settings, start.families, share, watch, start.given_files,
                        None if gates is None else RunLooks(start.settings, gates))
    if gates is not None:  # --llm-sequential: the case tests no planner runs ahead, in seeded batches
        items = SequentialItems(start.settings, gates, share.run_id, worker=hasattr(config, "workerinput"))
        config.pluginmanager.register(items, "llmjury-sequential-items")
    config.stash[RUNNER] = runner
    config.pluginmanager.register(runner, "llmjury-runner")
    config.pluginmanager.register(CaseSets(start.families, runner.settings), "llmjury-case-sets")
    config.pluginmanager.register(watch, "llmjury-watch")
    return runner


def register_outcomes(config: pytest.Config, start: StartUp) -> ItemOutcomes:
    """Own-eval case tests' outcomes as verdicts, and budget refusals and calls left in a batch as
    unscored verdicts."""
    item_outcomes = ItemOutcomes(start.settings.item_failures, case_of, own_test, record_on)
    config.pluginmanager.register(item_outcomes, "llmjury-item-outcomes")
    if start.budget is not None or start.settings.batched():
        # A test the budget stopped, or whose call waits in a batch, is unscored, not failed (llmjury.session.refusals).
        config.pluginmanager.register(UnansweredSkips(recorded, record_on), "llmjury-unanswered-skips")
    return item_outcomes

