"""Estimated cost of tokens, from a price table (dollars per million tokens)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from llmjury.errors import ConfigError

BUNDLED_PRICES = Path(__file__).with_name("data") / "prices.toml"


@dataclass(frozen=True)
class Price:
    input: float
    output: float


class PriceTable:
    def __init__(self, prices: dict[str, Price]) -> None:
        self.prices = prices

    @classmethod
    def load(cls, override: Path | None = None) -> PriceTable:
        """The bundled table, updated by `override` (same TOML shape) when given."""
        prices: dict[str, Price] = {}
        for path in [BUNDLED_PRICES, *([override] if override else [])]:
            try:
                models = tomllib.loads(path.read_text(encoding="utf-8")).get("models", {})
                for model, row in models.items():
                    prices[model] = Price(input=float(row["input"]), output=float(row["output"]))
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
