"""Every correlation view keeps one minimum and one resample count (llmjury.intervals)."""

from __future__ import annotations

import numpy as np
import pytest

from llmjury.correlation import MIN_CORRELATION_N
from llmjury.families.geval.meta import RESAMPLES, evaluate
from llmjury.intervals import CORRELATION_RESAMPLES


def scored(items: int, systems: int, contexts: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, items).astype(float)
    predicted = human + rng.normal(0, 1, items)
    return predicted, human, [f"c{i % contexts}" for i in range(items)], [f"s{i % systems}" for i in range(items)]


def test_a_system_level_correlation_from_a_handful_of_systems_says_too_few_to_tell():
    """Before: 3-11 systems printed a bare coefficient, with no interval and no word about it."""
    predicted, human, contexts, systems = scored(120, 5, 40)
    level = evaluate(predicted, human, contexts, systems).system_level
    assert level is not None and level.spearman.value is not None
    assert level.spearman.low is None and "too few items (n=5) to tell" in level.spearman.method


def test_a_system_level_correlation_from_enough_systems_gets_a_system_bootstrap():
    predicted, human, contexts, systems = scored(300, 12, 40)
    level = evaluate(predicted, human, contexts, systems).system_level
    assert level is not None and level.kendall.low is not None and "system bootstrap" in level.kendall.method


def test_per_context_correlations_use_the_pooled_minimum():
    """Before: an average over four contexts got a context-bootstrap interval; pooled needs ten items."""
    predicted, human, contexts, systems = scored(40, 2, 4)
    per = evaluate(predicted, human, contexts, systems).per_context
    assert per is not None and per.contexts_used == 4 < MIN_CORRELATION_N
    assert per.pearson.low is None and "too few" in per.pearson.method


def test_kendall_is_bootstrapped_with_as_many_resamples_as_pearson_and_spearman():
    predicted, human, contexts, systems = scored(60, 2, 60)
    pooled = evaluate(predicted, human, contexts, systems).pooled
    assert RESAMPLES == CORRELATION_RESAMPLES == 1000
    assert pooled is not None
    assert {m.method for m in (pooled.pearson, pooled.spearman, pooled.kendall)} == \
        {"pooled, item bootstrap (BCa, 1000 resamples)"}


def test_the_correlation_bootstrap_gives_the_same_figures_in_blocks_of_resamples(monkeypatch):
    predicted, human, contexts, systems = scored(300, 12, 30)
    whole = evaluate(predicted, human, contexts, systems)
    monkeypatch.setattr("llmjury.families.geval.meta.BLOCK_CELLS", 300 * 7)  # blocks of 7 resamples
    monkeypatch.setattr("llmjury.correlation.SIGN_CELLS", 300 * 11)  # pair signs 11 columns at a time
    assert evaluate(predicted, human, contexts, systems) == whole


def test_a_correlation_bootstrap_over_thousands_of_items_holds_a_bounded_block():
    """Before: 1,000 resamples of 4,000 items held 333 MB at once (every derived array was 1,000 x
    4,000, the pair signs 4,000 x 2,048); now about 80."""
    import tracemalloc

    from llmjury.families.geval.meta import pooled

    predicted, human, _, _ = scored(4000, 1, 1)
    tracemalloc.start()
    try:
        pooled(np.round(predicted), human)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 128e6


def test_each_resamples_kendall_is_scipys_on_the_items_it_draws():
    """A resample's Kendall comes from how often it draws each item (repeats counted)."""
    from scipy import stats

    from llmjury.families.geval import meta

    predicted, human, _, _ = scored(40, 4, 10)
    index = np.random.default_rng(8).integers(0, 40, size=(6, 40))
    drawn = meta._coefficients(predicted, human, index)["kendall"]
    for row, tau in zip(index, drawn, strict=True):
        assert tau == pytest.approx(stats.kendalltau(predicted[row], human[row]).statistic, abs=1e-12)
