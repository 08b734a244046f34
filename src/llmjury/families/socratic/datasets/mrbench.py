"""Annotated tutor pairs (MRBench V1 or V3) as socratic cases: the pairwise judge measured against
people's preferences. The shapes and the preference rule are `llmjury.datasets.mrbench`'s."""

from __future__ import annotations

from pathlib import Path

from llmjury.cases import slug
from llmjury.datasets import mrbench
from llmjury.families.socratic.cases import TutorPairCase
from llmjury.families.socratic.options import NAME
from llmjury.loading import LoadCounter, LoadReport


def pair_cases(path: Path, *, name: str | None = None, fmt: mrbench.Format = "auto", pairs_per_conversation: int = 1,
               seed: int = 0) -> tuple[list[TutorPairCase], LoadReport]:
    """Seeded tutor pairs per conversation (all C(n,2) when asked for that many or more), and what
    loading kept and left out."""
    counter = LoadCounter()
    data = mrbench.read(path, fmt=fmt, counter=counter)
    name = name or path.stem
    cases: list[TutorPairCase] = []
    for conv, a, b in mrbench.sampled_pairs(data.conversations, pairs_per_conversation, seed):
        ra, rb = conv.replies[a], conv.replies[b]
        cases.append(TutorPairCase(
            id=mrbench.case_id(conv, a, b, prefix=slug(name)), dataset=name, conversation_id=conv.id,
            corpus=conv.dataset, history=conv.history, tutor_a=a, tutor_b=b, response_a=ra.text, response_b=rb.text,
            human=mrbench.preference(ra.score, rb.score),
            human_by_dimension={d: mrbench.preference(ra.scores[d], rb.scores[d]) for d in data.dimensions}))
    return cases, counter.report(NAME, name, path, len(data.conversations))
