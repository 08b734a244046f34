from __future__ import annotations

import pytest

from llmjury.errors import ConfigError
from llmjury.gates import Gate

SUMMARY = {
    "socratic": {"win_rate": {"value": 0.6, "low": 0.52, "high": 0.67, "n": 200, "method": "wilson"},
                 "verdicts": 200},
    "arena": {"rating": {"gpt-3.5-turbo": {"value": 1076.0, "low": 1053.0, "high": 1096.0, "n": 399},
                         "llama-13b": {"value": 874.0, "low": 848.0, "high": 900.0, "n": 395}},
              "rank": {"gpt-3.5-turbo": {"value": 2, "low": 2, "high": 3, "n": 399}}},
}


@pytest.mark.parametrize(("text", "status"), [
    ("socratic.win_rate>=0.55", "pass"),
    ("socratic.win_rate>=0.65", "fail"),
    ("socratic.win_rate.low>=0.55", "fail"),
    ("socratic.win_rate.high<0.7", "pass"),
    ("socratic.verdicts>=100", "pass"),
    ("arena.rating[gpt-3.5-turbo]>=arena.rating[llama-13b]", "pass"),
    ("arena.rating[llama-13b] > arena.rating[gpt-3.5-turbo]", "fail"),
    ("arena.rank[gpt-3.5-turbo]<=2", "pass"),
])
def test_gate_outcomes_on_point_estimates(text, status):
    assert Gate.parse(text).check(SUMMARY, uncertain="pass").status == status


def test_straddling_interval_is_inconclusive_unless_told_to_use_the_point():
    gate = Gate.parse("socratic.win_rate>=0.55")
    result = gate.check(SUMMARY)
    assert result.status == "inconclusive" and result.interval == (0.52, 0.67)
    assert gate.check(SUMMARY, uncertain="pass").status == "pass"
    assert Gate.parse("socratic.win_rate>=0.5").check(SUMMARY).status == "pass"  # whole interval clears it


def test_unknown_metric_fails_naming_the_path():
    result = Gate.parse("qa_quality.remove_rate<=0.1").check(SUMMARY)
    assert result.status == "fail" and "no metric 'qa_quality'" in result.reason


@pytest.mark.parametrize("text", ["socratic.win_rate", "socratic.win_rate >= ", "socratic..x>=1", ">=0.5"])
def test_malformed_gates_are_config_errors(text):
    with pytest.raises(ConfigError):
        Gate.parse(text)
