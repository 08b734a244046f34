"""The plugin registers its plugins by the role of the process: the controller (or the only process
under `-n 0`) gathers and reports, an xdist worker runs tests and hands back, and neither carries the
other's plugin."""

from __future__ import annotations

import json

import pytest
from test_plugin import INI, TOY

RECORD_PLUGINS = """
import json


def pytest_sessionfinish(session):
    config = session.config
    role = config.workerinput["workerid"] if hasattr(config, "workerinput") else "controller"
    names = sorted(name for name, _ in config.pluginmanager.list_name_plugin() if name and name.startswith("llmjury-"))
    with open(f"plugins-{role}.json", "w", encoding="utf-8") as out:
        json.dump(names, out)
"""
#: Registered only where the run reports.
REPORTING = {"llmjury-controller", "llmjury-interrupts", "llmjury-gate-exit"}


def registered(pytester: pytest.Pytester, role: str) -> set[str]:
    return set(json.loads((pytester.path / f"plugins-{role}.json").read_text(encoding="utf-8")))


@pytest.fixture
def toy(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    pytester.makepyfile(test_toy=TOY)
    pytester.makeconftest(RECORD_PLUGINS)
    return pytester


def test_the_only_process_runs_and_reports_and_has_no_worker(toy):
    toy.runpytest_inprocess("-n", "0").assert_outcomes(passed=12)
    plugins = registered(toy, "controller")
    assert REPORTING | {"llmjury-runner", "llmjury-stops"} <= plugins
    assert "llmjury-worker" not in plugins


@pytest.mark.e2e  # two xdist workers
def test_xdist_workers_run_and_hand_back_and_only_the_controller_reports(toy):
    toy.runpytest_inprocess("-n", "2").assert_outcomes(passed=12)
    controller = registered(toy, "controller")
    assert REPORTING | {"llmjury-xdist", "llmjury-worker-startup-errors"} <= controller
    assert "llmjury-worker" not in controller
    for worker in ("gw0", "gw1"):
        plugins = registered(toy, worker)
        assert {"llmjury-worker", "llmjury-runner", "llmjury-stops"} <= plugins
        assert not plugins & (REPORTING | {"llmjury-xdist"})
