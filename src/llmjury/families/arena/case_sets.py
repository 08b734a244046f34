"""The arena's case sets: what each of its eval tests runs over, read from this run's options.

A dataset with no file (no option, no shipped copy) has no cases.
"""

from __future__ import annotations

from collections.abc import Mapping

from llmjury.families.arena import datasets, llmbar, mrbench, pairs, pipeline, prd, recorded
from llmjury.families.arena.arrangement import arrange
from llmjury.families.arena.cases import DatasetFile, PairCase
from llmjury.families.arena.options import ArenaOptions
from llmjury.family import CaseLoad, CaseSet
from llmjury.running.settings import Settings


def battles(options: ArenaOptions, settings: Settings) -> CaseLoad:
    """Every arranged battle: MT-Bench questions between the models' answers (or an arrangement file)."""
    if datasets.find(datasets.QUESTIONS, options, settings) is None and not options.arrangement:
        return [], []
    cases, report = arrange(options, settings)
    return cases, [report]


def tutor_battles(options: ArenaOptions, settings: Settings) -> CaseLoad:
    """MRBench's tutors in pairs, for the judge to decide."""
    path = datasets.find(datasets.MRBENCH, options, settings)
    if path is None:
        return [], []
    cases, report = mrbench.battles(path, datasets.mrbench_name(options, settings),
                                    pairs_per_conversation=options.mrbench_pairs, seed=settings.seed)
    return cases, [report]


def mrbench_labels(options: ArenaOptions, settings: Settings) -> CaseLoad:
    """The MRBench file as one case: its tutors battle by human label."""
    path = datasets.find(datasets.MRBENCH, options, settings)
    if path is None:
        return [], []
    name = datasets.mrbench_name(options, settings)
    return [DatasetFile(id=f"{name}-human-labels", dataset=name, path=str(path))], []


def pair_items(options: ArenaOptions, settings: Settings) -> CaseLoad:
    """Each pairwise item of `arena.pairs`, judged live."""
    path = datasets.find(datasets.PAIRS, options, settings)
    if path is None:
        return [], []
    name = datasets.pairs_name(options, path)
    items, report = pairs.load(path, name, options)
    return [PairCase(id=item.case_id(name), dataset=name, item=item.id, question=item.prompt, question_index=index,
                     model_a=item.model_a, model_b=item.model_b, answer_a=item.answer_a, answer_b=item.answer_b,
                     human=item.label) for index, item in enumerate(items)], [report]


def pair_records(options: ArenaOptions, settings: Settings) -> CaseLoad:
    """The pairwise items file as one case: its human labels and recorded verdicts."""
    path = datasets.find(datasets.PAIRS, options, settings)
    if path is None:
        return [], []
    name = datasets.pairs_name(options, path)
    return [DatasetFile(id=f"{name}-recorded", dataset=name, path=str(path))], []


def llmbar_files(options: ArenaOptions, settings: Settings) -> CaseLoad:
    """LLMBar's recorded judge files, one case each."""
    path = datasets.find(datasets.LLMBAR, options, settings)
    return (llmbar.recorded_files(path) if path else []), []


def prd_sources(options: ArenaOptions, settings: Settings) -> CaseLoad:
    """PRD's human votes and each LLM reviewer, one case per source."""
    path = datasets.find(datasets.PRD, options, settings)
    return (prd.sources(path) if path else []), []


def case_sets() -> Mapping[str, CaseSet[ArenaOptions]]:
    """The arena's case sets, by the name its eval tests give."""
    return {
        "battle": CaseSet(battles, pipeline.battle),
        "tutor_battle": CaseSet(tutor_battles, pipeline.judge_tutors),
        "tutors_by_human_label": CaseSet(mrbench_labels, mrbench.human_battles),
        "pair": CaseSet(pair_items, pipeline.judge_pair),
        "pair_records": CaseSet(pair_records, recorded.pair_records),
        "llmbar_recorded_judge": CaseSet(llmbar_files, llmbar.replay),
        "prd_source": CaseSet(prd_sources, prd.replay),
    }
