"""A toy suite for long-run tests: 12 cases, one judge call each, on a model priced at $1 a token.

The fake server counts "hello NN" as 2 prompt tokens and "reply 0" as 2 completion tokens, so
every call costs exactly $4. A refused or failed call ends its case unscored, as families do."""

from __future__ import annotations

import json

import pytest

TOY = """
import llmjury
from llmjury import Case, JudgeConfig, Outcome, Verdict
from llmjury.chat import chat
from llmjury.errors import ProviderError


async def judge(case, jury):
    try:
        completion = await jury.complete("judge", "toy", chat(("user", "hello " + case.id[-2:])))
    except ProviderError as exc:
        return Outcome([Verdict(case_id=case.id, family="toy", judge=JudgeConfig(provider="openai:priced"),
                                valid=False, error=f"call failed: {exc}")])
    return Outcome([Verdict(case_id=case.id, family="toy", judge=JudgeConfig(provider=completion.provider))])


@llmjury.pipeline(judge)
@llmjury.parametrize([Case(id=f"item-{i:02d}", family="toy") for i in range(12)])
def test_toy(outcome):
    assert len(outcome.verdicts) == 1
"""
INI = """
[pytest]
addopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider -p no:randomly
"""
#: The own eval as docs/tutorial/first-own-eval.md writes it: the candidate asked, its answer scored, asserted on.
OWN_EVAL = """
import llmjury
from llmjury import Case


@llmjury.parametrize([Case(id=f"q{i:02d}", family="answers") for i in range(12)])
async def test_answer(case, jury):
    answer = await jury.ask("candidate", "hello " + case.id[-2:])
    graded = await jury.score(answer, rubric="5: correct; 1: wrong", question="hello")
    assert graded.score >= 3, graded.error or f"scored {graded.score}"
"""
PRICES = '[models."priced"]\ninput = 1000000\noutput = 1000000\n'
CASES, CALL_USD = 12, 4.0


def scoring_reply(body: dict, index: int) -> str:
    """The fake server's answers to OWN_EVAL: a score of 4 when asked for structured output."""
    if body.get("response_format"):
        return json.dumps({"score": 4, "reasoning": "fine"})
    return "answer to " + body["messages"][-1]["content"]


def write_toy(pytester: pytest.Pytester) -> pytest.Pytester:
    """The toy suite, its ini and its price table in pytester's folder."""
    pytester.makeini(INI + "llm_prices = prices.toml\n")
    pytester.makefile(".toml", prices=PRICES)
    pytester.makepyfile(test_toy=TOY)
    return pytester
