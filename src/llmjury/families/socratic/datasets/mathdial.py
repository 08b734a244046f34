"""MathDial (CC BY-SA 4.0): real teacher-student tutoring dialogues, cut at student turns into
subsets exactly as the simulated dialogues are, so the pairwise teacher comparison also runs on
real conversations. Teacher turns lose their move label ("(probing)...") from the text; the
teachers' outcome label ("Yes, but I had to reveal the answer") stays on the case."""

from __future__ import annotations

import random
import re
from pathlib import Path

from llmjury.cases import slug
from llmjury.datasets.files import read_jsonl
from llmjury.errors import DatasetError
from llmjury.families.socratic.cases import RealSubsetCase
from llmjury.families.socratic.dialogue import STUDENT, TEACHER
from llmjury.families.socratic.options import NAME
from llmjury.loading import LoadCounter, LoadReport

_MOVE = re.compile(r"^\((\w+)\)\s*")


def parse_conversation(text: str) -> list[tuple[str, str, str | None]]:
    """`Teacher: (move)text|EOM|Student: text` → (speaker, text, teacher move)."""
    turns = []
    for raw in text.split("|EOM|"):
        speaker, _, said = raw.partition(":")
        speaker = speaker.strip()
        if speaker not in ("Teacher", "Student"):
            continue
        said = said.strip()
        move = None
        match = _MOVE.match(said)
        if match:
            move, said = match.group(1), said[match.end():]
        turns.append((TEACHER if speaker == "Teacher" else STUDENT, said, move))
    return turns


def subsets(path: Path, *, name: str = "mathdial", count: int = 100,
            seed: int = 0) -> tuple[list[RealSubsetCase], LoadReport]:
    """`count` seeded (dialogue, cut) subsets, each ending with a student turn, and what loading kept."""
    counter = LoadCounter()
    slots = []
    dialogues = {}
    for number, row in read_jsonl(path):
        try:
            turns = parse_conversation(row["conversation"])
        except (KeyError, TypeError, AttributeError) as exc:
            raise DatasetError(str(path), number, f"not a MathDial dialogue (no 'conversation' text: {exc})") from None
        student_turns = sum(t[0] == STUDENT for t in turns)
        if not student_turns:
            counter.drop("dialogues without a student turn")
            continue
        dialogues[number] = (row, turns)
        slots += [(number, cut) for cut in range(1, student_turns + 1)]
    if not dialogues:
        raise DatasetError(str(path), None, "no MathDial dialogue with a student turn")
    rng = random.Random(seed)
    chosen = sorted(rng.sample(slots, min(count, len(slots))))
    cases = []
    for number, cut in chosen:
        row, turns = dialogues[number]
        seen, kept = 0, []
        for speaker, text, _ in turns:
            kept.append((speaker, text))
            seen += speaker == STUDENT
            if seen == cut:
                break
        cases.append(RealSubsetCase(id=f"{slug(name)}-{number:03d}-q{slug(row.get('qid', number))}-cut{cut}",
                                    dataset=name, qid=str(row.get("qid", number)), turns=kept, cut=cut,
                                    outcome=str(row.get("self-correctness", ""))))
    return cases, counter.report(NAME, name, path, len(dialogues))
