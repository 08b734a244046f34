"""Position consistency counts cases, not pairs of runs: runs ABA give two swapped pairs sharing a run."""

from __future__ import annotations

import pytest

from llmjury.families.socratic.report import position_consistency
from llmjury.families.socratic.results import JudgedPair, JudgeRun


def pair(*preferred: str) -> JudgedPair:
    """One case judged in runs A, B, A... with the side each run preferred."""
    runs = [JudgeRun(ours_position="AB"[i % 2], decision=None, juror="j", preferred=side, error=None, attempts=1)
            for i, side in enumerate(preferred)]
    return JudgedPair(runs=runs)


def test_aba_runs_give_one_value_per_case_and_an_interval_over_cases():
    """Before: 20 cases of runs ABA counted as 40 pairs (n=40, a Wilson interval as if independent)."""
    cases = [pair("ours", "ours", "ours")] * 12 + [pair("ours", "baseline", "ours")] * 4 + \
        [pair("ours", "ours", "baseline")] * 4
    figure = position_consistency(cases)
    assert figure.n == 20
    assert figure.value == pytest.approx((12 + 4 * 0.5) / 20)  # each ABA case with one flip agrees in half its pairs
    assert "mean of per-case rates" in figure.method and figure.low < figure.value < figure.high


def test_ab_runs_give_a_wilson_interval_over_cases():
    figure = position_consistency([pair("ours", "ours")] * 7 + [pair("ours", "baseline")] * 3)
    assert (figure.value, figure.n, figure.method) == (0.7, 10, "wilson")
