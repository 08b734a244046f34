"""The polite family's eval: one case per question, judged by its pipeline."""

from __future__ import annotations

import llmjury


@llmjury.case_set("polite", "questions")
def test_reply(outcome):
    assert outcome.verdict.valid, outcome.verdict.error
