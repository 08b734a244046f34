"""A Q&A thread as seed 001 keeps it: a question message and its answer messages, from a course."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class QAPair:
    """One thread: `question` and `answers` are messages `{text, user, user_name, timestamp, ...}`."""

    course: str
    source_file: str
    generation: str
    date: str
    question: dict[str, Any]
    answers: list[dict[str, Any]]

    @property
    def id(self) -> str:
        return str(self.question.get("timestamp"))

    def raw(self) -> dict[str, Any]:
        """The pair as the scored output keeps it (seed section 9); a raw export has no generation."""
        generation = {"generation": self.generation} if self.generation else {}
        return {**generation, "date": self.date, "question": self.question, "answers": self.answers}
