"""The socratic family's case sets: simulated dialogues, real MathDial dialogues, MRBench's annotated
tutor replies and pre-collected replies, read from this run's options.

A dataset without a file is a visible skip naming the option to set, not an error that stops the
other datasets.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from llmjury.cases import NoCases
from llmjury.errors import ConfigError
from llmjury.families.socratic import pipeline
from llmjury.families.socratic.cases import simulated_cases
from llmjury.families.socratic.datasets import dataset_name, locate
from llmjury.families.socratic.datasets.mathdial import subsets
from llmjury.families.socratic.datasets.mrbench import pair_cases
from llmjury.families.socratic.datasets.responses import response_cases
from llmjury.families.socratic.options import SocraticOptions
from llmjury.family import CaseLoad, CaseSet
from llmjury.running.settings import Settings


def simulated(options: SocraticOptions, settings: Settings) -> CaseLoad:
    """Subsets of dialogues simulated with persona students (no file)."""
    return simulated_cases(options, settings.seed), []


def found(dataset: str, options: SocraticOptions, settings: Settings) -> tuple[Path, str]:
    """The dataset's file and the name it is reported under, or NoCases saying what to set."""
    try:
        path = locate(dataset, options, settings)
    except ConfigError as exc:
        raise NoCases(str(exc)) from None
    if path is None:
        raise NoCases("no pre-collected replies: set --llm-option socratic.responses=PATH")
    return path, dataset_name(dataset, options, path)


def mathdial(options: SocraticOptions, settings: Settings) -> CaseLoad:
    """Subsets of real MathDial dialogues."""
    path, name = found("mathdial", options, settings)
    cases, loaded = subsets(path, name=name, count=options.mathdial_subsets, seed=settings.seed)
    return cases, [loaded]


def mrbench(options: SocraticOptions, settings: Settings) -> CaseLoad:
    """Pairs of MRBench's annotated tutor replies, with people's preferences."""
    path, name = found("mrbench", options, settings)
    cases, loaded = pair_cases(path, name=name, fmt=options.mrbench_format,
                               pairs_per_conversation=options.mrbench_pairs, seed=settings.seed)
    return cases, [loaded]


def responses(options: SocraticOptions, settings: Settings) -> CaseLoad:
    """Pre-collected candidate and baseline replies (`socratic.responses`)."""
    path, name = found("responses", options, settings)
    cases, loaded = response_cases(path, name=name, ours_name=options.ours_name, baseline_name=options.baseline_name,
                                   subsets_dir=Path(options.subsets_dir) if options.subsets_dir else None)
    return cases, [loaded]


def case_sets() -> Mapping[str, CaseSet[SocraticOptions]]:
    """The socratic family's case sets, by the name its eval tests give."""
    return {
        "simulated": CaseSet(simulated, pipeline.compare),
        "mathdial": CaseSet(mathdial, pipeline.compare_real),
        "mrbench": CaseSet(mrbench, pipeline.judge_tutor_pair),
        "responses": CaseSet(responses, pipeline.judge_responses),
    }
