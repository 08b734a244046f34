"""Q&A quality grading (seed 001): every filtered Slack Q&A pair, and every pair of your own file
(`qa_quality.pairs`), is a case; a pair graded `remove` fails its test (or xfails, with
`qa_quality.on_remove=xfail`), so the run lists exactly the pairs to drop. Pairs people labelled
(SemEval's sample, or your file's `label` column) measure the grader instead. One rules case per
course reports what the filters removed."""

from __future__ import annotations

import pytest

import llmjury
from llmjury.assertions import assert_scored
from llmjury.families.qa_quality import FAMILY
from llmjury.families.qa_quality.datasets import QAData, load
from llmjury.families.qa_quality.options import QAOptions
from llmjury.families.qa_quality.pipeline import course_rules, grade_pair
from llmjury.families.qa_quality.results import GradeResult, RulesResult
from llmjury.plugin import options_of, settings_of

LOADED = pytest.StashKey[QAData]()


def options(config: pytest.Config) -> QAOptions:
    opts = options_of(config, FAMILY)
    assert isinstance(opts, QAOptions)
    return opts


def data(config: pytest.Config) -> QAData:
    """The run's Q&A data, loaded once per process and shared by every test function below."""
    if LOADED not in config.stash:
        opts = options(config)
        config.stash[LOADED] = load(FAMILY.dataset_paths(opts, settings_of(config)), opts)
    return config.stash[LOADED]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    loaded = data(metafunc.config)
    cases = {test_pair_is_worth_keeping: loaded.pairs, test_labelled_pair: loaded.labelled,
             test_course_filters: loaded.rules}
    if metafunc.function in cases:
        llmjury.generate(metafunc, cases[metafunc.function], loaded=loaded.loaded)


@llmjury.pipeline(grade_pair)
def test_pair_is_worth_keeping(outcome: llmjury.Outcome, request: pytest.FixtureRequest) -> None:
    assert_scored(outcome)
    result = outcome.verdict.result
    assert isinstance(result, GradeResult)
    if result.grade == "remove":
        scores = ", ".join(f"{k} {v}" for k, v in result.scores.model_dump().items())
        message = f"graded remove ({scores}): drop this pair from the corpus"
        if options(request.config).on_remove == "xfail":
            pytest.xfail(message)
        pytest.fail(message)


@llmjury.pipeline(grade_pair)
def test_labelled_pair(outcome: llmjury.Outcome) -> None:
    """The grader on pairs people labelled: its agreement with them is in the report."""
    assert_scored(outcome)


@llmjury.pipeline(course_rules)
def test_course_filters(outcome: llmjury.Outcome) -> None:
    result = outcome.verdict.result
    assert isinstance(result, RulesResult) and result.kept > 0
