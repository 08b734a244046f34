"""Reading arena judges: seed 002's score lines and MT-Bench's `[[A]]`/`[[B]]`/`[[C]]`."""

from __future__ import annotations

import re
from collections import Counter

from llmjury.decision_line import BOLD, compile_line, fold, looks_alike, own_lines
from llmjury.errors import JudgeParseError
from llmjury.majority import Majority
from llmjury.running.decision_field import DecisionField

SCORE_PARSER = "arena-score/3"
PAIR_PARSER = "mtbench-pair/3"
#: What each reader asks for when an answer holds no readable decision (the repair call).
SCORE_FORMAT = "- Score of Model 1: <0 or 1>\n- Score of Model 2: <0 or 1>"
PAIR_FORMAT = "[[A]]\nor\n[[B]]\nor\n[[C]]"
_SCORE_LINE = compile_line(rf"score\s+of\s+model\s*(?P<model>[12])\s*{BOLD}\s*:\s*{BOLD}\s*(?P<score>[01])")
_SCORE_ANYWHERE = re.compile(r"score\s+of\s+model\s*[12]\s*[*_]*\s*[:=]\s*[*_]*\s*\d", re.IGNORECASE)
_VERDICT_LAST = re.compile(rf"\[\[(?P<verdict>[ABC])\]\][ \t]*{BOLD}[ \t]*\.?[ \t]*{BOLD}[ \t]*$")
_VERDICT_SHAPED = re.compile(r"\[\[\s*\w{1,10}\s*\]\]|\[\s*\[\s*[ABC]\s*\]\s*\]", re.IGNORECASE)


def parse_scores(text: str) -> tuple[int, int]:
    """`- Score of Model 1: 0` / `- Score of Model 2: 1` → (0, 1). The prompt asks for exactly
    its format, score lines first: the first two lines of the judge's own words (quotations
    blanked) must be Model 1's and Model 2's score lines, nothing else on them; a score line,
    or a `Score of Model N: x` mention, anywhere else in the answer is ambiguous, never a guess."""
    lines = own_lines(text)
    if len(lines) < 2:
        raise _score_error(text, "no 'Score of Model 1/2: 0|1' lines first")
    found = [_SCORE_LINE.match(line.text) for line in lines[:2]]
    if not all(found) or [m.group("model") for m in found if m] != ["1", "2"]:
        shown = lines[0].text if not found[0] else lines[1].text
        cause = "look-alike characters on a score line" if looks_alike(shown) else (
            f"the answer does not open with Model 1's and Model 2's score lines ({shown.strip()[:80]!r})")
        raise _score_error(text, cause)
    for line in lines[2:]:
        if _SCORE_ANYWHERE.search(fold(line.text)):
            raise _score_error(text, f"a second score line {line.text.strip()[:80]!r}")
    return int(found[0].group("score")), int(found[1].group("score"))  # type: ignore[union-attr]


def _score_error(text: str, cause: str) -> JudgeParseError:
    return JudgeParseError(SCORE_PARSER, text, cause, expected=SCORE_FORMAT)


def winner_from_scores(first: int, second: int) -> str:
    """1-0 → model_a, 0-1 → model_b, 1-1 → tie, 0-0 → tie (bothbad)."""
    if first != second:
        return "model_a" if first > second else "model_b"
    return "tie" if first else "tie (bothbad)"


def parse_pair(text: str) -> str:
    """MT-Bench pair-v2: the `[[A]]`, `[[B]]` or `[[C]]` that ends the judge's own words
    (quotations blanked; the prompt asks for the verdict after the explanation, so prose may stand
    before it on that line) → model_a, model_b or tie. Any other `[[X]]` in the answer, a
    look-alike letter, or text after the verdict is ambiguous, never a guess."""
    lines = own_lines(text)
    last = lines[-1].text if lines else ""
    match = _VERDICT_LAST.search(last)
    if match is None:
        cause = "look-alike characters in the verdict" if looks_alike(last) else (
            f"the answer does not end with [[A]], [[B]] or [[C]] ({last.strip()[-80:]!r})")
        raise JudgeParseError(PAIR_PARSER, text, cause, expected=PAIR_FORMAT)
    before = "\n".join(line.text for line in lines[:-1]) + "\n" + last[:match.start()]
    shaped = _VERDICT_SHAPED.search(fold(before))
    if shaped:
        raise JudgeParseError(PAIR_PARSER, text, f"a second verdict {shaped.group(0)!r} in the answer",
                              expected=PAIR_FORMAT)
    return {"A": "model_a", "B": "model_b", "C": "tie"}[match.group("verdict")]


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
