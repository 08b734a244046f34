"""Simulated students (seed 000): 32 personas and 16 opening questions in three subjects."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Level = Literal["low", "high"]
DIMENSIONS = ("goal_commitment", "motivation", "self_efficacy")
DIMENSION_TEXT = {
    "goal_commitment": "{level} dedication to learning goals",
    "motivation": "{level} learning motivation",
    "self_efficacy": "{level} confidence in abilities",
}
LEVELS: tuple[Level, Level] = ("low", "high")
YEARS = (1, 2, 3, 4)
ORDINAL = {1: "first", 2: "second", 3: "third", 4: "fourth"}
QUESTIONS_FILE = Path(__file__).resolve().parents[2] / "data" / "socratic_questions.json"


@dataclass(frozen=True)
class Persona:
    goal_commitment: Level
    motivation: Level
    self_efficacy: Level
    year: int

    @property
    def id(self) -> str:
        """Compact id for test ids: `y3-gc_hi-mo_lo-se_hi`."""
        short = {"low": "lo", "high": "hi"}
        return (f"y{self.year}-gc_{short[self.goal_commitment]}-mo_{short[self.motivation]}"
                f"-se_{short[self.self_efficacy]}")

    def describe(self) -> str:
        """The text that fills `You are a {persona}.` in the student prompt."""
        traits = ", ".join(DIMENSION_TEXT[d].format(level=getattr(self, d).capitalize()) for d in DIMENSIONS)
        return f"{ORDINAL[self.year]}-year computer science student with {traits}"


def personas() -> list[Persona]:
    """All 2 x 2 x 2 x 4 = 32 personas, in a fixed order."""
    return [Persona(gc, mo, se, year)
            for gc, mo, se in itertools.product(LEVELS, repeat=3) for year in YEARS]


def opening_questions() -> list[tuple[str, str]]:
    """(subject, question) pairs in the seed's order."""
    subjects = json.loads(QUESTIONS_FILE.read_text(encoding="utf-8"))["subjects"]
    return [(subject, q) for subject, questions in subjects.items() for q in questions]
