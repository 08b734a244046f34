"""Paired comparison with a baseline run: deltas on shared cases, their intervals, judge changes,
the `--llm-baseline` option and the `llmjury compare` verb, and A/A checks that raise no alarm."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from summaries import summary_of

from llmjury.cli import main
from llmjury.judgement.verdicts import JudgeConfig, Verdict
from llmjury.reporting.compare_terminal import comparison_lines
from llmjury.results.compare import compare_runs, headline_leaves, metric_key, metric_rows
from llmjury.results.exit_status import GATE_FAILED_EXIT
from llmjury.results.gates import Gate
from llmjury.saved import SavedRun
from llmjury.testing.fake_openai import FakeOpenAI

PROJECT = Path(__file__).parent / "projects" / "polite"


@pytest.fixture
def polite(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The polite family module of the test project."""
    monkeypatch.syspath_prepend(str(PROJECT))
    import polite

    return polite


def records(polite: Any, outcomes: dict[str, bool | list[bool]],
            provider: str = "offline:heuristic") -> list[dict[str, Any]]:
    """Verdict records of the polite family: case id -> was the reply polite (length grows with the id);
    a list gives a case one verdict per item (several judge runs)."""
    judge = JudgeConfig(provider=provider, prompt="polite/judge@1", temperature=0.7, parser="yes-no/1")
    return [Verdict(case_id=case_id, family="polite", kind="polite", judge=judge,
                    result=polite.Polite(polite=ok, length=10 + i)).record()
            for i, (case_id, oks) in enumerate(sorted(outcomes.items()))
            for ok in (oks if isinstance(oks, list) else [oks])]


def compare(polite: Any, current: list[dict], baseline: list[dict], **kwargs: Any) -> dict[str, Any]:
    return compare_runs(current, SavedRun(Path("baseline"), baseline, None), {"polite": polite.FAMILY}, **kwargs)


def checked(comparison: dict[str, Any], gate: str) -> str:
    return Gate.parse(gate).check(summary_of({"comparison": comparison})).status


def test_a_run_compared_with_itself_has_zero_deltas_with_the_width_its_n_allows_and_is_never_certain(polite):
    rng = random.Random(3)
    run = records(polite, {f"q{i:02d}": rng.random() < 0.6 for i in range(40)})
    comparison = compare(polite, run, run)
    rows = metric_rows(comparison["families"]["polite"])
    assert set(rows) == {"polite_rate", "longest_reply", "polite_share_of_text"}
    assert (comparison["families"]["polite"]["changed_cases"], comparison["families"]["polite"]["changed_total"]) \
        == ([], 0)
    for row in rows.values():
        assert row["delta"]["value"] == 0
        assert (row["shared_cases"], row["only_current"], row["only_baseline"]) == (40, 0, 0)
    assert (rows["longest_reply"]["delta"]["low"], rows["longest_reply"]["delta"]["high"]) == (None, None)
    # No case changed among 40: up to 1 - 0.025^(1/40) of them could have (exact), so could the rate.
    rate = rows["polite_rate"]["delta"]
    assert (rate["low"], rate["high"]) == pytest.approx((-(1 - 0.025 ** (1 / 40)), 1 - 0.025 ** (1 / 40)))
    assert rate["p_value"] == 1.0 and rate["low"] < 0 < rate["high"]  # McNemar's p agrees with the interval
    assert "no case changed" in rate["method"]
    gates = {"polite.polite_rate.delta.high>=0": "pass", "polite.polite_rate.delta>=0": "inconclusive",
             "polite.polite_rate.delta.low>=-0.05": "inconclusive",
             "polite.longest_reply.delta<=0": "inconclusive"}  # a maximum has no interval: never decided on its point
    assert {gate: checked(comparison, gate) for gate in gates} == gates


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_a_tiny_unchanged_comparison_is_never_passed_with_certainty(polite, n):
    run = records(polite, {f"q{i}": True for i in range(n)})
    comparison = compare(polite, run, run)
    delta = comparison["families"]["polite"]["polite_rate"]["delta"]
    assert delta["high"] - delta["low"] > 0.5  # at n <= 5 half the cases could have changed unseen
    assert checked(comparison, "polite.polite_rate.delta>=0") == "inconclusive"
    assert checked(comparison, "polite.polite_rate.delta.low>=-0.05") == "inconclusive"


def test_a_drop_of_a_rate_gets_newcombes_paired_interval_and_an_exact_mcnemar_test(polite):
    from scipy import stats

    baseline = records(polite, {f"q{i:02d}": i % 8 != 0 for i in range(40)})
    current = records(polite, {f"q{i:02d}": i % 4 != 0 and i != 2 for i in range(40)})
    row = compare(polite, current, baseline)["families"]["polite"]["polite_rate"]
    assert (row["current"], row["baseline"]) == (0.725, 0.875)
    delta = row["delta"]
    assert delta["value"] == pytest.approx(-0.15)
    assert delta["method"].startswith("paired proportions: Newcombe")
    assert delta["discordant"] == {"rose": 0, "fell": 6}  # q02 and the five cases i % 4 == 0 but i % 8 != 0
    assert delta["p_value"] == pytest.approx(stats.binomtest(0, 6, 0.5).pvalue)
    assert delta["low"] < -0.15 < delta["high"] < 0  # the whole interval is a drop
    comparison = compare(polite, current, baseline)
    assert checked(comparison, "polite.polite_rate.delta>=-0.02") == "fail"
    assert checked(comparison, "polite.polite_rate.delta.low>=-0.6") == "pass"


def test_a_mean_of_several_verdicts_per_case_gets_a_paired_t_interval_on_per_case_differences(polite):
    from scipy import stats

    rng = random.Random(5)
    now = {f"q{i:02d}": [rng.random() < 0.6 for _ in range(3)] for i in range(30)}
    before = {f"q{i:02d}": [rng.random() < 0.7 for _ in range(3)] for i in range(30)}
    delta = compare(polite, records(polite, now), records(polite, before))["families"]["polite"]["polite_rate"]["delta"]
    mine, theirs = [sum(now[k]) / 3 for k in sorted(now)], [sum(before[k]) / 3 for k in sorted(now)]
    differences = [a - b for a, b in zip(mine, theirs, strict=True)]
    low, high = stats.t.interval(0.95, 29, loc=sum(differences) / 30, scale=stats.sem(differences))
    assert delta["method"] == "paired t on per-case differences" and delta["discordant"] is None
    assert (delta["low"], delta["high"]) == (pytest.approx(low), pytest.approx(high))
    assert delta["p_value"] == pytest.approx(stats.ttest_rel(mine, theirs).pvalue)


@pytest.mark.parametrize("cases", [30, 620])  # above 500 shared cases too: no fall-back to a seeded method
def test_a_rate_takes_the_closed_form_paired_interval_at_any_case_count(polite, cases):
    baseline = records(polite, {f"q{i:03d}": i % 3 != 0 for i in range(cases)})
    current = records(polite, {f"q{i:03d}": i % 5 != 0 for i in range(cases)})
    first = compare(polite, current, baseline)["families"]["polite"]
    assert first["polite_rate"]["delta"]["method"].startswith("paired proportions")
    assert "jackknife" in first["polite_share_of_text"]["delta"]["method"]
    assert compare(polite, list(reversed(current)), baseline)["families"]["polite"] == first


def test_the_jackknife_groups_are_fixed_by_case_id_not_by_record_order(polite):
    baseline = records(polite, {f"q{i:02d}": True for i in range(30)})
    current = records(polite, {f"q{i:02d}": True for i in range(35)})
    baseline = records(polite, {f"q{i:02d}": i % 3 != 0 for i in range(30)})
    row = compare(polite, current, baseline)["families"]["polite"]["polite_share_of_text"]["delta"]
    shuffled = compare(polite, current[::-1], baseline[::-1])["families"]["polite"]["polite_share_of_text"]["delta"]
    assert row == shuffled and row["low"] < row["value"] < row["high"]


def test_each_delta_says_the_smallest_change_its_n_detects_and_the_cases_a_margin_needs(polite):
    baseline = records(polite, {f"q{i:02d}": i % 2 == 0 for i in range(60)})
    current = records(polite, {f"q{i:02d}": i % 2 == 0 and i % 10 != 0 for i in range(60)})
    comparison = compare(polite, current, baseline)
    delta = comparison["families"]["polite"]["polite_rate"]["delta"]
    assert delta["discordant"] == {"rose": 0, "fell": 6} and delta["margin"] == 0.05
    sd = (6 / 60 - 0.1 ** 2) ** 0.5  # per-case sd of the paired differences
    assert delta["mde"] == pytest.approx(2.8016 * sd / 60 ** 0.5, rel=1e-3)
    assert delta["cases_needed"] == pytest.approx((2.8016 * sd / 0.05) ** 2, rel=1e-2)
    lines = comparison_lines(comparison)
    assert f"    smallest detectable change at n=60: {delta['mde']:.4g}; a 0.05 margin needs " \
           f"~{delta['cases_needed']} shared cases" in lines


def test_every_delta_carries_its_interval_at_the_comparisons_confidence_level(polite):
    from scipy import stats

    rng = random.Random(7)
    now = {f"q{i:02d}": [rng.random() < 0.6 for _ in range(3)] for i in range(30)}
    before = {f"q{i:02d}": [rng.random() < 0.7 for _ in range(3)] for i in range(30)}
    at_90 = compare(polite, records(polite, now), records(polite, before), confidence=0.9)
    default = compare(polite, records(polite, now), records(polite, before))
    assert (at_90["confidence"], default["confidence"]) == (0.9, 0.95)
    keys = ("polite_rate", "polite_share_of_text")
    rate, rating = (at_90["families"]["polite"][key]["delta"] for key in keys)
    wide_rate, wide_rating = (default["families"]["polite"][key]["delta"] for key in keys)
    assert rate["confidence"] == rating["confidence"] == 0.9 and wide_rate["confidence"] == 0.95
    differences = [sum(now[k]) / 3 - sum(before[k]) / 3 for k in sorted(now)]
    low, high = stats.t.interval(0.9, 29, loc=sum(differences) / 30, scale=stats.sem(differences))
    assert (rate["low"], rate["high"]) == (pytest.approx(low), pytest.approx(high))
    assert rate["mde"] == pytest.approx(wide_rate["mde"] * (1.6449 + 0.8416) / (1.96 + 0.8416), rel=1e-3)
    assert rate["cases_needed"] < wide_rate["cases_needed"] and rate["p_value"] == wide_rate["p_value"]
    # the jackknife's t quantile follows the level too: same centre, narrower by t(0.95, 9) / t(0.975, 9)
    assert "jackknife" in rating["method"] and rating["value"] == wide_rating["value"]
    ratio = stats.t.ppf(0.95, 9) / stats.t.ppf(0.975, 9)
    assert rating["high"] - rating["low"] == pytest.approx(ratio * (wide_rating["high"] - wide_rating["low"]))
    assert comparison_lines(at_90)[0] == "compared with baseline baseline (90% paired intervals)"


def test_a_drop_the_95_percent_interval_cannot_show_fails_the_recommended_gate_at_the_shipped_92_percent(polite):
    """60 shared cases, 4 went from right to wrong and none back: exact McNemar p = 0.125 (one-sided
    0.0625). At 0.95 (a one-sided 2.5% test) `delta.high>=0` passes; at 0.92 (4%) it fails."""
    baseline = records(polite, {f"q{i:02d}": i < 40 for i in range(60)})
    current = records(polite, {f"q{i:02d}": i < 36 for i in range(60)})
    gate = "polite.polite_rate.delta.high>=0"
    assert checked(compare(polite, current, baseline), gate) == "pass"
    assert checked(compare(polite, current, baseline, confidence=0.92), gate) == "fail"
    assert checked(compare(polite, current, baseline), gate) == "pass"  # no level left behind in the process


def test_the_cases_whose_value_changed_are_listed_largest_drop_first_and_capped(polite):
    baseline = records(polite, {f"q{i:02d}": i >= 70 for i in range(80)})
    current = records(polite, {f"q{i:02d}": i < 70 for i in range(80)})
    compared = compare(polite, current, baseline)["families"]["polite"]
    assert compared["changed_total"] == 80 and len(compared["changed_cases"]) == 50
    assert compared["changed_cases"][0] == {"case_id": "q70", "metric": "polite_rate", "baseline": 1.0,
                                            "current": 0.0, "change": -1.0, "baseline_answer": None,
                                            "current_answer": None, "baseline_reason": None, "current_reason": None}
    changes = [c["change"] for c in compared["changed_cases"]]
    assert changes == sorted(changes) and changes[9:11] == [-1.0, 1.0]


def test_the_baseline_is_shown_relative_to_the_working_directory_never_absolute(polite, tmp_path, monkeypatch):
    run = records(polite, {"q00": True})
    monkeypatch.chdir(tmp_path)
    inside = compare_runs(run, SavedRun(tmp_path / "reports" / "main", run, None), {"polite": polite.FAMILY})
    outside = compare_runs(run, SavedRun(Path("/elsewhere/ci/runner/main-run"), run, None), {"polite": polite.FAMILY})
    given = compare_runs(run, SavedRun(Path("../main"), run, None), {"polite": polite.FAMILY})
    assert (inside["baseline"], outside["baseline"], given["baseline"]) == ("reports/main", "main-run", "../main")


def test_only_shared_cases_are_compared_and_the_others_are_counted(polite):
    current = records(polite, {f"q{i:02d}": True for i in range(40)})
    # The baseline's ten cases of its own are all impolite: counted, never averaged in.
    baseline = records(polite, {f"q{i:02d}": i < 40 for i in range(10, 50)})
    row = compare(polite, current, baseline)["families"]["polite"]["polite_rate"]
    assert (row["shared_cases"], row["only_current"], row["only_baseline"]) == (30, 10, 10)
    assert row["current"] == row["baseline"] == 1.0 and row["delta"]["value"] == 0


def test_a_smooth_metric_that_is_no_mean_of_cases_is_compared_by_re_aggregation(polite):
    baseline = records(polite, {f"q{i:02d}": i % 3 != 0 for i in range(20)})
    current = records(polite, {f"q{i:02d}": i % 3 != 0 for i in range(25)})  # five more, longer replies
    row = compare(polite, current, baseline)["families"]["polite"]["polite_share_of_text"]
    assert "jackknife" in row["delta"]["method"] and "not a mean of per-case values" in row["delta"]["method"]
    assert row["current"] == row["baseline"]  # on the 20 shared cases
    assert row["delta"]["value"] == 0


def test_a_maximum_gets_no_jackknife_interval_and_its_method_says_so(polite):
    """A delete-a-group jackknife on a maximum is inconsistent: its interval was printed all the same."""
    baseline = records(polite, {f"q{i:02d}": True for i in range(20)})
    current = records(polite, {f"q{i:02d}": True for i in range(25)})
    delta = compare(polite, current, baseline)["families"]["polite"]["longest_reply"]["delta"]
    assert delta["value"] == 0 and (delta["low"], delta["high"]) == (None, None)
    assert delta["method"].startswith("no interval: a non-smooth figure")


def test_an_undeclared_metric_that_is_no_mean_of_cases_gets_no_interval(polite, monkeypatch):
    monkeypatch.setattr(type(polite.FAMILY), "interval_kinds", {"polite_rate": "proportion"})
    baseline = records(polite, {f"q{i:02d}": i % 3 != 0 for i in range(30)})
    current = records(polite, {f"q{i:02d}": i % 4 != 0 for i in range(30)})
    rows = compare(polite, current, baseline)["families"]["polite"]
    assert rows["polite_rate"]["delta"]["method"].startswith("paired proportions")  # checked additive: paired
    delta = rows["polite_share_of_text"]["delta"]
    assert (delta["low"], delta["high"]) == (None, None) and "does not declare" in delta["method"]


def test_every_re_aggregation_runs_blas_on_one_thread(polite, monkeypatch):
    """The jackknife re-aggregates once per shared case: each with a BLAS pool spinning beside it
    took the CPU from the other xdist worker, as the summary's aggregation did before."""
    from threadpoolctl import threadpool_info

    if not any(info["user_api"] == "blas" and info["num_threads"] > 1 for info in threadpool_info()):
        pytest.skip("BLAS runs on one thread here anyway")
    threads: list[int] = []
    aggregate = polite.FAMILY.aggregate

    def counting(verdicts):
        threads.append(max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"))
        return aggregate(verdicts)

    monkeypatch.setattr(polite.FAMILY, "aggregate", counting)
    baseline = records(polite, {f"q{i:02d}": True for i in range(20)})
    compare(polite, records(polite, {f"q{i:02d}": True for i in range(25)}), baseline)
    assert len(threads) > 20 and set(threads) == {1}


def test_runs_judged_by_different_models_are_not_compared_unless_allowed(polite):
    outcomes = {f"q{i:02d}": i % 2 == 0 for i in range(20)}
    current = records(polite, outcomes, provider="openai:gpt-4o-mini")
    baseline = records(polite, outcomes, provider="openai:gpt-4o")
    comparison = compare(polite, current, baseline)
    assert comparison["compared"] is False and comparison["families"] == {}
    assert comparison["judges_differ"] == [{"family": "polite", "field": "model", "current": "gpt-4o-mini",
                                            "baseline": "gpt-4o"}]
    result = Gate.parse("polite.polite_rate.delta>=-0.02").check(summary_of({"comparison": comparison}))
    assert result.status == "not compared" and "judges differ (model)" in result.reason
    forced = compare(polite, current, baseline, allow_judge_change=True)
    assert forced["compared"] is True and forced["families"]["polite"]["polite_rate"]["delta"]["value"] == 0


def test_headline_metrics_under_a_mapping_are_keyed_as_gates_write_them():
    section = {"rating": {"gpt-3.5-turbo": {"value": 1.0, "n": 3}, "llama": {"value": 2.0, "n": 3}},
               "tie_rate": {"value": 0.1, "n": 3}}
    assert set(headline_leaves(section, ("rating",))) == {"rating[gpt-3.5-turbo]", "rating.llama"}
    assert metric_key(("judge_validity", "offline/dstc9", "spearman")) == "judge_validity[offline/dstc9].spearman"


# -- the plugin option and the CLI verb --------------------------------------------------------------
@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    for path in PROJECT.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            target = pytester.path / path.relative_to(PROJECT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    return pytester


def summary(project: pytest.Pytester) -> dict[str, Any]:
    return json.loads((project.path / "reports" / "latest" / "summary.json").read_text())


@pytest.mark.parametrize(("args", "message"), [
    (["--llm-baseline", "nowhere"], "*--llm-baseline nowhere: no such run folder or verdicts.jsonl file*"),
    (["--llm-compare-confidence", "95"], "*--llm-compare-confidence '95': must lie strictly between 0.5 and 1*"),
    (["--llm-compare-confidence", "1"], "*--llm-compare-confidence '1': must lie strictly between 0.5 and 1*"),
    (["-o", "llm_compare_confidence=high"], "*ini llm_compare_confidence 'high': not a number*"),
    (["-o", "llm_baseline=gone"], "*ini llm_baseline gone: no such run folder or verdicts.jsonl file*"),
    (["--llm-gate", "polite.polite_rate.delta>=-0.02"],
     "*polite.polite_rate.delta>=-0.02*a difference needs a baseline run: give --llm-baseline PATH*"),
    (["--llm-gate", "polite.polite_rat>=0.5"], "*polite has no metric 'polite_rat' (did you mean 'polite_rate'?)*"),
])
def test_a_bad_baseline_or_gate_stops_the_run_at_start_up(project, args, message):
    result = project.runpytest_inprocess("-n", "0", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_an_unreadable_baseline_names_the_option_file_and_line(project):
    (project.path / "old").mkdir()
    (project.path / "old" / "verdicts.jsonl").write_text('{"case_id": "q00"}\n')
    result = project.runpytest_inprocess("-n", "0", "--llm-baseline", "old")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--llm-baseline*old*verdicts.jsonl:1: not a verdict record*"])


def test_a_sampled_judge_compared_with_another_sample_of_itself_raises_no_alarm(project, monkeypatch):
    """A/A: a judge answering at random (temperature > 0), two runs with different seeds. The delta's
    interval holds 0 and a reasonable delta gate does not fail."""
    def coin(seed: int) -> Any:
        rng = random.Random(seed)
        return lambda body, index: rng.choice(["yes", "no"])

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    args = ["-n", "0", "--llm-judge", "openai:coin", "--llm-cache", "off", "--llm-option", "polite.cases=40"]
    with FakeOpenAI(coin(1)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        project.runpytest_inprocess(*args, "--llm-seed", "1").assert_outcomes(passed=40)
        server.reply = coin(2)
        first = summary(project)["run"]["id"]
        result = project.runpytest_inprocess(*args, "--llm-seed", "2", "--llm-baseline", f"reports/{first}",
                                              "--llm-gate", "polite.polite_rate.delta>=-0.3")
        second = summary(project)
        at_92 = project.runpytest_inprocess(*args, "--llm-seed", "2", "--llm-baseline", f"reports/{first}",
                                             "-o", "llm_compare_confidence=0.92")
    assert result.ret != GATE_FAILED_EXIT
    in_run = summary(project)
    row = second["comparison"]["families"]["polite"]["polite_rate"]
    assert row["current"] != row["baseline"]  # the two runs did sample differently
    assert row["delta"]["low"] <= 0 <= row["delta"]["high"] and row["delta"]["confidence"] == 0.95
    assert at_92.ret == 0 and in_run["comparison"]["confidence"] == 0.92
    # `llmjury compare` (seed 0) on the same two runs at each run's level gives its comparison (seed 2)
    monkeypatch.chdir(project.path)
    for run, level in ((second, []), (in_run, ["--confidence", "0.92"])):
        assert main(["compare", f"reports/{run['run']['id']}", f"reports/{first}", "--out", "again", *level]) == 0
        again = json.loads((project.path / "again" / "latest" / "summary.json").read_text())["comparison"]
        assert again["families"] == run["comparison"]["families"]
        assert again["confidence"] == run["comparison"]["confidence"]
        assert again["baseline"] == run["comparison"]["baseline"] == f"reports/{first}"
    # at another level the same runs get other intervals: the level is part of what must match
    assert main(["compare", f"reports/{in_run['run']['id']}", f"reports/{first}", "--out", "again"]) == 0
    wide = json.loads((project.path / "again" / "latest" / "summary.json").read_text())["comparison"]
    narrow, wide = (c["families"]["polite"]["polite_rate"]["delta"] for c in (in_run["comparison"], wide))
    assert wide["low"] < narrow["low"] < narrow["high"] < wide["high"] and wide["confidence"] == 0.95


def test_compare_verb_checks_delta_gates_on_two_saved_runs(tmp_path, polite, capsys, monkeypatch):
    def saved(name: str, outcomes: dict[str, bool]) -> Path:
        (tmp_path / name).mkdir()
        lines = [json.dumps(r) for r in records(polite, outcomes)]
        (tmp_path / name / "verdicts.jsonl").write_text("\n".join(lines) + "\n")
        return tmp_path / name

    shutil.copytree(PROJECT, tmp_path / "project", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.chdir(tmp_path / "project")  # its pytest.ini registers the polite family
    before = saved("main", {f"q{i:02d}": True for i in range(30)})
    after = saved("branch", {f"q{i:02d}": i % 3 != 0 for i in range(30)})
    out = tmp_path / "reports"
    gate = ["--gate", "polite.polite_rate.delta.high>=0"]
    assert main(["compare", str(before), str(before), *gate, "--out", str(out)]) == 0
    assert main(["compare", str(after), str(before), *gate, "--out", str(out)]) == GATE_FAILED_EXIT
    written = json.loads((out / "latest" / "summary.json").read_text())
    assert written["comparison"]["families"]["polite"]["polite_rate"]["delta"]["value"] == pytest.approx(-1 / 3)
    assert written["comparison"]["baseline"] == "main"  # outside the working directory: its folder's name
    assert "polite.polite_rate: 1 -> 0.6667" in capsys.readouterr().out
    assert main(["compare", str(after), str(before), "--gate", "polite.polite_rate.detla>=0"]) == 4
    assert "(did you mean 'delta'?)" in capsys.readouterr().err
    assert main(["compare", str(after), str(tmp_path / "none")]) == 4
    assert "BASELINE" in capsys.readouterr().err
    for level in ("0.5", "1.0", "ninety"):
        assert main(["compare", str(after), str(before), "--confidence", level]) == 4
        assert f"llmjury compare: --confidence '{level}': " in capsys.readouterr().err


def test_compare_verb_refuses_a_family_the_project_does_not_register_naming_it(tmp_path, polite, capsys,
                                                                              monkeypatch):
    """Without the project's ini the polite family is unknown: a usage error naming it, not a false
    FAIL "no metric ... in this run"."""
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "verdicts.jsonl").write_text(
        "\n".join(json.dumps(r) for r in records(polite, {"q00": True})) + "\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\nllm_families =\n")
    monkeypatch.chdir(tmp_path)
    assert main(["compare", "run", "run", "--gate", "polite.polite_rate.delta>=0"]) == 4
    err = capsys.readouterr().err
    assert "unknown family 'polite'" in err and "pytest.ini" in err
    (tmp_path / "pytest.ini").write_text("[pytest]\nllm_families = nowhere_to_be_found:FAMILY\n")
    assert main(["compare", "run", "run"]) == 4
    assert "llm_families line 'nowhere_to_be_found:FAMILY': cannot load it" in capsys.readouterr().err


def test_runs_with_no_case_in_common_count_them_and_compare_nothing(polite):
    current = records(polite, {f"a{i}": True for i in range(5)})
    baseline = records(polite, {f"b{i}": True for i in range(7)})
    row = compare(polite, current, baseline)["families"]["polite"]["polite_rate"]
    assert (row["shared_cases"], row["only_current"], row["only_baseline"]) == (0, 5, 7)
    assert row["delta"]["value"] is None and row["delta"]["method"] == "no shared cases"
    gated = Gate.parse("polite.polite_rate.delta>=-0.02").check(summary_of({"comparison": compare(
        polite, current, baseline)}))
    assert gated.status == "inconclusive" and "dropped 7" in gated.reason  # never a pass on no shared case


def test_a_baseline_record_the_family_cannot_read_is_named_and_the_rest_is_kept(polite):
    current = records(polite, {f"q{i:02d}": True for i in range(10)})
    baseline = [dict(r, kind="retired") if r["case_id"] == "q03" else r for r in current]
    other = {**baseline[0], "family": "toy"}  # a family the run does not know: left out, not an error
    comparison = compare_runs(current, SavedRun(Path("old"), [*baseline, other], None), {"polite": polite.FAMILY})
    assert comparison["families"] == {}
    assert "no verdict kind 'retired'" in comparison["errors"]["polite"]


def test_a_baseline_named_by_a_latest_pointer_is_read_and_a_truncated_one_is_refused(tmp_path):
    """The baseline reader finds runs as the run layout does (a `latest` pointer file where symlinks
    fail), and a cut-off gzip file is a usage error naming it, not a raw EOFError."""
    from llmjury.errors import ConfigError
    from llmjury.runfiles import VERDICTS, write_gzip
    from llmjury.saved import load_run

    run = tmp_path / "run-1"
    run.mkdir()
    record = {"case_id": "q00", "family": "polite", "judge": "offline"}
    write_gzip(run / VERDICTS, json.dumps(record) + "\n")
    (run / "summary.json").write_text('{"run": {"id": "run-1"}}')
    (tmp_path / "latest").write_text("run-1\n")
    saved = load_run(tmp_path / "latest", "--llm-baseline")
    assert saved.records == [record] and saved.summary is not None and saved.summary.run.id == "run-1"
    (run / VERDICTS).write_bytes((run / VERDICTS).read_bytes()[:-8])
    with pytest.raises(ConfigError, match=r"^--llm-baseline .*verdicts\.jsonl\.gz: cannot be read"):
        load_run(run, "--llm-baseline")


def test_a_delta_counts_the_cases_either_run_scored_and_states_no_detectable_change_beyond_the_range(polite):
    """Of 16 shared cases only one was scored (an offline A/A of the socratic family): a 'smallest
    detectable change' of 2.8 for a rate means nothing, so none is stated."""
    run = records(polite, {"q00": True})
    unscored = [dict(r, case_id=f"u{i:02d}", valid=False, result=None, error="unparseable: 'maybe'")
                for i, r in enumerate(run * 15)]
    delta = compare(polite, run + unscored, run + unscored)["families"]["polite"]["polite_rate"]["delta"]
    assert (delta["n"], delta["mde"]) == (1, None) and delta["cases_needed"] is not None


def fingerprinted(polite: Any, outcomes: dict[str, bool], reworded: set[str] = frozenset()) -> list[dict[str, Any]]:
    """Records whose cases carry a content fingerprint; a reworded case keeps its id, not its content."""
    from llmjury.fingerprints import stamp

    found: list[dict[str, Any]] = []
    for record in records(polite, outcomes):
        text = "reworded" if record["case_id"] in reworded else "original"
        case = {"id": record["case_id"], "question": f"{text} {record['case_id']}"}
        found += stamp([record], record["case_id"], case)
    return found


def test_a_pull_request_that_drops_most_cases_is_inconclusive_never_passed_and_lists_them(polite):
    baseline = fingerprinted(polite, {f"q{i:02d}": True for i in range(72)})
    kept = [r for r in baseline if int(r["case_id"][1:]) < 6]  # 6 of 72 cases left, all still right
    comparison = compare(polite, kept, baseline)
    changes = comparison["families"]["polite"]["case_changes"]
    assert (changes["dropped"], changes["added"], changes["changed"], changes["exceeds"]) == (66, 0, 0, True)
    assert changes["ids"]["dropped"][:2] == ["q06", "q07"]
    result = Gate.parse("polite.polite_rate.delta.high>=0").check(summary_of({"comparison": comparison}),
                                                                   uncertain="pass")
    assert result.status == "inconclusive" and "dropped 66" in result.reason and "92%" in result.reason
    from llmjury.results.case_changes import case_note

    assert case_note("polite", comparison["families"]["polite"]) == (
        "polite: 0 cases added; 66 dropped: q06, q07, q08, q09, q10 and 61 more; 0 changed under the same id; "
        "92% of the baseline's cases dropped or changed, more than 10%: its delta gates are inconclusive")
    few = [r for r in baseline if r["case_id"] != "q00"]  # one dropped of 72: within the 10% allowed
    assert checked(compare(polite, few, baseline), "polite.polite_rate.delta.high>=0") == "pass"


def test_cases_reworded_under_the_same_ids_are_changed_cases_left_out_of_the_pairs(polite):
    baseline = fingerprinted(polite, {f"q{i:02d}": True for i in range(40)})
    reworded = {f"q{i:02d}" for i in range(10)}
    current = fingerprinted(polite, {f"q{i:02d}": i >= 10 or i % 2 == 0 for i in range(40)}, reworded)
    family = compare(polite, current, baseline)["families"]["polite"]
    assert family["case_changes"]["changed"] == 10 and family["case_changes"]["ids"]["changed"][0] == "q00"
    assert family["polite_rate"]["shared_cases"] == 30  # the reworded ten are not the same cases
    assert checked(compare(polite, current, baseline), "polite.polite_rate.delta.high>=0") == "inconclusive"
    assert checked(compare(polite, current, baseline, max_changed=0.3), "polite.polite_rate.delta.high>=0") == "pass"


def test_a_changed_rubric_is_another_judge_not_the_same_one():
    from llmjury.results.comparability import judge_differences

    def record(rubric: str, with_field: bool = True) -> dict[str, Any]:
        from llmjury.fingerprints import criteria_fingerprint

        judge = {"provider": "openai:gpt-4o-mini", "prompt": "core/score.j2", "parser": "score/1", "temperature": 0}
        return {"family": "custom", "case_id": "q1",
                "judge": judge | ({"criteria": criteria_fingerprint({"rubric": rubric})} if with_field else {})}

    assert judge_differences([record("5: correct")], [record("5: correct")]) == []
    differ = judge_differences([record("5: correct and polite")], [record("5: correct")])
    assert [d["field"] for d in differ] == ["criteria"]
    assert judge_differences([record("5: correct")], [record("5: correct", with_field=False)]) == []  # an older run


def test_flipped_cases_show_each_runs_answer_and_the_judges_reason_right_to_wrong_before_noise():
    from llmjury.results.decision import flips

    def verdict(case_id: str, kind: str, result: dict[str, Any], answer: str, raw: str) -> dict[str, Any]:
        return {"case_id": case_id, "family": "custom", "kind": kind, "judge": {"provider": "openai:j"},
                "valid": True, "result": result, "attributes": {"name": "t", "answer": answer}, "raw": [raw]}

    changed = [{"case_id": "noisy", "metric": "score.t.mean", "baseline": 4.0, "current": 3.0, "change": -1.0},
               {"case_id": "broken", "metric": "check.t.pass_rate", "baseline": 1.0, "current": 0.0, "change": -1.0}]
    from llmjury.results.flip_evidence import evidence

    now = [verdict("broken", "check", {}, "It is 7.", "expected 6"), verdict("noisy", "score", {}, "Six.", "3: terse")]
    before = [verdict("broken", "check", {}, "It is 6.", "passed"), verdict("noisy", "score", {}, "Six.", "4: fine")]
    listed = [entry | evidence(entry["case_id"], entry["metric"], now, before) for entry in changed]
    summary = summary_of({"comparison": {"compared": True, "judges_differ": [],
                                         "families": {"custom": {"changed_cases": listed, "changed_total": 2}}}})
    (family,) = flips(summary, [])
    assert [c.case_id for c in family.cases] == ["broken", "noisy"]  # right to wrong first, the score's move after
    broken = family.cases[0]
    assert (broken.baseline_answer, broken.current_answer, broken.current_reason) == ("It is 6.", "It is 7.",
                                                                                       "expected 6")
    assert broken.decisive and not family.cases[1].decisive
