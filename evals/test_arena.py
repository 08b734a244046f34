"""Elo arena (seed 002): every arranged battle is a case; the judge decides it in both orders.

MT-Bench questions battle the models' recorded answers (or live answers from any provider spec
named in `arena.models`). MRBench's tutors battle twice: by human label, and by the judge.
Pairwise items from `arena.pairs=PATH` are judged live, and their human labels and recorded
verdicts are read beside. A dataset with no file (no option, no shipped copy) has no cases.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import llmjury
from llmjury.assertions import assert_scored
from llmjury.families.arena import FAMILY, agreement, datasets, llmbar, mrbench, pairs, pipeline, prd, recorded
from llmjury.families.arena.arrangement import arrange
from llmjury.families.arena.cases import DatasetFile, PairCase
from llmjury.families.arena.options import ArenaOptions
from llmjury.families.arena.results import LLMBarReplay
from llmjury.plugin import options_of, settings_of


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    settings = settings_of(metafunc.config)
    options = options_of(metafunc.config, FAMILY)
    assert isinstance(options, ArenaOptions)
    function = metafunc.function
    if function is test_battle:
        if datasets.find(datasets.QUESTIONS, options, settings) is None and not options.arrangement:
            return metafunc.parametrize("case", [])
        cases, report = arrange(options, settings)
        llmjury.generate(metafunc, cases, loaded=[report])
    elif function in (test_tutor_battle, test_tutors_by_human_label):
        path = datasets.find(datasets.MRBENCH, options, settings)
        if path is None:
            return metafunc.parametrize("case", [])
        name = datasets.mrbench_name(options, settings)
        battles, report = mrbench.battles(path, name, pairs_per_conversation=options.mrbench_pairs,
                                          seed=settings.seed)
        if function is test_tutor_battle:
            llmjury.generate(metafunc, battles, loaded=[report])
        else:
            llmjury.generate(metafunc, [DatasetFile(id=f"{name}-human-labels", dataset=name, path=str(path))])
    elif function in (test_pair, test_pair_records):
        path = datasets.find(datasets.PAIRS, options, settings)
        if path is None:
            return metafunc.parametrize("case", [])
        name = datasets.pairs_name(options, path)
        items, report = pairs.load(path, name, options)
        if function is test_pair:
            llmjury.generate(metafunc, [
                PairCase(id=item.case_id(name), dataset=name, item=item.id, question=item.prompt,
                         question_index=index, model_a=item.model_a, model_b=item.model_b, answer_a=item.answer_a,
                         answer_b=item.answer_b, human=item.label) for index, item in enumerate(items)],
                loaded=[report])
        else:
            llmjury.generate(metafunc, [DatasetFile(id=f"{name}-recorded", dataset=name, path=str(path))])
    elif function is test_llmbar_recorded_judge:
        path = datasets.find(datasets.LLMBAR, options, settings)
        llmjury.generate(metafunc, llmbar.recorded_files(path) if path else [])
    elif function is test_prd_source:
        path = datasets.find(datasets.PRD, options, settings)
        llmjury.generate(metafunc, prd.sources(path) if path else [])


@llmjury.pipeline(pipeline.battle)
def test_battle(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


@llmjury.pipeline(pipeline.judge_tutors)
def test_tutor_battle(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


@llmjury.pipeline(mrbench.human_battles)
def test_tutors_by_human_label(outcome: llmjury.Outcome) -> None:
    assert outcome.verdicts, "the MRBench file yields no labelled tutor pair"


@llmjury.pipeline(pipeline.judge_pair)
def test_pair(outcome: llmjury.Outcome) -> None:
    assert_scored(outcome)


@llmjury.pipeline(recorded.pair_records)
def test_pair_records(outcome: llmjury.Outcome) -> None:
    """Human labels and recorded verdicts of the pairwise items file (none is fine: judged live only)."""
    assert all(v.valid for v in outcome.verdicts)


@llmjury.pipeline(llmbar.replay)
def test_llmbar_recorded_judge(outcome: llmjury.Outcome) -> None:
    """A recorded judge file reproduces LLMBar's published counts through our parser and swap handling."""
    results = [v.result for v in outcome.verdicts if isinstance(v.result, LLMBarReplay)]
    ours = agreement.llmbar_counts(results)
    reference = llmbar.published(Path(outcome.verdicts[0].attributes["statistics"]))["counts"]
    n = len(results)

    def count(key: str) -> tuple[int, int]:
        figure = ours[key]
        assert isinstance(figure, agreement.Metric) and figure.value is not None
        return round(figure.value * n), n

    assert count("accuracy_original") == reference["correct_False"]
    assert count("accuracy_swapped") == reference["correct_True"]
    assert count("correct_both") == reference["correct_both"]
    assert count("positional_agreement") == reference["equal"]


@llmjury.pipeline(prd.replay)
def test_prd_source(outcome: llmjury.Outcome) -> None:
    """PRD's human votes (the human leaderboard) and each LLM reviewer as a recorded judge."""
    assert len(outcome.verdicts) in (7040, 1600)
