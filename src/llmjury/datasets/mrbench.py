"""MRBench (CC BY-SA 4.0): real tutoring dialogues cut at a student turn, eight or nine tutors'
replies, and human annotations of each reply.

Human score of a reply: the sum over its eight annotated dimensions of Yes = 1,
To some extent = 0.5, No = 0; Revealing_of_the_Answer is reversed (not revealing is good:
No = 1, any Yes = 0) and Tutor_Tone scores Encouraging = 1, Neutral = 0.5, Offensive = 0.
Of two tutors on one conversation the higher score is preferred; equal scores are a tie.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from llmjury.cases import slug
from llmjury.errors import DatasetError

SHIPPED = Path(__file__).resolve().parents[3] / "fixtures" / "mrbench" / "MRBench_V1.json"
GRADED = {"Yes": 1.0, "To some extent": 0.5, "No": 0.0}
TONE = {"Encouraging": 1.0, "Neutral": 0.5, "Offensive": 0.0}
DIMENSIONS = ("Mistake_Identification", "Mistake_Location", "Revealing_of_the_Answer", "Providing_Guidance",
              "Actionability", "humanlikeness", "Coherence", "Tutor_Tone")
STUDENT, TUTOR = "Student", "Teacher"


@dataclass(frozen=True)
class Reply:
    tutor: str
    text: str
    score: float


@dataclass(frozen=True)
class Conversation:
    index: int  # position in the file: conversation ids repeat in MRBench, positions do not
    id: str
    dataset: str
    history: list[tuple[str, str]]
    replies: dict[str, Reply]


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


def preference(a: float, b: float) -> str:
    """`a`, `b` or `tie`: which of two human scores is preferred."""
    return "a" if a > b else "b" if b > a else "tie"


def parse_history(text: str) -> list[tuple[str, str]]:
    """`Tutor: ...` / `Student: ...` lines into (speaker, text) turns, continuation lines joined."""
    turns: list[tuple[str, str]] = []
    for raw in text.replace("\xa0", " ").split("\n"):
        line = raw.strip()
        if not line:
            continue
        for prefix, speaker in (("Tutor:", TUTOR), ("Student:", STUDENT)):
            if line.startswith(prefix):
                turns.append((speaker, line[len(prefix):].strip()))
                break
        else:
            if turns:
                turns[-1] = (turns[-1][0], turns[-1][1] + "\n" + line)
    return turns


def load(path: Path | None = None) -> tuple[list[Conversation], list[str]]:
    """Conversations, and those left out with the reason (6 of the 192 end on a turn labelled Tutor)."""
    source = path or SHIPPED
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise DatasetError(str(source), None, f"cannot read MRBench JSON ({exc})") from exc
    if not isinstance(data, list):
        raise DatasetError(str(source), None, "expected a list of conversations")
    conversations: list[Conversation] = []
    skipped: list[str] = []
    for number, item in enumerate(data):
        try:
            conversation = str(item["conversation_id"])
            history = parse_history(item["conversation_history"])
            replies = item["anno_llm_responses"]
        except (KeyError, TypeError) as exc:
            raise DatasetError(str(source), number, f"missing field {exc}") from exc
        where = f"{source} [conversation {conversation}]"
        if not history or history[-1][0] != STUDENT:
            skipped.append(f"{where}: history does not end with a student turn")
            continue
        conversations.append(Conversation(
            index=number, id=conversation, dataset=str(item.get("Data", "")), history=history,
            replies={tutor: Reply(tutor, reply["response"],
                                  human_score(reply["annotation"], where=f"{where} tutor {tutor}"))
                     for tutor, reply in sorted(replies.items())},
        ))
    return conversations, skipped


def sampled_pairs(conversations: list[Conversation], pairs_per_conversation: int | None,
                  seed: int = 0) -> Iterator[tuple[Conversation, str, str]]:
    """Seeded tutor pairs per conversation, in conversation order; all C(n, 2) pairs for None or
    when asked for that many or more."""
    rng = random.Random(seed)
    for conv in conversations:
        pairs = list(itertools.combinations(sorted(conv.replies), 2))
        keep_all = pairs_per_conversation is None or pairs_per_conversation >= len(pairs)
        chosen = pairs if keep_all else sorted(rng.sample(pairs, pairs_per_conversation))
        for a, b in chosen:
            yield conv, a, b


def case_id(conversation: Conversation, tutor_a: str, tutor_b: str) -> str:
    """Stable, unique and readable: position, conversation id and the two tutors."""
    return f"mrbench-c{conversation.index:03d}-{slug(conversation.id)}-{slug(tutor_a)}-vs-{slug(tutor_b)}"
