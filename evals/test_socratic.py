"""Socratic tutor evaluation (seeds 000 and 003).

Simulated subsets: our tutor ("candidate" role) against the plainly prompted teacher
("baseline" role) on dialogues between the "teacher" and a persona "student", judged pairwise k
times; the same on real MathDial dialogues. Pre-collected replies (`socratic.responses`): only
the judge runs. MRBench: the same judge on annotated tutors' replies, scored against people's
preferences. A case fails only when its verdict could not be scored; who wins is for the report
and gates.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import llmjury
from llmjury.assertions import assert_scored
from llmjury.errors import ConfigError
from llmjury.families.socratic.cases import simulated_cases
from llmjury.families.socratic.datasets import dataset_name, locate
from llmjury.families.socratic.datasets.mathdial import subsets
from llmjury.families.socratic.datasets.mrbench import pair_cases
from llmjury.families.socratic.datasets.responses import response_cases
from llmjury.families.socratic.options import options_of
from llmjury.families.socratic.pipeline import compare, compare_real, judge_responses, judge_tutor_pair
from llmjury.plugin import settings_of


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    settings = settings_of(metafunc.config)
    options = options_of(settings)
    if metafunc.function is test_ours_against_baseline:
        llmjury.generate(metafunc, simulated_cases(options, settings.seed))
        return
    dataset = DATASET_OF.get(metafunc.function.__name__)
    if dataset is None:
        return
    try:
        path = locate(dataset, options, settings)
    except ConfigError as exc:
        path, reason = None, str(exc)
    else:
        reason = "no pre-collected replies: set --llm-option socratic.responses=PATH"
    if path is None:  # a visible skip naming the option, not an error that stops the other datasets
        metafunc.parametrize("case", [pytest.param(None, marks=pytest.mark.skip(reason=reason), id="no-file")],
                             indirect=["case"])
        return
    name = dataset_name(dataset, options, path)
    if dataset == "mathdial":
        cases, loaded = subsets(path, name=name, count=options.mathdial_subsets, seed=settings.seed)
    elif dataset == "mrbench":
        cases, loaded = pair_cases(path, name=name, fmt=options.mrbench_format,
                                   pairs_per_conversation=options.mrbench_pairs, seed=settings.seed)
    else:
        cases, loaded = response_cases(path, name=name, ours_name=options.ours_name,
                                       baseline_name=options.baseline_name,
                                       subsets_dir=Path(options.subsets_dir) if options.subsets_dir else None)
    llmjury.generate(metafunc, cases, loaded=[loaded])


@llmjury.pipeline(compare)
def test_ours_against_baseline(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


@llmjury.pipeline(compare_real)
def test_ours_against_baseline_on_real_dialogues(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


@llmjury.pipeline(judge_tutor_pair)
def test_judge_on_human_preferences(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


@llmjury.pipeline(judge_responses)
def test_judge_collected_replies(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


DATASET_OF = {test_ours_against_baseline_on_real_dialogues.__name__: "mathdial",
              test_judge_on_human_preferences.__name__: "mrbench", test_judge_collected_replies.__name__: "responses"}
