"""A teardown report's verdicts cross from an xdist worker to the controller as one JSON text, and
come back as the same records."""

from __future__ import annotations

import pytest

try:
    from _pytest.unraisableexception import gc_collect_iterations_key
except ImportError:  # before pytest 8.4 a config's cleanup collects no garbage
    gc_collect_iterations_key = None

RECORDS = [
    {"case_id": "c-1", "family": "toy", "valid": True, "result": {"score": 4.5, "why": "ünïcode ✓"},
     "raw": ["### (a)"], "judge": {"provider": "openai:m", "n": 1, "temperature": None}, "read": {"a": 2}},
    {"case_id": "c-1", "family": "toy", "valid": False, "result": None, "error": "no decision", "raw": [],
     "judge": {"provider": "openai:m", "n": 1, "temperature": 0.0}, "read": {}},
]


@pytest.fixture
def config(pytester):
    pytester.makeini("[pytest]\naddopts = -p no:deepeval -p no:asyncio\n")
    configured = pytester.parseconfigure()
    # as pytester's own inline runs: no five full collections of this process's heap at the cleanup
    # (over a second a test in an xdist worker late in the suite)
    if gc_collect_iterations_key is not None:
        configured.stash[gc_collect_iterations_key] = 0
    return configured


def report(verdicts: object) -> pytest.TestReport:
    made = pytest.TestReport("t.py::test_case", ("t.py", 1, "test_case"), {}, "passed", None, "teardown")
    if verdicts is not None:
        made.llmjury_verdicts = verdicts  # type: ignore[attr-defined]
    return made


def test_the_records_travel_as_json_text_and_come_back_equal(config):
    data = config.hook.pytest_report_to_serializable(config=config, report=report(RECORDS))
    assert isinstance(data["llmjury_verdicts"], str)
    back = config.hook.pytest_report_from_serializable(config=config, data=data)
    assert back.llmjury_verdicts == RECORDS
    assert (back.nodeid, back.when, back.outcome) == ("t.py::test_case", "teardown", "passed")


def test_a_report_without_verdicts_travels_as_pytest_sends_it(config):
    data = config.hook.pytest_report_to_serializable(config=config, report=report(None))
    assert "llmjury_verdicts" not in data
    back = config.hook.pytest_report_from_serializable(config=config, data=data)
    assert not hasattr(back, "llmjury_verdicts")


def test_the_report_keeps_its_records_when_serialized(config):
    sent = report(RECORDS)
    config.hook.pytest_report_to_serializable(config=config, report=sent)
    assert sent.llmjury_verdicts == RECORDS  # the serialized form is a copy; the report is unchanged
