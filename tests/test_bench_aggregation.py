"""bench/aggregation.py's session-end figure covers llmjury's report: its timer wraps every
session-finish hook (a plain tryfirst one of the toy's conftest ran after llmjury's report and
timed nothing)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from script_module import script_module

AGGREGATION = Path(__file__).resolve().parents[1] / "bench" / "aggregation.py"


@pytest.fixture(scope="module")
def aggregation() -> ModuleType:
    return script_module(AGGREGATION, "aggregation")


@pytest.mark.e2e  # the toy run is a pytest process of its own
def test_the_small_runs_session_end_is_timed_around_llmjurys_report(aggregation):
    assert aggregation.small_run_session_end() > 0


@pytest.mark.e2e  # the toy run is a pytest process of its own
def test_a_timer_that_misses_the_report_is_refused_not_printed_as_a_figure(aggregation, monkeypatch):
    plain = aggregation.TIMER.replace("wrapper=True, tryfirst=True", "tryfirst=True").replace(
        "    try:\n        return (yield)\n    finally:\n", "    if True:\n")
    monkeypatch.setattr(aggregation, "TIMER", plain)
    with pytest.raises(SystemExit, match="the timed span missed llmjury's report"):
        aggregation.small_run_session_end()
