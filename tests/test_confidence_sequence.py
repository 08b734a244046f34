"""The betting confidence sequence behind --llm-sequential: it covers the mean at every look at once
(on seeded simulations), its width never grows, it is valid at a data-dependent stopping time, and
values outside their scale are refused."""

from __future__ import annotations

import numpy as np
import pytest

from llmjury.sequential.confidence import betting_bounds, confidence_sequence
from llmjury.sequential.decide import decided
from llmjury.sequential.order import batches, in_seeded_order


@pytest.mark.parametrize("mean", [0.1, 0.5, 0.8])
def test_the_sequence_covers_a_bernoulli_mean_at_every_look_at_once_in_at_least_95_percent_of_runs(mean):
    rng = np.random.default_rng(7)
    x = (rng.random((200, 150)) < mean).astype(float)
    low, high = betting_bounds(x, 0.05, 201)
    ever_missed = ((low > mean) | (high < mean)).any(axis=1).mean()
    assert ever_missed <= 0.05


def test_the_sequence_covers_a_bounded_continuous_mean_uniformly():
    rng = np.random.default_rng(11)
    x = rng.beta(2, 5, (200, 150))  # mean 2/7
    low, high = betting_bounds(x, 0.05, 201)
    assert ((low > 2 / 7) | (high < 2 / 7)).any(axis=1).mean() <= 0.05


def test_its_width_never_grows_and_shrinks_with_data():
    rng = np.random.default_rng(3)
    sequence = confidence_sequence(rng.integers(1, 6, 500), (1, 5))
    width = sequence.high - sequence.low
    assert (np.diff(width) <= 1e-12).all()
    assert width[-1] < width[19] / 2
    assert (sequence.low >= 1).all() and (sequence.high <= 5).all()


def test_stopping_at_the_first_look_that_excludes_the_truth_errs_rarely():
    """Validity at a stopping time chosen from the data: a fixed-n interval peeked at after every
    batch errs far more often than its level; the sequence does not."""
    rng = np.random.default_rng(5)
    truth = 0.5
    x = (rng.random((300, 200)) < truth).astype(float)
    looks = np.arange(10, 201, 10)
    low, high = betting_bounds(x, 0.05, 201, looks)
    stopped_wrong = ((low > truth) | (high < truth)).any(axis=1).mean()
    t = looks[None, :]
    means = np.cumsum(x, axis=1)[:, looks - 1] / t
    half = 1.96 * np.sqrt(means * (1 - means) / t)
    peeked_wrong = ((means - half > truth) | (means + half < truth)).any(axis=1).mean()
    assert stopped_wrong <= 0.05 < peeked_wrong


def test_a_value_outside_its_scale_is_refused_with_the_value_and_its_place():
    with pytest.raises(ValueError, match=r"value 6 \(at 2\) lies outside the scale \[1, 5\]"):
        confidence_sequence(np.array([1, 2, 6]), (1, 5))


def test_a_gate_is_decided_only_when_the_whole_interval_settles_it():
    assert decided(">=", 0.0, 0.01, 0.2) == "pass"
    assert decided(">=", 0.0, -0.3, -0.01) == "fail"
    assert decided(">=", 0.0, -0.1, 0.1) is None
    assert decided("<=", 0.1, 0.0, 0.05) == "pass"
    assert decided("==", 0.5, 0.6, 0.7) == "fail" and decided("==", 0.5, 0.4, 0.7) is None


def test_the_seeded_order_is_the_same_for_any_input_order_and_changes_with_the_seed():
    ids = [f"c{i}" for i in range(50)]
    assert in_seeded_order(ids, 1) == in_seeded_order(reversed(ids), 1)
    assert in_seeded_order(ids, 1) != in_seeded_order(ids, 2)
    cut = batches(ids, 1, 20)
    assert [len(b) for b in cut] == [20, 20, 10] and [c for b in cut for c in b] == in_seeded_order(ids, 1)
