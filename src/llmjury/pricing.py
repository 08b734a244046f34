"""Estimated cost of tokens, from a price table (dollars per million tokens), synchronous or batched."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llmjury.errors import ConfigError

BUNDLED_PRICES = Path(__file__).with_name("data") / "prices.toml"
#: The provider kinds whose APIs take batches (OpenAI's Batch API, Gemini's batch mode).
BATCH_KINDS = frozenset({"openai", "gemini"})


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    #: The batch rates (PriceTable.load fills them); None: no batch price is known.
    batch_input: float | None = None
    batch_output: float | None = None


class PriceTable:
    def __init__(self, prices: dict[str, Price]) -> None:
        self.prices = prices

    @classmethod
    def load(cls, override: Path | None = None) -> PriceTable:
        """The bundled table, updated by `override` (same TOML shape) when given. A row's batch rates
        are its `batch_input`/`batch_output` when it sets them, else its synchronous rates times the
        `batch_discount` of its file (or, when its file sets none, of the bundled table: 0.5)."""
        prices: dict[str, Price] = {}
        discount = 1.0
        for path in [BUNDLED_PRICES, *([override] if override else [])]:
            try:
                table = tomllib.loads(path.read_text(encoding="utf-8"))
                discount = _discount(table.get("batch_discount", discount))
                for model, row in table.get("models", {}).items():
                    prices[model] = _price(row, discount)
            except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
                raise ConfigError(f"price table {path}: {exc}") from exc
        return cls(prices)

    def cost(self, provider: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        """Dollars for these tokens on `provider` (`kind:model`); 0 offline, None when unpriced."""
        kind, _, model = provider.partition(":")
        if kind == "offline":
            return 0.0
        price = self.prices.get(model)
        if price is None:
            return None
        return (prompt_tokens * price.input + completion_tokens * price.output) / 1_000_000

    def batch_cost(self, provider: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        """Dollars for these tokens sent through `provider`'s batch API; 0 offline, None when
        unpriced or when its kind has no batch API."""
        kind, _, model = provider.partition(":")
        if kind == "offline":
            return 0.0
        price = self.prices.get(model)
        if price is None or price.batch_input is None or price.batch_output is None or kind not in BATCH_KINDS:
            return None
        return (prompt_tokens * price.batch_input + completion_tokens * price.batch_output) / 1_000_000


def _discount(value: Any) -> float:
    discount = float(value)
    if not 0 < discount <= 1:
        raise ValueError(f"batch_discount = {value!r} must be above 0 and at most 1")
    return discount


def _price(row: dict[str, Any], discount: float) -> Price:
    sync_in, sync_out = float(row["input"]), float(row["output"])
    return Price(input=sync_in, output=sync_out,
                 batch_input=float(row.get("batch_input", sync_in * discount)),
                 batch_output=float(row.get("batch_output", sync_out * discount)))
