"""MRBench (CC BY-SA 4.0): real tutoring dialogues cut at a student turn, eight tutors' replies,
and human annotations of each reply. Human pairwise preferences are derived from them so the
Socratic judge can be measured, not only used.

Preference rule: each reply gets a human score, the sum over the eight annotated dimensions
of Yes = 1, To some extent = 0.5, No = 0; for Revealing_of_the_Answer the scale is reversed
(not revealing is good: No = 1, any Yes = 0) and Tutor_Tone scores Encouraging = 1,
Neutral = 0.5, Offensive = 0. Of two tutors on the same conversation the higher score is
preferred; equal scores are a human tie.
"""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

from llmjury.cases import Case, slug
from llmjury.errors import DatasetError
from llmjury.families.socratic.cases import FAMILY
from llmjury.families.socratic.dialogue import STUDENT, TEACHER, Turn

SHIPPED = Path(__file__).resolve().parents[4] / "fixtures" / "mrbench" / "MRBench_V1.json"
GRADED = {"Yes": 1.0, "To some extent": 0.5, "No": 0.0}
TONE = {"Encouraging": 1.0, "Neutral": 0.5, "Offensive": 0.0}
DIMENSIONS = ("Mistake_Identification", "Mistake_Location", "Revealing_of_the_Answer", "Providing_Guidance",
              "Actionability", "humanlikeness", "Coherence", "Tutor_Tone")


def human_score(annotation: dict[str, str], *, where: str) -> float:
    """The rule above, applied to one reply's annotation."""
    total = 0.0
    for dim in DIMENSIONS:
        value = annotation.get(dim)
        if value is None:
            raise DatasetError(where, None, f"annotation lacks {dim}")
        if dim == "Revealing_of_the_Answer":
            total += 1.0 if value == "No" else 0.0
        elif dim == "Tutor_Tone":
            if value not in TONE:
                raise DatasetError(where, None, f"unknown Tutor_Tone {value!r}")
            total += TONE[value]
        else:
            if value not in GRADED:
                raise DatasetError(where, None, f"unknown {dim} value {value!r}")
            total += GRADED[value]
    return total


class TutorPairCase(Case):
    """Two tutors' replies to one MRBench conversation, with the human preference between them."""

    family: str = FAMILY
    conversation_id: str
    dataset: str
    history: list[tuple[str, str]]
    tutor_a: str
    tutor_b: str
    response_a: str
    response_b: str
    score_a: float
    score_b: float

    @property
    def human(self) -> str:
        """`a`, `b` or `tie`: which reply the annotations prefer."""
        return "a" if self.score_a > self.score_b else "b" if self.score_b > self.score_a else "tie"

    def marks(self) -> list[str]:
        return [FAMILY, "mrbench"]

    def turns(self) -> list[Turn]:
        return [Turn(speaker, text) for speaker, text in self.history]


def parse_history(text: str) -> list[tuple[str, str]]:
    """`Tutor: ...` / `Student: ...` lines into (speaker, text) turns, continuation lines joined."""
    turns: list[tuple[str, str]] = []
    for raw in text.replace("\xa0", " ").split("\n"):
        line = raw.strip()
        if not line:
            continue
        for prefix, speaker in (("Tutor:", TEACHER), ("Student:", STUDENT)):
            if line.startswith(prefix):
                turns.append((speaker, line[len(prefix):].strip()))
                break
        else:
            if turns:
                turns[-1] = (turns[-1][0], turns[-1][1] + "\n" + line)
    return turns


def load(path: Path | None = None) -> list[dict[str, Any]]:
    source = path or SHIPPED
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise DatasetError(str(source), None, f"cannot read MRBench JSON ({exc})") from exc
    if not isinstance(data, list):
        raise DatasetError(str(source), None, "expected a list of conversations")
    return data


def pair_cases(path: Path | None = None, *, pairs_per_conversation: int = 1,
               seed: int = 0) -> tuple[list[TutorPairCase], list[str]]:
    """Seeded tutor pairs per conversation (all C(n,2) when asked for that many or more), and the
    conversations left out with the reason (7 of MRBench's 192 end on a turn labelled Tutor)."""
    rng = random.Random(seed)
    cases: list[TutorPairCase] = []
    skipped: list[str] = []
    for number, item in enumerate(load(path)):
        where = f"{path or SHIPPED} [conversation {item.get('conversation_id', number)}]"
        try:
            replies = item["anno_llm_responses"]
            history = parse_history(item["conversation_history"])
            conversation = str(item["conversation_id"])
        except (KeyError, TypeError) as exc:
            raise DatasetError(str(path or SHIPPED), number, f"missing field {exc}") from exc
        if not history or history[-1][0] != STUDENT:
            skipped.append(f"{where}: history does not end with a student turn")
            continue
        tutors = sorted(replies)
        pairs = list(itertools.combinations(tutors, 2))
        chosen = pairs if pairs_per_conversation >= len(pairs) else sorted(rng.sample(pairs, pairs_per_conversation))
        for a, b in chosen:
            cases.append(TutorPairCase(
                id=f"mrbench-{slug(conversation)}-{slug(a)}-vs-{slug(b)}",
                conversation_id=conversation, dataset=str(item.get("Data", "")), history=history,
                tutor_a=a, tutor_b=b, response_a=replies[a]["response"], response_b=replies[b]["response"],
                score_a=human_score(replies[a]["annotation"], where=f"{where} tutor {a}"),
                score_b=human_score(replies[b]["annotation"], where=f"{where} tutor {b}"),
            ))
    return cases, skipped
