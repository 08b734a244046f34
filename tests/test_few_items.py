"""A figure from too few items, or with an interval of zero width, carries no interval and says why
(in summary.json's method, and so in summary.md and report.html), and a gate on a bound it does not
have is inconclusive: reports printed `0.935 [0.935, 0.935]` for a correlation over 5 items."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from summaries import summary_of

from llmjury.families.arena import FAMILY as ARENA
from llmjury.families.arena.report import leaderboard
from llmjury.families.geval.meta import pooled
from llmjury.families.qa_quality.agreement import agreement_with_labels
from llmjury.families.qa_quality.results import LabelledGrade
from llmjury.results.gates import Gate
from llmjury.stats import LENGTH_ADJUSTED, length_controlled_rate, mean_metric, metric, proportion
from llmjury.testing import FakeOpenAI

REPO = Path(__file__).resolve().parents[1]


def test_an_interval_from_too_few_items_is_dropped_with_its_reason():
    figure = metric(0.6, 0.1, 0.95, 3, "wilson")
    assert (figure["value"], figure["low"], figure["high"]) == (0.6, None, None)
    assert figure["method"] == "wilson; too few items (n=3) to tell"
    assert metric(0.6, 0.1, 0.95, 5, "wilson")["low"] == 0.1


def test_a_zero_width_interval_is_dropped_with_its_reason():
    figure = metric(0.935, 0.935, 0.935, 40, "pooled, item bootstrap")
    assert figure["low"] is None and figure["high"] is None and figure["value"] == 0.935
    assert "every resample gave the same value" in figure["method"]


def test_a_rate_over_three_items_has_no_interval_and_over_thirty_has_one():
    assert proportion(2, 3)["low"] is None and "too few items (n=3)" in proportion(2, 3)["method"]
    thirty = proportion(20, 30)
    assert thirty["low"] < 2 / 3 < thirty["high"] and thirty["method"] == "wilson"


def test_a_length_controlled_rate_over_four_battles_says_why_it_has_no_value():
    figure = length_controlled_rate(np.array([1.0, 0.0, 1.0, 0.5]), np.array([10.0, -3.0, 4.0, 0.0]))
    assert figure["value"] is None and figure["method"] == f"{LENGTH_ADJUSTED}; too few items (n=4) to tell"


def test_a_mean_of_three_scores_has_no_interval_and_of_six_stays_on_the_scale():
    assert mean_metric([1, 5, 5], (1, 5))["low"] is None
    six = mean_metric([1, 5, 5, 5, 5, 5], (1, 5))
    assert 1 <= six["low"] < six["value"] and six["high"] == 5


@pytest.mark.parametrize("n", [3, 5])
def test_a_correlation_over_few_items_has_no_interval(n):
    """Five items gave `0.935 [0.935, 0.935]`: their bootstrap drew the same few orders again and again."""
    predicted, human = np.arange(n, dtype=float), np.array([0, 2, 1, 4, 3][:n], dtype=float)
    for kind, figure in pooled(predicted, human).items():
        assert figure["value"] is not None and figure["low"] is None and figure["high"] is None, kind
        assert figure["method"] == f"pooled; too few items (n={n}) to tell"
    rng = np.random.default_rng(0)
    many = rng.integers(1, 6, 40).astype(float)
    assert all(f["low"] < f["high"] for f in pooled(many, many + rng.normal(0, 1, 40)).values())


def labelled(score: float, label: str) -> LabelledGrade:
    dimensions = ("completeness", "context_independence", "technical_accuracy")
    s = round(score)
    return LabelledGrade.model_validate({
        "scores": dict.fromkeys(dimensions, s), "grade": "high", "judge_grade": "high", "grade_disagrees": False,
        "avg_score": score, "label": label,
        "evaluation": {d: {"score": s, "reasoning": "r"} for d in dimensions} | {"overall_quality": "high"}})


def test_qa_agreement_over_five_labelled_pairs_has_no_interval():
    graded = [labelled(4.5, "Good"), labelled(3.0, "PotentiallyUseful"), labelled(1.5, "Bad"),
              labelled(4.0, "Good"), labelled(2.5, "Bad")]
    out = agreement_with_labels("semeval", graded)
    assert out is not None and out.spearman_avg_score_vs_label.value > 0
    assert out.spearman_avg_score_vs_label.low is None
    assert "too few items (n=5) to tell" in out.spearman_avg_score_vs_label.method
    assert out.remove_recall_of_bad.low is None  # a rate over two pairs


def battle(i: int, a: str, b: str, winner: str):
    return ARENA.typed({"case_id": f"q{i}", "family": "arena", "kind": "battle", "judge": {"provider": "openai:j"},
                        "result": {"winner": winner}, "attributes": {
                            "dataset": "mine", "question": f"q{i}", "question_index": i, "model_a": a,
                            "model_b": b, "experiment": "default", "answer_a": "x", "answer_b": "y"}})


def test_ratings_from_four_games_have_no_interval():
    few = leaderboard([battle(i, "m1", "m2", w) for i, w in enumerate(["model_a", "model_a", "model_b", "tie"])])
    for board in (few.rating, few.elo, few.rank):
        assert all(m.low is None and "too few items (n=4) to tell" in m.method for m in board.values())
    outcomes = ["model_a", "model_b", "model_a", "tie", "model_a"] * 8
    many = leaderboard([battle(i, "m1", "m2", w) for i, w in enumerate(outcomes)])
    assert all(m.low is not None and m.low < m.high for m in many.rating.values())
    always = leaderboard([battle(i, "m1", "m2", "model_a") for i in range(40)])
    assert (always.rank["m1"].low, always.rank["m1"].high) == (1, 1)  # first in every resample: a finding


SUMMARY = summary_of({"custom": {"mean": {"value": 4.0, "low": None, "high": None, "n": 3,
                                          "method": "mean; too few items (n=3) to tell"}}})


def test_a_bound_gate_on_a_figure_with_no_interval_is_inconclusive_not_passed():
    result = Gate.parse("custom.mean.low>=3").check(SUMMARY)
    assert result.status == "inconclusive" and "no interval, so no low bound" in result.reason
    decided = Gate.parse("custom.mean.low>=3").check(SUMMARY, uncertain="pass")
    assert (decided.status, decided.decided_by) == ("pass", "value")
    assert Gate.parse("custom.mean.high<=3").check(SUMMARY, uncertain="pass").status == "fail"


OWN_EVAL = """
import llmjury
from llmjury import Case


@llmjury.parametrize([Case(id=f"q{i}", family="answers") for i in range(3)])
async def test_answer(case, jury):
    graded = await jury.score("an answer", rubric="5: correct; 1: wrong", question="hello " + case.id)
    assert graded.score is not None, graded.error
"""


def test_every_report_says_a_mean_over_three_items_is_too_few_to_tell(pytester, tmp_path):
    scores = iter([2, 4, 5] * 3)

    def reply(body: dict, index: int) -> str:
        return json.dumps({"score": next(scores), "reasoning": "fine"})

    pytester.makeini("[pytest]\naddopts = -p no:deepeval -p no:asyncio -p no:benchmark\n")
    pytester.makepyfile(test_own_eval=OWN_EVAL)
    with FakeOpenAI(reply) as server:
        result = pytester.runpytest_inprocess("-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                                              "--llm-judge", f"openai:m;base_url={server.base_url}",
                                              "--llm-cache", "off", "--llm-reports", str(tmp_path / "reports"))
    result.assert_outcomes(passed=3)
    (folder,) = [p for p in (tmp_path / "reports").iterdir() if p.name != "latest"]
    summary = json.loads((folder / "summary.json").read_text())
    means = [m for m in _metrics(summary) if m["method"].startswith("mean")]
    assert means and all(m["low"] is None and m["method"] == "mean; too few items (n=3) to tell" for m in means)
    for name in ("summary.md", "report.html"):
        assert "too few items (n=3) to tell" in (folder / name).read_text(), name


def _metrics(node: object) -> list[dict]:
    if isinstance(node, dict):
        if "value" in node and "method" in node:
            return [node]
        return [m for value in node.values() for m in _metrics(value)]
    if isinstance(node, list):
        return [m for value in node for m in _metrics(value)]
    return []


def test_a_printed_figure_without_its_interval_says_why():
    """summary.md and the terminal printed a correlation over 3 items as a bare value, the reason only
    in the method column."""
    from llmjury.results.decision import metric_text

    assert metric_text(metric(0.5, 0.1, 0.9, 3, "pearson")) == "0.5 [too few to tell]"
    assert metric_text(metric(0.5, 0.5, 0.5, 30, "bootstrap")) == "0.5 [no interval]"
    assert metric_text(metric(0.5, 0.1, 0.9, 30, "pearson")) == "0.5 [0.1, 0.9]"
