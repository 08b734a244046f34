"""Q&A quality grading (seed 001): every filtered Slack Q&A pair is a case; a pair graded
`remove` fails its test (or xfails, with `qa_quality.on_remove=xfail`), so the run lists exactly
the pairs to drop. One rules case per course reports what the filters removed."""

from __future__ import annotations

from pathlib import Path

import pytest

import llmjury
from llmjury.assertions import assert_scored
from llmjury.families import qa_quality
from llmjury.families.qa_quality.semeval import semeval_cases
from llmjury.plugin import settings_of
from llmjury.settings import family_options


def options(config: pytest.Config) -> qa_quality.QAOptions:
    return qa_quality.QAOptions.model_validate(family_options(settings_of(config), qa_quality.FAMILY))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    pairs, rules = qa_quality.qa_cases(options(metafunc.config))
    if metafunc.function is test_pair_is_worth_keeping:
        llmjury.generate(metafunc, pairs)
    elif metafunc.function is test_semeval_pair:
        opts = options(metafunc.config)
        llmjury.generate(metafunc, semeval_cases(Path(opts.semeval) if opts.semeval else None))
    elif metafunc.function is test_course_filters:
        llmjury.generate(metafunc, rules)


@llmjury.pipeline(qa_quality.grade_pair)
def test_pair_is_worth_keeping(outcome: llmjury.Outcome, request: pytest.FixtureRequest) -> None:
    assert_scored(outcome)
    result = outcome.verdict.result
    if result["grade"] == "remove":
        scores = ", ".join(f"{k} {v}" for k, v in result["scores"].items())
        message = f"graded remove ({scores}): drop this pair from the corpus"
        if options(request.config).on_remove == "xfail":
            pytest.xfail(message)
        pytest.fail(message)


@llmjury.pipeline(qa_quality.grade_pair)
def test_semeval_pair(outcome: llmjury.Outcome) -> None:
    """The grader on labelled community answers: its agreement with people is in the report."""
    assert_scored(outcome)


@llmjury.pipeline(qa_quality.course_rules)
def test_course_filters(outcome: llmjury.Outcome) -> None:
    assert outcome.verdict.result["kept"] > 0
