"""MRBench tutor pairs as Socratic cases: the pairwise judge measured against human preferences
(the rule is in `llmjury.datasets.mrbench`)."""

from __future__ import annotations

from pathlib import Path

from llmjury.cases import Case
from llmjury.datasets import mrbench
from llmjury.families.socratic.cases import FAMILY
from llmjury.families.socratic.dialogue import Turn


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
        return mrbench.preference(self.score_a, self.score_b)

    def marks(self) -> list[str]:
        return [FAMILY, "mrbench"]

    def turns(self) -> list[Turn]:
        return [Turn(speaker, text) for speaker, text in self.history]


def pair_cases(path: Path | None = None, *, pairs_per_conversation: int = 1,
               seed: int = 0) -> tuple[list[TutorPairCase], list[str]]:
    """Seeded tutor pairs per conversation (all C(n,2) when asked for that many or more), and
    the conversations left out with the reason."""
    conversations, skipped = mrbench.load(path)
    cases: list[TutorPairCase] = []
    for conv, a, b in mrbench.sampled_pairs(conversations, pairs_per_conversation, seed):
        ra, rb = conv.replies[a], conv.replies[b]
        cases.append(TutorPairCase(
            id=mrbench.case_id(conv, a, b), conversation_id=conv.id, dataset=conv.dataset, history=conv.history,
            tutor_a=a, tutor_b=b, response_a=ra.text, response_b=rb.text, score_a=ra.score, score_b=rb.score))
    return cases, skipped
