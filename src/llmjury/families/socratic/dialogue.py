"""Generating a simulated student-teacher dialogue (seed 000, step 1).

The student opens with the plan's question; then the plainly prompted teacher and the persona
student alternate until the dialogue has `turns` utterances from each. Every call carries the
dialogue's seed, so two dialogues with the same persona and question still differ, and the
same plan always yields the same (cached) dialogue.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from llmjury.families.socratic.data import Persona
from llmjury.families.socratic.options import NAME
from llmjury.judgement.jury import Jury

STUDENT, TEACHER = "Student", "Teacher"


class DialoguePlan(BaseModel):
    """Everything that determines one simulated dialogue, fixed at collection time."""

    index: int
    persona: Persona
    subject: str
    question: str
    turns: int
    seed: int


@dataclass(frozen=True)
class Turn:
    speaker: str
    text: str


def history(turns: list[Turn]) -> str:
    """The dialogue as the seed's prompts show it: one `[Speaker]: text` line per utterance."""
    return "\n".join(f"[{t.speaker}]: {t.text}" for t in turns)


async def teacher_reply(jury: Jury, role: str, turns: list[Turn], seed: int | None = None) -> str:
    """The plainly prompted Socratic teacher (the seed's baseline and data-collection teacher)."""
    prompt = jury.render("socratic/teacher_baseline.j2", dialogue_history=history(turns))
    completion = await jury.complete(role, NAME, jury.request(prompt, seed=seed))
    return completion.answer()


async def generate_dialogue(jury: Jury, plan: DialoguePlan) -> list[Turn]:
    turns = [Turn(STUDENT, plan.question)]
    while True:
        turns.append(Turn(TEACHER, await teacher_reply(jury, "teacher", turns, plan.seed)))
        if sum(t.speaker == STUDENT for t in turns) == plan.turns:
            return turns
        prompt = jury.render("socratic/student.j2", persona=plan.persona.describe(), history_str=history(turns))
        student = await jury.complete("student", NAME, jury.request(prompt, seed=plan.seed))
        turns.append(Turn(STUDENT, student.answer()))


def cut(turns: list[Turn], student_turns: int) -> list[Turn]:
    """The dialogue up to and including the `student_turns`-th student utterance."""
    seen = 0
    for position, turn in enumerate(turns):
        seen += turn.speaker == STUDENT
        if seen == student_turns:
            return turns[: position + 1]
    raise ValueError(f"dialogue has fewer than {student_turns} student turns")
