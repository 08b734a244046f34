"""The polite family's eval: one case per question, judged by its pipeline."""

from __future__ import annotations

from polite import FAMILY, Question, judge

import llmjury
from llmjury.plugin import options_of


def pytest_generate_tests(metafunc):
    if "case" in metafunc.fixturenames:
        count = options_of(metafunc.config, FAMILY).cases
        llmjury.generate(metafunc, [Question(id=f"q{i:02d}", text=f"question {i}") for i in range(count)])


@llmjury.pipeline(judge)
def test_reply(outcome):
    assert outcome.verdict.valid, outcome.verdict.error
