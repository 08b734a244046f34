"""Reading arena judges: seed 002's score lines and MT-Bench's `[[A]]`/`[[B]]`/`[[C]]`."""

from __future__ import annotations

from collections import Counter

from llmjury.asked import Asked
from llmjury.majority import Majority
from llmjury.reading.choice import Choice, Option
from llmjury.reading.score_pair import ScorePair
from llmjury.running.decision_field import DecisionField

SCORE_PARSER = "arena-score/5"
PAIR_PARSER = "mtbench-pair/5"
#: What each reader asks for when an answer holds no readable decision (the repair call).
SCORE_FORMAT = Asked(form=("- Score of Model 1:", "- Score of Model 2:"), scale=(0, 1))
PAIR_FORMAT = Asked(alternatives=("[[A]]", "[[B]]", "[[C]]"))
#: Seed 002's two score lines, 0 or 1 each (`llmjury.reading.score_pair`).
SCORES = ScorePair(SCORE_PARSER, role="model", scale=range(0, 2), expected=SCORE_FORMAT)
#: MT-Bench pair-v2's verdicts in double brackets (`llmjury.reading.choice`).
PAIR_CHOICE = Choice(PAIR_PARSER, (Option("model_a", ("A",)), Option("model_b", ("B",)), Option("tie", ("C", "tie"))),
                     marker="[[]]", expected=PAIR_FORMAT, ties=frozenset({"tie"}))


def parse_scores(text: str) -> tuple[int, int]:
    """`- Score of Model 1: 0` / `- Score of Model 2: 1` → (0, 1): each model's own final score line,
    0 or 1 (see `llmjury.reading.score_pair`)."""
    return SCORES.read(text)


def winner_from_scores(first: int, second: int) -> str:
    """1-0 → model_a, 0-1 → model_b, 1-1 → tie, 0-0 → tie (bothbad)."""
    if first != second:
        return "model_a" if first > second else "model_b"
    return "tie" if first else "tie (bothbad)"


def parse_pair(text: str) -> str:
    """MT-Bench pair-v2: the judge's own final `[[A]]`, `[[B]]` or `[[C]]` → model_a, model_b or tie
    (see `llmjury.reading.choice`: another `[[X]]` that competes with it is ambiguous)."""
    return PAIR_CHOICE.read(text)


def read_scores(text: str) -> str:
    """Seed 002's judge answer as an outcome: its score lines, then `winner_from_scores`."""
    return winner_from_scores(*parse_scores(text))


#: The outcomes the readers return, by the slot each favours (0: the answer shown first), or as
#: themselves for a tie, which reads the same in either order.
OUTCOME_LABELS: dict[str, int | str] = {"model_a": 0, "model_b": 1, "tie": "tie", "tie (bothbad)": "tie (bothbad)"}


#: Each reader's decisions as a schema field (llmjury.running.decision_field), in its prompt's own words:
#: the four pairs of score lines seed 002's prompt allows, and MT-Bench's three verdicts.
SCORE_FIELD = DecisionField({"Score of Model 1: 1, Score of Model 2: 0": "model_a",
                             "Score of Model 1: 0, Score of Model 2: 1": "model_b",
                             "Score of Model 1: 1, Score of Model 2: 1": "tie",
                             "Score of Model 1: 0, Score of Model 2: 0": "tie (bothbad)"}, SCORE_PARSER)
PAIR_FIELD = DecisionField({"[[A]]": "model_a", "[[B]]": "model_b", "[[C]]": "tie"}, PAIR_PARSER)


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
