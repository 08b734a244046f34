"""MathDial (CC BY-SA 4.0): 599 real teacher-student tutoring dialogues, cut at student turns into
subsets exactly as the simulated dialogues are, so the pairwise teacher comparison also runs on
real conversations. Teacher turns lose their move label ("(probing)...") from the text and keep it
as data; the teachers' outcome label ("Yes, but I had to reveal the answer") stays on the case."""

from __future__ import annotations

import random
import re
from pathlib import Path

from llmjury.cases import Case
from llmjury.datasets.files import read_jsonl
from llmjury.errors import DatasetError
from llmjury.families.socratic.cases import FAMILY
from llmjury.families.socratic.dialogue import STUDENT, TEACHER, Turn

SHIPPED = Path(__file__).resolve().parents[4] / "fixtures" / "mathdial" / "test.jsonl"
_MOVE = re.compile(r"^\((\w+)\)\s*")


class RealSubsetCase(Case):
    """A MathDial dialogue cut after its `cut`-th student turn."""

    family: str = FAMILY
    qid: str
    turns: list[tuple[str, str]]
    cut: int
    outcome: str

    def marks(self) -> list[str]:
        return [FAMILY, "mathdial"]

    def context(self) -> list[Turn]:
        return [Turn(speaker, text) for speaker, text in self.turns]


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


def subsets(path: Path | None = None, *, count: int = 100, seed: int = 0) -> list[RealSubsetCase]:
    """`count` seeded (dialogue, cut) subsets, each ending with a student turn."""
    source = path or SHIPPED
    slots = []
    dialogues = {}
    for number, row in read_jsonl(source):
        try:
            turns = parse_conversation(row["conversation"])
        except (KeyError, TypeError, AttributeError) as exc:
            raise DatasetError(str(source), number, f"not a MathDial dialogue ({exc})") from exc
        dialogues[number] = (row, turns)
        student_turns = sum(t[0] == STUDENT for t in turns)
        slots += [(number, cut) for cut in range(1, student_turns + 1)]
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
        cases.append(RealSubsetCase(id=f"mathdial-{number:03d}-q{row['qid']}-cut{cut}", qid=str(row["qid"]),
                                    turns=kept, cut=cut, outcome=str(row.get("self-correctness", ""))))
    return cases
