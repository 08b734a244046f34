from __future__ import annotations

import re
import warnings

import pytest
from summaries import summary_of

from llmjury.errors import ConfigError
from llmjury.results.exit_status import GATE_NOT_COMPARED_EXIT, gate_exit_status
from llmjury.results.gate_checks import check_metrics
from llmjury.results.gates import Gate

TREE = {
    "socratic": {"win_rate": {"value": 0.6, "low": 0.52, "high": 0.67, "n": 200, "method": "wilson"},
                 "verdicts": 200},
    "arena": {"rating": {"gpt-3.5-turbo": {"value": 1076.0, "low": 1053.0, "high": 1096.0, "n": 399},
                         "llama-13b": {"value": 874.0, "low": 848.0, "high": 900.0, "n": 395}},
              "rank": {"gpt-3.5-turbo": {"value": 2, "low": 2, "high": 3, "n": 399}}},
}
SUMMARY = summary_of(TREE)


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


def test_a_metric_a_dead_judge_left_out_says_why_and_keeps_its_threshold():
    """Before: `FAIL custom.score.test_recipe.mean>=2: value n/a vs n/a: no metric ... in this run` for a
    judge that answered nothing readable (a user trial): the threshold shown as n/a, the cause untold."""
    summary = summary_of({"custom": {"cases": 18, "verdicts": 36, "unscored": 36,
                                     "unscored_causes": {"failed": 30, "no_decision": 6}}})
    result = Gate.parse("custom.score.test_recipe.mean>=2").check(summary)
    assert (result.status, result.threshold) == ("fail", 2.0)
    assert result.reason.endswith("; custom has 36 of 36 verdicts unscored: failed 30, no_decision 6)")
    assert result.reason.startswith(" (no metric 'custom.score' in this run")


def test_a_misspelt_metric_known_only_after_the_run_fails_with_the_nearest_path():
    """Your own tests' metrics are named after them (custom.compare.TEST.win_rate), so start-up cannot
    check them: the gate's failure names the nearest path the run has."""
    summary = summary_of({"custom": {"compare": {"test_answer": {"win_rate": {"value": 0.8, "low": 0.6, "high": 0.9,
                                                                          "n": 10}}}}})
    result = Gate.parse("custom.compare.test_answr.win_rate>=0.5").check(summary)
    assert result.status == "fail"
    assert result.reason == (" (no metric 'custom.compare.test_answr' in this run; "
                             "did you mean 'custom.compare.test_answer'?)")


@pytest.mark.parametrize("text", ["socratic.win_rate", "socratic.win_rate >= ", "socratic..x>=1", ">=0.5"])
def test_malformed_gates_are_config_errors(text):
    with pytest.raises(ConfigError):
        Gate.parse(text)


@pytest.mark.parametrize(("text", "message"), [
    ("socratic.win_rate>=abc", "the threshold 'abc' is neither a number nor a metric path"),
    ("socratic.win_rate>=0.5x", "the threshold '0.5x' is neither a number nor a metric path"),
    ("win_rate>=0.5", "'win_rate' is not a metric path: write FAMILY.METRIC"),
])
def test_a_gate_whose_side_is_not_a_metric_path_says_so(text, message):
    """A mistyped threshold was read as a metric path, then reported as an unknown family 'abc'."""
    with pytest.raises(ConfigError, match=re.escape(message)):
        Gate.parse(text)


# -- differences from a baseline run ------------------------------------------------------------------
def delta(value, low, high):
    return {"value": value, "low": low, "high": high, "n": 200, "method": "paired bootstrap"}


COMPARED = summary_of({**TREE, "comparison": {"baseline": "main", "judges_differ": [], "compared": True, "families": {
    "socratic": {"win_rate": {"current": 0.6, "baseline": 0.63, "delta": delta(-0.03, -0.08, 0.02),
                              "shared_cases": 200, "only_current": 0, "only_baseline": 0}},
    "arena": {"rating[gpt-3.5-turbo]": {"current": 1076.0, "baseline": 1070.0, "delta": delta(6.0, 1.0, 11.0),
                                        "shared_cases": 399, "only_current": 0, "only_baseline": 0}}}}})


@pytest.mark.parametrize(("text", "status"), [
    ("socratic.win_rate.delta>=0.05", "fail"),
    ("socratic.win_rate.delta>=-0.02", "inconclusive"),  # -0.03, but the interval reaches -0.02
    ("socratic.win_rate.delta>=-0.1", "pass"),
    ("socratic.win_rate.delta.low>=-0.05", "inconclusive"),  # low -0.08, but high 0.02 clears it
    ("socratic.win_rate.delta.low>=0.05", "fail"),  # even the high bound is below
    ("socratic.win_rate.delta.high>=0", "pass"),
    ("arena.rating[gpt-3.5-turbo].delta>0", "pass"),
    ("arena.rating[gpt-3.5-turbo].delta.low>=5", "inconclusive"),
    ("arena.rating[gpt-3.5-turbo].delta.low>=12", "fail"),
    ("socratic.win_rate>=0.55", "inconclusive"),  # the run's own figure is still there
])
def test_delta_gates_read_the_comparison(text, status):
    assert Gate.parse(text).check(COMPARED).status == status


@pytest.mark.parametrize(("text", "status", "decided_by"), [
    ("socratic.win_rate.low>=0.5", "pass", "low"),
    ("socratic.win_rate.low>=0.55", "inconclusive", None),  # noise moved the low bound below: not a failure
    ("socratic.win_rate.low>=0.68", "fail", "high"),  # even the high bound is below
    ("socratic.win_rate.high<=0.7", "pass", "high"),
    ("socratic.win_rate.high<=0.6", "inconclusive", None),
    ("socratic.win_rate.high<=0.5", "fail", "low"),
    ("socratic.win_rate>=0.5", "pass", "low"),
    ("socratic.win_rate<0.5", "fail", "low"),
])
def test_a_bound_gate_has_three_outcomes_and_reports_the_point_and_the_deciding_bound(text, status, decided_by):
    result = Gate.parse(text).check(SUMMARY)
    assert (result.status, result.decided_by) == (status, decided_by)
    assert (result.value, result.interval) == (0.6, (0.52, 0.67))  # always the point and its interval


def test_a_delta_gates_value_is_the_change_not_the_bound_it_names():
    result = Gate.parse("socratic.win_rate.delta.low>=0.05").check(COMPARED)
    assert (result.value, result.interval, result.threshold) == (-0.03, (-0.08, 0.02), 0.05)
    assert result.line() == "FAIL         socratic.win_rate.delta.low>=0.05: value -0.03 [-0.08, 0.02] vs 0.05"


def test_uncertain_pass_decides_a_bound_gate_on_its_bound_and_a_point_gate_on_its_point():
    bound = Gate.parse("socratic.win_rate.low>=0.55").check(SUMMARY, uncertain="pass")
    point = Gate.parse("socratic.win_rate>=0.62").check(SUMMARY, uncertain="pass")
    assert (bound.status, bound.decided_by, bound.value) == ("fail", "low", 0.6)
    assert "decided on the low bound" in bound.reason
    assert (point.status, point.decided_by) == ("fail", "value")
    assert "decided on the point estimate" in point.reason


def test_a_threshold_path_ending_in_a_bound_reads_that_bound():
    result = Gate.parse("arena.rating[llama-13b].high<arena.rating[gpt-3.5-turbo].low").check(SUMMARY)
    assert (result.status, result.threshold, result.value) == ("pass", 1053.0, 874.0)


def test_a_zero_width_interval_on_the_threshold_passes():
    same = summary_of({"comparison": {"compared": True, "judges_differ": [], "families": {
        "socratic": {"win_rate": {"delta": delta(0.0, 0.0, 0.0)}}}}})
    assert Gate.parse("socratic.win_rate.delta>=0").check(same).status == "pass"


def test_a_delta_gate_on_runs_whose_judges_differ_is_not_compared_naming_the_fields():
    summary = summary_of({"comparison": {"compared": False, "families": {}, "judges_differ": [
        {"family": "socratic", "field": "model", "current": "a", "baseline": "b"},
        {"family": "socratic", "field": "prompt", "current": "x", "baseline": "y"}]}})
    result = Gate.parse("socratic.win_rate.delta>=-0.02").check(summary)
    assert result.status == "not compared" and "the judges differ (model, prompt)" in result.reason
    assert gate_exit_status([result]) == GATE_NOT_COMPARED_EXIT


def test_a_delta_gate_with_no_baseline_found_is_not_compared_never_passed_and_says_why():
    summary = summary_of({"comparison": {"compared": False, "families": {}, "judges_differ": [],
                                         "not_compared": "expired", "why_not": "main's baseline has expired"}})
    result = Gate.parse("socratic.win_rate.delta.high>=0").check(summary, uncertain="pass")
    assert result.status == "not compared" and "main's baseline has expired" in result.reason
    passing = Gate.parse("socratic.win_rate>=0").check(summary_of({**TREE, "comparison": summary.tree()["comparison"]}))
    assert gate_exit_status([passing, result]) == GATE_NOT_COMPARED_EXIT


@pytest.mark.parametrize(("text", "baseline", "message"), [
    ("socratic.win_rat>=0.5", False, "socratic has no metric 'win_rat' (did you mean 'win_rate'?)"),
    ("socratic.win_rate.hihg<0.9", False, "not 'hihg' (did you mean 'high'?)"),
    ("socratic.win_rat.delta>=0", True, "not 'win_rat' (did you mean 'win_rate'?)"),
    ("socratic.tie_rate.delta>=0", True, "differences are computed for socratic's headline metrics (win_rate)"),
    ("socratic.win_rate.delta.lo>=0", True, "after .delta write nothing, .low or .high, not 'lo'"),
    ("socratic.win_rate.delta>=-0.02", False, "a difference needs a baseline run: give --llm-baseline PATH"),
    ("qa_quality.remove_rate<=socratic.win_rat", False, "socratic has no metric 'win_rat'"),
    # Steps after an entry the suite names itself (its own evals' names) are known from the section's model.
    ("custom.score.helpful.meen>=3", False, "custom.score.helpful has no 'meen' (did you mean 'mean'?)"),
    ("custom.score.helpful.zzz>=3", False, "custom.score.helpful has no 'zzz'; it has mean"),
    ("geval.win_rat>=0.5", False, "geval has no metric 'win_rat'; its metrics are meta, human_ceiling, "
                                  "judge_validity, repairs, cases, verdicts, valid, unscored, unscored_rate, "
                                  "unscored_by_judge, decisions_read, unscored_causes"),
    ("custom.test_answer.win_rate>=0.5", False, "custom has no metric 'test_answer'; its metrics are compare, score, "
                                                "geval, check, repairs"),
    ("socratic.dataset>=1", False, "socratic.dataset holds no figure a gate can read; its metrics are win_rate, "),
    ("socratic.offline>=1", False, "socratic.offline holds no figure a gate can read; its metrics are win_rate, "),
    ("custom.compare.tone.win_rat>=0.5", False, "custom.compare.tone has no 'win_rat' (did you mean 'win_rate'?)"),
    ("custom.check.cites.pass_rate.lo>=0.9", False, "not 'lo' (did you mean 'low'?)"),
    ("custom.score.helpful>=3", False, "custom.score.helpful holds figures, not one: name one of mean"),
])
def test_a_gate_on_a_metric_a_family_lacks_is_refused_at_start_up(text, baseline, message):
    from llmjury.families import discover

    with pytest.raises(ConfigError, match=re.escape(message)):
        check_metrics([Gate.parse(text)], discover(), baseline=baseline)


def test_gates_on_known_metrics_core_counts_and_unknown_families_pass_the_start_up_check():
    from llmjury.families import discover

    texts = ["socratic.win_rate.low>=0.5", "socratic.verdicts>=10", "arena.rating[gpt-4].delta>=-5",
             "toy.anything>=1", "run.workers>=1", "custom.score.helpful.mean.low>=3",
             "custom.compare.tone.win_rate>=0.5"]
    check_metrics([Gate.parse(t) for t in texts], discover(), baseline=True)


@pytest.mark.parametrize(("passed", "n"), [(2, 2), (3, 4), (4, 5)])
def test_a_rate_over_too_few_items_is_inconclusive_never_passed_on_its_point_value(passed, n):
    from llmjury.stats import proportion

    summary = summary_of({"socratic": {"win_rate": proportion(passed, n)}})
    assert Gate.parse("socratic.win_rate>=0.5").check(summary).status == "inconclusive"
    assert Gate.parse("socratic.win_rate>=0.5").check(summary, uncertain="pass").status == "pass"


@pytest.mark.parametrize("text", ["socratic.win_rate==0.6", "arena.rating[gpt-4o]==1000", "geval.judge_validity==0.5"])
def test_equality_on_a_metric_with_an_interval_is_refused_at_start_up(text):
    """Before: `==` on a figure with an interval was accepted and could never pass."""
    from llmjury.families import discover

    with pytest.raises(ConfigError, match="== never passes on a figure with an interval"):
        check_metrics([Gate.parse(text)], discover(), baseline=False)


def test_equality_stays_allowed_on_counts_and_on_a_named_bound():
    from llmjury.families import discover

    check_metrics([Gate.parse("socratic.verdicts==200"), Gate.parse("socratic.win_rate.low==0.52")], discover(),
                  baseline=False)
    assert Gate.parse("socratic.verdicts==200").check(SUMMARY).status == "pass"


def test_equality_on_a_metric_known_only_at_the_end_fails_saying_why():
    result = Gate.parse("socratic.win_rate==0.6").check(SUMMARY)
    assert result.status == "fail" and "== never passes on a figure with an interval" in result.reason
    same = summary_of({"comparison": {"compared": True, "judges_differ": [], "families": {
        "socratic": {"win_rate": {"delta": delta(0.0, 0.0, 0.0)}}}}})
    assert Gate.parse("socratic.win_rate.delta==0").check(same).status == "pass"  # a zero-width interval equals


def test_a_gate_on_unscored_reasons_warns_at_start_up_naming_unscored_causes():
    """`unscored_reasons` is the older count `unscored_causes` replaced: kept one minor version, with a warning."""
    from llmjury.families import discover

    with pytest.warns(DeprecationWarning, match="unscored_reasons is deprecated since llmjury 0.2.0 and will be "
                                                "removed in 0.3.0: use unscored_causes"):
        check_metrics([Gate.parse("socratic.unscored_reasons.refused<=0")], discover(), baseline=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_metrics([Gate.parse("socratic.unscored_causes.truncated<=0")], discover(), baseline=False)
