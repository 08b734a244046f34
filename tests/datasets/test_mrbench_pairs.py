"""`mrbench_pairs` takes every tutor pair of a conversation exactly when it asks for at least C(tutors, 2):
28 is all of eight tutors' pairs but not of nine tutors' (36), as the docs say."""

from __future__ import annotations

import pytest

from llmjury.datasets.mrbench import Conversation, Reply, sampled_pairs


def conversation(tutors: int) -> Conversation:
    return Conversation(index=0, id="c", dataset="", history=[],
                        replies={f"t{k}": Reply(tutor=f"t{k}", text="x", scores={}) for k in range(tutors)})


@pytest.mark.parametrize(("tutors", "asked", "taken"), [(8, 28, 28), (9, 28, 28), (9, 36, 36), (9, 50, 36)])
def test_pairs_per_conversation_take_all_only_from_the_pair_count_on(tutors, asked, taken):
    pairs = [(a, b) for _, a, b in sampled_pairs([conversation(tutors)], asked, seed=1)]
    assert len(pairs) == taken and len(set(pairs)) == taken


def test_the_docs_state_the_count_that_takes_all_of_nine_tutors_pairs():
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "explanation" / "families" / "socratic.md"
    text = " ".join(page.read_text(encoding="utf-8").split())
    assert "28 or more takes all" not in text
    assert "takes all of its pairs: 28 with MRBench V1's eight tutors, 36 with V3's nine" in text
