"""geval's typed verdict results and aggregate section.

Verdict kinds: `judge` (a G-Eval judgement: logprob- or frequency-weighted), `recorded` (a score
saved by another judge, replayed), `annotator` (one person's rating, scored against the others'
mean for the human ceiling) and `deepeval` (deepeval's GEval on the same item).
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from llmjury.model import Figures, Metric, Result, Section
from llmjury.results.repairs import JudgeRepairs


class ScoreResult(Result):
    """A score on the criterion's scale and how it was reached."""

    score: float
    #: logprobs, sampling, recorded, annotator or deepeval.
    method: str
    #: Answers sampled (sampling), and how many of them held a score.
    samples: int | None = None
    parsed: int | None = None
    #: Probability of each score on the scale (logprobs or sampling).
    distribution: dict[str, float] | None = None


class DeepevalResult(Result):
    """deepeval's GEval score (0-1) with its pass decision."""

    score: float
    success: bool
    threshold: float
    metric: str
    method: str = "deepeval"


class _Strict(Figures):
    model_config = ConfigDict(extra="forbid")



class Correlations(_Strict):
    pearson: Metric
    spearman: Metric
    kendall: Metric


class PerContext(Correlations):
    contexts_used: int
    contexts: int


class MetaEvaluation(_Strict):
    """One judge x dataset x task x criterion: how its scores track the human ones."""

    items: int
    unscored: int
    pooled: Correlations | None = None
    per_context: PerContext | None = None
    system_level: Correlations | None = None
    methods: dict[str, int] | None = None


class Agreement(_Strict):
    pearson: float
    spearman: float
    kendall: float


class Ceiling(_Strict):
    """Each annotator against the mean of the others, averaged over annotators."""

    pooled: Agreement | None = None
    per_context: Agreement | None = None
    annotators: int
    items: int
    #: The items the judge scored on this target, which the ceiling was kept to (None: no judge scored
    #: any, so the ceiling rests on every rated item).
    judged_items: int | None = None


class Validity(_Strict):
    """A judge's pooled correlation beside the human ceiling for the same target, where there is one."""

    spearman: Metric
    pearson: Metric
    human_ceiling_spearman: float | None = None
    human_ceiling_items: int | None = None


class Reference(_Strict):
    note: str
    datasets: tuple[str, ...] = ()  # the datasets whose figures these are: shown only when one is in the run
    columns: list[str]
    rows: dict[str, list[float]]


class GEvalSection(Section):
    """Keys of `meta`, `judge_validity` are `judge/dataset/task/criterion`; of `human_ceiling`,
    `dataset/task/criterion`."""

    meta: dict[str, MetaEvaluation]
    references: dict[str, Reference]
    human_ceiling: dict[str, Ceiling] | None = None
    judge_validity: dict[str, Validity]
    #: Per judge: verdicts scored directly, after a repair call, or unscored by cause (`llmjury.results.repairs`).
    repairs: dict[str, JudgeRepairs] = Field(default_factory=dict)
