"""Reading arena judges: seed 002's score lines and MT-Bench's `[[A]]`/`[[B]]`/`[[C]]`."""

from __future__ import annotations

import re
from collections import Counter

from llmjury.errors import JudgeParseError
from llmjury.majority import Majority
from llmjury.quotes import unquoted

SCORE_PARSER = "arena-score/2"
PAIR_PARSER = "mtbench-pair/2"
_SCORE = re.compile(r"score\s+of\s+model\s*([12])\s*[:=]\s*\**\s*([01])\b", re.IGNORECASE)
_VERDICT = re.compile(r"\[\[\s*([ABC])\s*\]\]")


def parse_scores(text: str) -> tuple[int, int]:
    """`- Score of Model 1: 0` / `- Score of Model 2: 1` → (0, 1). The prompt asks for the score
    block first, then the explanation: the first line for each model counts, and quoted text (an
    answer the judge quotes, fake score lines and all) is not read."""
    found: dict[str, int] = {}
    for model, score in _SCORE.findall(unquoted(text)):
        found.setdefault(model, int(score))
    if set(found) != {"1", "2"}:
        raise JudgeParseError(SCORE_PARSER, text, "no 'Score of Model 1/2: 0|1' lines for both models")
    return found["1"], found["2"]


def winner_from_scores(first: int, second: int) -> str:
    """1-0 → model_a, 0-1 → model_b, 1-1 → tie, 0-0 → tie (bothbad)."""
    if first != second:
        return "model_a" if first > second else "model_b"
    return "tie" if first else "tie (bothbad)"


def parse_pair(text: str) -> str:
    """MT-Bench pair-v2: the last `[[A]]`, `[[B]]` or `[[C]]` outside quotations → model_a,
    model_b or tie (the prompt asks for the verdict at the end)."""
    found = _VERDICT.findall(unquoted(text))
    if not found:
        raise JudgeParseError(PAIR_PARSER, text, "no [[A]], [[B]] or [[C]] verdict")
    return {"A": "model_a", "B": "model_b", "C": "tie"}[found[-1]]


def read_scores(text: str) -> str:
    """Seed 002's judge answer as an outcome: its score lines, then `winner_from_scores`."""
    return winner_from_scores(*parse_scores(text))


#: The outcomes the readers return, by the slot each favours (0: the answer shown first), or as
#: themselves for a tie, which reads the same in either order.
OUTCOME_LABELS: dict[str, int | str] = {"model_a": 0, "model_b": 1, "tie": "tie", "tie (bothbad)": "tie (bothbad)"}


def agreed_or_tie(winners: list[str]) -> Majority | None:
    """MT-Bench's rule for one judge's runs on a pair (both orders): the winner when every counted
    run names it, else a tie; None when no run counted."""
    if not winners:
        return None
    counts = Counter(winners)
    if len(counts) == 1:
        return Majority(winners[0], "unanimous", len(winners), dict(counts))
    return Majority("tie", "no_consensus", len(winners), dict(counts))


def score_text(winner: str) -> str:
    """seed 002's `gpt_4_score` column for an outcome: `{'model_a': '1', 'model_b': '0'}`."""
    a, b = {"model_a": (1, 0), "model_b": (0, 1), "tie": (1, 1), "tie (bothbad)": (0, 0)}[winner]
    return str({"model_a": str(a), "model_b": str(b)})
