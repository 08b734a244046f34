"""A run's spending cap (`--llm-budget USD`): which calls count as paid, what each cost, and when
no new paid call may start.

The spend is an estimate from the price table (`pricing.py`) and each call's token usage; the
run's total is summed across xdist workers through the run board (`progress.py`). A model the
table does not price is unknown cost: the budget refuses to start unless told to count it as
$0 (`--llm-budget-unknown allow`) or given its price (`llm_prices`). Calls answered by the cache
or the offline heuristics cost nothing and are never refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from llmjury.errors import ConfigError, PermanentProviderError
from llmjury.jurors import JurySpec
from llmjury.pricing import PriceTable

#: The cause an unscored verdict's error starts with when the budget refused its call; reports
#: count such verdicts under this cause whatever text a family wraps around the error.
BUDGET_CAUSE = "budget"
BUDGET_MARK = f"{BUDGET_CAUSE}: the run's budget"
UNKNOWN_POLICIES = ("refuse", "allow")


class BudgetExhaustedError(PermanentProviderError):
    """A paid call the budget refused: never retried, never cached, and its case ends unscored."""

    def __init__(self, provider: str, reason: str) -> None:
        super().__init__(provider, reason)
        # The text reads from the cause, not the provider, so `call failed: budget: ...` says why first.
        self.args = (f"{BUDGET_MARK} {reason}; {provider} not called",)


_NOT_CALLED = re.compile(r"; (\S+) not called")


def refused_by_budget(error: str | None) -> bool:
    """Whether an unscored verdict's error text is a call the budget refused."""
    return bool(error) and BUDGET_MARK in str(error)


def refused_provider(error: str) -> str | None:
    """The provider a refusal's text names (`...; openai:gpt-4o-mini not called`), if any."""
    found = _NOT_CALLED.search(error)
    return found[1] if found else None


@dataclass
class Budget:
    """The cap and how to price calls against it; `option` is where the cap came from (for messages)."""

    limit_usd: float
    prices: PriceTable
    unknown: str = "refuse"
    option: str = "--llm-budget"
    _rates: dict[str, tuple[float, float] | None] = field(default_factory=dict, repr=False)

    def check_models(self, specs: Iterable[JurySpec]) -> None:
        """Every model the run may call has a price, or unknown cost is allowed: else a ConfigError
        naming the model and the option, before any call is made."""
        if self.unknown == "allow":
            return
        for spec in specs:
            for juror in spec.jurors:
                parsed = juror.spec
                if self.rate(str(parsed)) is None:
                    raise ConfigError(
                        f"{self.option} {self.limit_usd:g}: no price for model {parsed.model!r} ({parsed}); add it "
                        "to the llm_prices table or pass --llm-budget-unknown allow to count it as $0")

    def rate(self, provider: str) -> tuple[float, float] | None:
        """Dollars per prompt and per completion token for `provider`; None when unpriced."""
        if provider not in self._rates:
            self._rates[provider] = token_rate(self.prices, provider)
        return self._rates[provider]

    def free(self, provider: str) -> bool:
        """Known to cost nothing (offline heuristics, a model priced at 0): never refused."""
        return self.rate(provider) == (0.0, 0.0)

    def refusal(self, provider: str, spent_usd: float) -> BudgetExhaustedError | None:
        """Why a paid call to `provider` may not start now that the run spent `spent_usd`, or None."""
        if self.free(provider):
            return None
        if self.rate(provider) is None and self.unknown != "allow":
            return BudgetExhaustedError(provider, f"refuses a model with no price ({provider})")
        if spent_usd >= self.limit_usd:
            return BudgetExhaustedError(
                provider, f"of ${self.limit_usd:g} is spent (estimated ${spent_usd:.4g})")
        return None


def token_rate(prices: PriceTable, provider: str) -> tuple[float, float] | None:
    """Dollars per prompt token and per completion token for `provider` (`kind:model`), from the
    price table; None when the table does not price it."""
    per_prompt, per_completion = prices.cost(provider, 1, 0), prices.cost(provider, 0, 1)
    return None if per_prompt is None or per_completion is None else (per_prompt, per_completion)


def price_of(rate: tuple[float, float] | None, prompt_tokens: int, completion_tokens: int) -> float:
    """A call's estimated dollars; an unpriced call counts as 0 (the budget said it may)."""
    return 0.0 if rate is None else prompt_tokens * rate[0] + completion_tokens * rate[1]


def budget_facts(budget: Budget, spent_usd: float, refused_calls: int, unpriced: Sequence[str],
                 records: Sequence[dict[str, Any]], group: tuple[str, float] | None = None) -> dict[str, Any]:
    """What the run's summary says about the budget: the cap, the estimated spend, whether it
    stopped the run, and how many verdicts and cases it left unscored; with a run `group` (its name
    and the spend of all its runs), the group's spend, which is what the cap holds."""
    refused = [r for r in records if not r.get("valid", True) and refused_by_budget(r.get("error"))]
    cases = sorted({f"{r.get('family')}::{r.get('case_id')}" for r in refused})
    stopped = refused_calls > 0 or bool(refused)
    facts: dict[str, Any] = {
        "limit_usd": budget.limit_usd, "spent_usd": round(spent_usd, 6), "stopped": stopped,
        "refused_calls": refused_calls, "unscored_verdicts": len(refused), "unscored_cases": len(cases),
        "unknown_cost": budget.unknown, "unpriced": sorted(unpriced),
    }
    spend = f"estimated spend ${spent_usd:.4g}"
    if group is not None:
        facts["run_group"], facts["group_spent_usd"] = group[0], round(group[1], 6)
        spend = f"run group {group[0]}'s estimated spend ${group[1]:.4g} (this run's ${spent_usd:.4g})"
    facts["note"] = (
        f"The budget (${budget.limit_usd:g}) stopped the run: {spend}; "
        f"{refused_calls} paid call(s) not made, {len(cases)} case(s) left unscored (cause: {BUDGET_CAUSE})."
        if stopped else f"Budget ${budget.limit_usd:g}: {spend}, not reached.")
    return facts

