"""Offline stand-in for the arena judges (seed score lines and MT-Bench `[[A]]`).

Each answer gets a quality score: the share of the question's content words it uses (x2), up to
1 point for length (log-scaled, full at about 300 words), half a point for structure (line breaks
or a list), minus 2 for refusal phrases ("I'm sorry", "as an AI", "I cannot"). The higher score
wins; within 0.15 it is a tie (both good when both score at least 1, else "both bad"). One answer
in ten is random, so the two orders sometimes disagree as a real judge's do.
"""

from __future__ import annotations

import math
import random
import re

from llmjury.chat import ChatRequest
from llmjury.providers.offline import OfflineAnswers

ANSWERS = OfflineAnswers()

REFUSALS = ("i'm sorry", "i am sorry", "as an ai", "i cannot", "i can't", "i am not able")
_SEED = re.compile(r"\[Question\]\n(?P<q>.*?)\n\n\[Model 1's Answer\]\n(?P<a>.*?)\n\n\[Model 2's Answer\]\n"
                   r"(?P<b>.*?)\n\nGive each model", re.DOTALL)
_PAIR = re.compile(r"\[User Question\]\n(?P<q>.*?)\n\n\[The Start of Assistant A's Answer\]\n(?P<a>.*?)\n"
                   r"\[The End of Assistant A's Answer\]\n\n\[The Start of Assistant B's Answer\]\n(?P<b>.*?)\n"
                   r"\[The End of Assistant B's Answer\]", re.DOTALL)


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]{4,}", text.lower())}


def quality(question: str, answer: str) -> float:
    words = answer.split()
    if not words:
        return -1.0
    asked = content_words(question)
    overlap = len(asked & content_words(answer)) / len(asked) if asked else 0.0
    length = min(math.log1p(len(words)) / math.log(300), 1.0)
    structure = 0.5 if ("\n" in answer.strip() or re.search(r"^\s*(\d+\.|[-*])\s", answer, re.M)) else 0.0
    refusal = -2.0 if any(r in answer.lower()[:300] for r in REFUSALS) else 0.0
    return 2 * overlap + length + structure + refusal


def decide(question: str, a: str, b: str, rng: random.Random) -> tuple[int, int]:
    qa, qb = quality(question, a), quality(question, b)
    if rng.random() < 0.1:
        return rng.choice([(1, 0), (0, 1), (1, 1), (0, 0)])
    if abs(qa - qb) < 0.15:
        return (1, 1) if min(qa, qb) >= 1.0 else (0, 0)
    return (1, 0) if qa > qb else (0, 1)


@ANSWERS.answer("arena/judge.j2")
def seed_judge(request: ChatRequest, rng: random.Random) -> str:
    match = _SEED.search(request.messages[-1].content)
    if match is None:
        return "I cannot find two answers to compare."
    first, second = decide(match["q"], match["a"], match["b"], rng)
    return (f"- Score of Model 1: {first}\n- Score of Model 2: {second}\n"
            f"- Brief Explanation: offline heuristic (coverage of the question, length, structure, refusals).")


@ANSWERS.answer("arena/mtbench_pair_v2.j2")
def pair_judge(request: ChatRequest, rng: random.Random) -> str:
    match = _PAIR.search(request.messages[-1].content)
    if match is None:
        return "I cannot find two answers to compare."
    verdict = {(1, 0): "[[A]]", (0, 1): "[[B]]"}.get(decide(match["q"], match["a"], match["b"], rng), "[[C]]")
    return f"Offline heuristic comparison (coverage, length, structure, refusals). {verdict}"
