"""MRBench (CC BY-SA 4.0): real tutoring dialogues cut at a student turn, several tutors' replies,
and human annotations of each reply, in either of its published shapes:

- V1 (`MRBench_V1.json`): replies under `anno_llm_responses`, eight annotated dimensions;
- V3 (the BEA 2025 shared task's files): replies under `tutor_responses`, four of V1's dimensions
  (Mistake_Identification, Mistake_Location, Providing_Guidance, Actionability).

A file's dimensions are those its annotations carry. A reply's human score on a dimension is
Yes = 1, To some extent = 0.5, No = 0; Revealing_of_the_Answer is reversed (not revealing is
good: No = 1, any Yes = 0) and Tutor_Tone scores Encouraging = 1, Neutral = 0.5, Offensive = 0.
Its overall score is the sum over the file's dimensions. Of two tutors on one conversation the
higher score is preferred (overall, and per dimension); equal scores are a tie.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from llmjury.cases import slug
from llmjury.datasets.files import read_json
from llmjury.errors import DatasetError
from llmjury.loading import LoadCounter

GRADED = {"Yes": 1.0, "To some extent": 0.5, "No": 0.0}
TONE = {"Encouraging": 1.0, "Neutral": 0.5, "Offensive": 0.0}
DIMENSIONS = ("Mistake_Identification", "Mistake_Location", "Revealing_of_the_Answer", "Providing_Guidance",
              "Actionability", "humanlikeness", "Coherence", "Tutor_Tone")
STUDENT, TUTOR = "Student", "Teacher"
Format = Literal["auto", "v1", "v3"]
Shape = Literal["v1", "v3"]
SHAPES: tuple[Shape, ...] = ("v1", "v3")
#: Where each shape keeps its replies.
REPLIES_FIELD = {"v1": "anno_llm_responses", "v3": "tutor_responses"}


@dataclass(frozen=True)
class Reply:
    tutor: str
    text: str
    scores: dict[str, float]

    @property
    def score(self) -> float:
        """The overall human score: the sum over the file's annotated dimensions."""
        return sum(self.scores.values())


@dataclass(frozen=True)
class Conversation:
    index: int  # position in the file: conversation ids repeat in MRBench, positions do not
    id: str
    dataset: str  # the corpus the dialogue comes from (MathDial, Bridge), when the file says
    history: list[tuple[str, str]]
    replies: dict[str, Reply]


@dataclass(frozen=True)
class MRBenchFile:
    """One file as read: its shape, the dimensions its annotations carry, the usable conversations,
    and the conversations left out with the reason."""

    path: Path
    format: Shape
    dimensions: tuple[str, ...]
    conversations: list[Conversation]
    skipped: list[str] = field(default_factory=list)


def dimension_score(dimension: str, value: Any, *, where: str) -> float:
    """One annotation value as a score (the rule in the module docstring)."""
    if dimension == "Revealing_of_the_Answer":
        return 1.0 if value == "No" else 0.0
    scale = TONE if dimension == "Tutor_Tone" else GRADED
    if value not in scale:
        raise DatasetError(where, None, f"unknown {dimension} value {value!r}; expected one of {sorted(scale)}")
    return scale[value]


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


def _shape(item: dict[str, Any], fmt: Format, path: Path, number: int) -> Shape:
    if fmt != "auto":
        if REPLIES_FIELD[fmt] not in item:
            raise DatasetError(str(path), number, f"missing field {REPLIES_FIELD[fmt]!r} of the MRBench {fmt} shape "
                                                  "(or leave the format to be detected)")
        return fmt
    for shape in SHAPES:
        if REPLIES_FIELD[shape] in item:
            return shape
    raise DatasetError(str(path), number, "not an MRBench conversation: no 'anno_llm_responses' (V1) or "
                                          "'tutor_responses' (V3) field")


def _annotated(value: Any) -> dict[str, Any]:
    return {k: v for k, v in value.items() if v not in (None, "")} if isinstance(value, dict) else {}


def read(path: Path, *, fmt: Format = "auto", counter: LoadCounter | None = None) -> MRBenchFile:
    """An MRBench file of either shape. Replies without an annotation of every dimension the file
    annotates, conversations left with fewer than two such replies and histories that do not end
    on a student turn are left out, counted in `counter` by reason."""
    counter = counter if counter is not None else LoadCounter()
    data = read_json(path)
    if not isinstance(data, list) or not data:
        raise DatasetError(str(path), None, "expected a non-empty JSON list of MRBench conversations")
    items: list[tuple[int, dict[str, Any], dict[str, Any]]] = []
    shapes = set()
    for number, item in enumerate(data):
        if not isinstance(item, dict):
            raise DatasetError(str(path), number, f"expected an object, got {type(item).__name__}")
        shape = _shape(item, fmt, path, number)
        shapes.add(shape)
        replies = item[REPLIES_FIELD[shape]]
        if not isinstance(replies, dict) or not all(isinstance(r, dict) for r in replies.values()):
            raise DatasetError(str(path), number, f"{REPLIES_FIELD[shape]!r} must map each tutor to "
                                                  "{'response': ..., 'annotation': {...}}")
        items.append((number, item, replies))
    if len(shapes) > 1:
        raise DatasetError(str(path), None, "mixes the V1 and V3 shapes; give one shape per file")
    found = {dim for _, _, replies in items for reply in replies.values()
             for dim in _annotated(reply.get("annotation"))}
    if not found:
        raise DatasetError(str(path), None, "no reply carries an annotation: nothing to measure a judge against")
    dimensions = tuple(d for d in DIMENSIONS if d in found) + tuple(sorted(found - set(DIMENSIONS)))
    conversations: list[Conversation] = []
    skipped: list[str] = []
    for number, item, replies in items:
        try:
            conversation = str(item["conversation_id"])
            history = parse_history(item["conversation_history"])
        except (KeyError, TypeError, AttributeError) as exc:
            raise DatasetError(str(path), number, f"missing field {exc}") from None
        where = f"{path} [conversation {conversation}]"
        if not history or history[-1][0] != STUDENT:
            counter.drop("conversations whose history does not end with a student turn")
            skipped.append(f"{where}: history does not end with a student turn")
            continue
        scored: dict[str, Reply] = {}
        for tutor, reply in sorted(replies.items()):
            annotation = _annotated(reply.get("annotation"))
            if not annotation:
                counter.drop("replies without annotation")
                continue
            if any(dim not in annotation for dim in dimensions):
                counter.drop("replies lacking one of the file's annotated dimensions")
                continue
            text = reply.get("response")
            if not isinstance(text, str) or not text.strip():
                counter.drop("replies with an empty response")
                continue
            scores = {dim: dimension_score(dim, annotation[dim], where=f"{where} tutor {tutor}") for dim in dimensions}
            scored[tutor] = Reply(tutor, text, scores)
        if len(scored) < 2:
            counter.drop("conversations with fewer than two annotated replies")
            skipped.append(f"{where}: fewer than two annotated replies")
            continue
        conversations.append(Conversation(index=number, id=conversation, dataset=str(item.get("Data", "")),
                                          history=history, replies=scored))
    if not conversations:
        raise DatasetError(str(path), None, "no conversation has two annotated replies after a student turn")
    return MRBenchFile(path=path, format=shapes.pop(), dimensions=dimensions, conversations=conversations,
                       skipped=skipped)


def load(path: Path) -> tuple[list[Conversation], list[str]]:
    """Conversations, and those left out with the reason (`read` also counts the replies left out)."""
    mrbench = read(path)
    return mrbench.conversations, mrbench.skipped


def sampled_pairs(conversations: list[Conversation], pairs_per_conversation: int | None,
                  seed: int = 0) -> Iterator[tuple[Conversation, str, str]]:
    """Seeded tutor pairs per conversation, in conversation order; all C(n, 2) pairs for None or
    when asked for that many or more."""
    rng = random.Random(seed)
    for conv in conversations:
        pairs = list(itertools.combinations(sorted(conv.replies), 2))
        wanted = pairs_per_conversation
        chosen = pairs if wanted is None or wanted >= len(pairs) else sorted(rng.sample(pairs, wanted))
        for a, b in chosen:
            yield conv, a, b


def case_id(conversation: Conversation, tutor_a: str, tutor_b: str, prefix: str = "mrbench") -> str:
    """Stable, unique and readable: the dataset, position, conversation id and the two tutors."""
    return f"{prefix}-c{conversation.index:03d}-{slug(conversation.id)}-{slug(tutor_a)}-vs-{slug(tutor_b)}"
