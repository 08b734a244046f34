"""The price table's synchronous and batch rates, and an `llm_prices` file overriding either."""

from __future__ import annotations

import pytest

from llmjury.errors import ConfigError
from llmjury.pricing import Price, PriceTable


def test_a_batched_call_costs_half_the_synchronous_price_on_openai_and_gemini():
    table = PriceTable.load()
    for provider in ("openai:gpt-4o-mini", "openai:gpt-4o", "gemini:gemini-2.0-flash", "gemini:gemini-2.5-flash"):
        synchronous = table.cost(provider, 1_000, 500)
        assert synchronous is not None and synchronous > 0
        assert table.batch_cost(provider, 1_000, 500) == pytest.approx(synchronous / 2)


def test_gpt_4o_mini_batched_at_its_published_batch_rates():
    # $0.075 per million prompt tokens, $0.30 per million completion tokens
    assert PriceTable.load().batch_cost("openai:gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.375)


def test_no_batch_price_for_an_unpriced_model_or_a_kind_without_a_batch_api():
    table = PriceTable.load()
    assert table.batch_cost("openai:llama3", 10, 10) is None
    assert table.batch_cost("http:gpt-4o-mini", 10, 10) is None
    assert table.batch_cost("offline:heuristic", 10, 10) == 0.0


def test_a_price_built_without_batch_rates_has_no_batch_price():
    assert PriceTable({"m": Price(input=1, output=1)}).batch_cost("openai:m", 10, 10) is None


def test_an_override_row_sets_its_own_batch_rates(tmp_path):
    path = tmp_path / "prices.toml"
    path.write_text('[models."gpt-4o-mini"]\ninput = 0.15\noutput = 0.60\nbatch_input = 0.1\nbatch_output = 0.2\n')
    table = PriceTable.load(path)
    assert table.batch_cost("openai:gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.3)
    assert table.cost("openai:gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.75)


def test_an_override_files_discount_applies_to_its_own_rows_only(tmp_path):
    path = tmp_path / "prices.toml"
    path.write_text('batch_discount = 0.25\n[models.llama3]\ninput = 4.0\noutput = 8.0\n')
    table = PriceTable.load(path)
    assert table.batch_cost("openai:llama3", 1_000_000, 1_000_000) == pytest.approx(3.0)
    assert table.batch_cost("openai:gpt-4o", 1_000_000, 0) == pytest.approx(1.25)  # the bundled row: still half


@pytest.mark.parametrize("discount", ["0", "1.5", "-0.5"])
def test_a_discount_outside_0_to_1_is_refused_naming_the_file(tmp_path, discount):
    path = tmp_path / "prices.toml"
    path.write_text(f"batch_discount = {discount}\n")
    with pytest.raises(ConfigError, match=rf"price table {path}: batch_discount = .* must be above 0 and at most 1"):
        PriceTable.load(path)


def test_a_batch_rate_that_is_not_a_number_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "prices.toml"
    path.write_text('[models.m]\ninput = 1\noutput = 1\nbatch_input = "cheap"\n')
    with pytest.raises(ConfigError, match=str(path)):
        PriceTable.load(path)
