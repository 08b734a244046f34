"""Offline stand-ins for the G-Eval prompts (and deepeval's GEval prompt), with real, checkable
signals so their correlations with human scores mean something, if not much.

Per response, features in [0, 1]: length in a natural range (4-35 words), little repetition,
content-word overlap with the previous turn, a question, overlap with the knowledge fact. Each
criterion mixes them (naturalness: length and no repetition; coherence: overlap with the previous
turn; engagingness: a question, length, the fact; groundedness: the fact; understandability:
length and no repetition; overall: the mean) into a quality q, whose scale position
low + q * (high - low) centres a discrete distribution over the scale (weights exp(-d^2 / 0.5)).
Asked for logprobs, the answer is the most likely score with that distribution as the first
token's top logprobs; sampled, each answer is drawn from it. A whole dialogue is the mean over its
system turns. The CoT prompt gets four fixed steps.
"""

from __future__ import annotations

import json
import math
import random
import re

from llmjury.chat import ChatRequest, Sample, TokenLogprob, TopLogprob
from llmjury.providers.offline import OfflineAnswers

ANSWERS = OfflineAnswers()

_FORM = re.compile(r"Evaluation Form \(scores ONLY\):\n\n-? ?(?P<label>[A-Za-z ]+?)"
                   r"(?: \((?P<lo>\d)-(?P<hi>\d)\))?:\s*$")
_RESPONSE = re.compile(r"Conversation:\n\n(?P<conv>.*?)\n(?:\nCorresponding Fact:\n\n(?P<fact>.*?)\n)?\nResponse:\n\n"
                       r"(?P<resp>.*?)\n\nEvaluation Form", re.DOTALL)
_DIALOGUE = re.compile(r"Conversation:\n\n(?P<conv>.*?)\n\nEvaluation Form", re.DOTALL)
SCALES = {"Overall Quality": (1, 5), "Naturalness": (1, 3), "Coherence": (1, 3), "Engagingness": (1, 3),
          "Groundedness": (0, 1), "Understandability": (0, 1)}
STEPS = ("Read the conversation and the text to be rated carefully. Check how well it meets the criterion. "
         "Note any problems that break the criterion. Assign a score on the scale given.")


def content(text: str) -> set[str]:
    return set(re.findall(r"[a-z]{4,}", text.lower()))


def quality(criterion: str, response: str, previous: str, fact: str = "") -> float:
    words = response.split()
    n = len(words)
    natural_length = 1.0 if 4 <= n <= 35 else 0.5 if n >= 2 else 0.0
    repetition = 1 - len(set(w.lower() for w in words)) / n if n else 1.0
    said = content(response)
    previous_overlap = min(1.0, 3 * len(said & content(previous)) / max(len(said), 1))
    fact_overlap = min(1.0, 3 * len(said & content(fact)) / max(len(said), 1)) if fact else 0.0
    question = 1.0 if "?" in response else 0.0
    scores = {
        "naturalness": 0.6 * natural_length + 0.4 * (1 - repetition),
        "coherence": 0.3 + 0.7 * previous_overlap,
        "engagingness": 0.4 * question + 0.3 * min(n / 20, 1.0) + 0.3 * fact_overlap,
        "groundedness": fact_overlap,
        "understandability": 0.7 * natural_length + 0.3 * (1 - repetition),
    }
    scores["overall"] = sum(scores.values()) / len(scores)
    return max(0.0, min(1.0, scores[criterion]))


def distribution(q: float, low: int, high: int) -> dict[int, float]:
    centre = low + q * (high - low)
    weights = {s: math.exp(-((s - centre) ** 2) / 0.5) for s in range(low, high + 1)}
    total = sum(weights.values())
    return {s: w / total for s, w in weights.items()}


def answer(request: ChatRequest, rng: random.Random, q: float, low: int, high: int) -> Sample | str:
    probs = distribution(q, low, high)
    if request.logprobs:
        best = max(probs, key=probs.__getitem__)
        top = [TopLogprob(token=str(s), logprob=math.log(p)) for s, p in sorted(probs.items(), key=lambda kv: -kv[1])]
        return Sample(text=str(best), finish_reason="stop",
                      logprobs=[TokenLogprob(token=str(best), logprob=math.log(probs[best]), top=top)])
    return str(rng.choices(list(probs), weights=list(probs.values()))[0])


def criterion_of(label: str) -> str:
    return "overall" if label.startswith("Overall") else label.lower()


def read_form(prompt: str, body_pattern: re.Pattern[str]) -> tuple[str, int, int, re.Match[str]] | None:
    """The criterion, its scale and the text being rated, from a rendered G-Eval prompt."""
    form, body = _FORM.search(prompt), body_pattern.search(prompt)
    if form is None or body is None:
        return None
    label = form["label"].strip()
    low, high = SCALES.get(label, (1, 5))
    return criterion_of(label), low, high, body


@ANSWERS.answer("geval/response.j2")
def rate_response(request: ChatRequest, rng: random.Random) -> Sample | str:
    read = read_form(request.messages[-1].content, _RESPONSE)
    if read is None:
        return "3"
    criterion, low, high, body = read
    previous = body["conv"].strip().splitlines()[-1] if body["conv"].strip() else ""
    return answer(request, rng, quality(criterion, body["resp"], previous, body["fact"] or ""), low, high)


@ANSWERS.answer("geval/dialogue.j2")
def rate_dialogue(request: ChatRequest, rng: random.Random) -> Sample | str:
    read = read_form(request.messages[-1].content, _DIALOGUE)
    if read is None:
        return "3"
    criterion, low, high, body = read
    lines = [line.split(": ", 1)[-1] for line in body["conv"].splitlines() if line.strip()]
    pairs = [(lines[i - 1], lines[i]) for i in range(1, len(lines), 2)] or [("", lines[0] if lines else "")]
    q = sum(quality(criterion, reply, before) for before, reply in pairs) / len(pairs)
    return answer(request, rng, q, low, high)


@ANSWERS.answer("geval/cot.j2")
def steps(request: ChatRequest, rng: random.Random) -> str:
    return STEPS


_DEEPEVAL_CASE = re.compile(r"Input:\n(?P<input>.*?) \n\nActual Output:\n(?P<output>.*?) \n\n", re.DOTALL)
_DEEPEVAL_RANGE = re.compile(r"an integer between (\d+) and (\d+)")


@ANSWERS.answer("deepeval")
def deepeval_answer(request: ChatRequest, rng: random.Random) -> str:
    """deepeval's GEval results prompt: a JSON score on its range for the overall quality."""
    prompt = request.messages[-1].content
    case, span = _DEEPEVAL_CASE.search(prompt), _DEEPEVAL_RANGE.search(prompt)
    low, high = (int(span.group(1)), int(span.group(2))) if span else (0, 10)
    if case is None:
        return json.dumps({"reason": "offline heuristic: no test case found", "score": low})
    previous = case["input"].strip().splitlines()[-1] if case["input"].strip() else ""
    q = quality("overall", case["output"], previous)
    return json.dumps({"reason": "offline heuristic: length, repetition, overlap with the last turn",
                       "score": round(low + q * (high - low))})
