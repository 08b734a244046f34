"""How a metric's interval is made (llmjury.intervals): the kind a family declares decides it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from llmjury.errors import ConfigError
from llmjury.family import check_family
from llmjury.intervals import (
    case_rate,
    comparison_method,
    declared_kind,
    equal_groups,
    grouped_jackknife,
    normal_interval,
    percentile_interval,
)
from llmjury.stats import damped_newton


def test_the_most_specific_declared_path_decides_a_metrics_kind():
    kinds = {"judge_validity": "smooth", "judge_validity.*.spearman": "correlation", "rank": "rank"}
    assert declared_kind(kinds, ("judge_validity", "openai:x/summeval", "spearman")) == "correlation"
    assert declared_kind(kinds, ("judge_validity", "openai:x/summeval", "pearson")) == "smooth"
    assert declared_kind(kinds, ("rank", "gpt-4o")) == "rank"
    assert declared_kind(kinds, ("elo", "gpt-4o")) is None


@pytest.mark.parametrize(("kind", "per_case", "method"), [
    ("proportion", True, "paired"), ("rating", False, "jackknife"), ("correlation", False, "jackknife"),
    ("non_smooth", False, "none"), ("rank", False, "none"), (None, False, "none"), (None, True, "paired")])
def test_a_comparison_takes_the_method_its_kind_allows(kind, per_case, method):
    how, reason = comparison_method(kind, per_case)
    assert how == method and (reason is None) == (method != "none")


def test_with_equal_groups_the_weighted_jackknife_is_the_textbook_one():
    rng = np.random.default_rng(1)
    replicates = rng.normal(0.5, 0.01, 10)
    *_, se = grouped_jackknife(0.5, replicates, [4] * 10, 40)
    assert se == pytest.approx(np.sqrt(9 / 10 * ((replicates - replicates.mean()) ** 2).sum()))


def test_groups_of_unequal_size_are_weighted_by_the_cases_they_left_out():
    """For a mean of n unit-variance values the weighted delete-a-group variance is unbiased (1/n)
    whatever the group sizes; the equal-size formula on groups of 1, 19, 10 and 10 cases is not."""
    rng = np.random.default_rng(2)
    sizes = [1, 19, 10, 10]
    bounds = np.cumsum([0, *sizes])
    weighted, unweighted = [], []
    for _ in range(4000):
        values = rng.normal(0, 1, 40)
        replicates = np.array([np.delete(values, np.arange(a, b)).mean()
                               for a, b in itertools.pairwise(bounds)])
        weighted.append(grouped_jackknife(values.mean(), replicates, sizes, 40)[2] ** 2)
        unweighted.append(3 / 4 * ((replicates - replicates.mean()) ** 2).sum())
    assert np.mean(weighted) * 40 == pytest.approx(1.0, abs=0.05)
    assert abs(np.mean(unweighted) * 40 - 1.0) > 0.15


def test_equal_groups_differ_by_at_most_one_case():
    sizes = [len(g) for g in equal_groups(23, 10)]
    assert sum(sizes) == 23 and max(sizes) - min(sizes) <= 1 and len(sizes) == 10


def test_a_rate_of_correlated_units_is_a_mean_of_case_rates_with_a_case_level_interval():
    figure = case_rate([1.0, 0.5, 1.0, 0.0, 1.0, 0.5], "position consistency")
    assert figure["value"] == pytest.approx(4 / 6) and figure["n"] == 6
    assert 0 <= figure["low"] < figure["value"] < figure["high"] <= 1
    assert "mean of per-case rates" in figure["method"]
    assert case_rate([1.0, 1.0], "x")["low"] is None


def test_discrete_percentile_bounds_are_values_the_samples_hold():
    samples = np.array([[1, 1, 1, 2, 3, 1, 2, 1, 1, 1]]).T
    low, high = percentile_interval(samples, discrete=True)
    assert set(np.r_[low, high]) <= {1, 2, 3}


def test_a_family_declaring_an_unknown_kind_stops_at_start_up(monkeypatch):
    from llmjury.families.socratic import FAMILY

    monkeypatch.setattr(type(FAMILY), "interval_kinds", {"win_rate": "ratio"})
    with pytest.raises(ConfigError, match=r"interval_kinds\['win_rate'\]: 'ratio' is not a kind of metric"):
        check_family(FAMILY, "socratic")


def test_the_solver_never_keeps_a_step_its_line_search_refused(monkeypatch):
    """A step no halving makes descend leaves the row where it was, with the loss it has there; the
    copies this solver replaced took the last, refused step and kept the loss of the one before."""
    from llmjury import stats

    monkeypatch.setattr(stats, "HALVINGS", 10)  # every trial step still moves the row
    start = np.array([[1.0, -2.0], [0.5, 0.5]])

    def loss(x, rows):  # any move at all costs 1, more than the slope can pay back
        return (x ** 2).sum(axis=1) + 100.0 * np.any(x != start[rows], axis=1)

    def newton(x, rows):
        return 2 * x, x

    fitted = damped_newton(start, loss, newton, lambda step, x: np.zeros(len(x), dtype=bool), max_steps=5)
    assert fitted is not None and np.array_equal(fitted, start)


def test_a_normal_interval_is_placed_on_the_point_with_the_replicates_spread():
    samples = np.random.default_rng(3).normal(0, 10, (4000, 2))
    low, high = normal_interval(np.array([1000.0, 900.0]), samples)
    assert (high - low) == pytest.approx(2 * 1.96 * 10, rel=0.05)
    assert (low + high) / 2 == pytest.approx([1000.0, 900.0])
