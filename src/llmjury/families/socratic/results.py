"""What the socratic family records per verdict, and the figures it aggregates them into.

Two verdict kinds: `pairwise` (our tutor against the baseline on a simulated, a real or a
pre-collected dialogue) and `human_preference` (the same judge on two real tutors' replies that
people annotated, MRBench).
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from llmjury.model import Figures, Metric, Result, Section
from llmjury.results.agreement import JurorAgreement
from llmjury.results.repairs import JudgeRepairs

Side = Literal["ours", "baseline", "tie"]
Confidence = Literal["unanimous", "majority", "no_consensus"]
HumanLabel = Literal["a", "b", "tie"]
Source = Literal["simulated", "mathdial", "responses"]



class _Strict(Figures):
    model_config = ConfigDict(extra="forbid", frozen=True)


class JudgeRun(_Strict):
    """One judge call: where our reply sat, what the judge answered, and what that means."""

    ours_position: Literal["A", "B"]
    decision: Literal["a", "b", "c"] | None
    juror: str
    preferred: Side | None
    """None when the run was not counted (failed call, refusal, unreadable answer)."""
    error: str | None
    attempts: int


class AspectVerdict(_Strict):
    """The robust verdict on one aspect (`aspects=separate`)."""

    winner: Side
    confidence: Confidence
    counted_runs: int


class JurorVote(_Strict):
    """One juror's own majority, when a jury judges."""

    judge: str
    winner: Side | None


class JudgedPair(Result):
    """The robust k-run majority between the reply in the "ours" slot and the other one."""

    ours_chars: int | None = None
    baseline_chars: int | None = None
    winner: Side | None = None
    """None when no run counted: the verdict is then unscored."""
    confidence: Confidence | None = None
    counted_runs: int = 0
    vote_counts: dict[str, int] = Field(default_factory=dict)
    runs: list[JudgeRun] = Field(default_factory=list)
    jurors: list[JurorVote] | None = None


class PairwiseResult(JudgedPair):
    """Kind `pairwise`: our tutor against the baseline teacher on one dialogue context."""

    source: Source
    dataset: str
    """The dataset's label (`simulated`, the MathDial file's name, the responses file's name)."""
    subject: str | None = None
    ours_name: str = "ours"
    baseline_name: str = "baseline"
    aspects: dict[str, AspectVerdict | None] | None = None


class HumanPreferenceResult(JudgedPair):
    """Kind `human_preference`: the judge on two annotated tutors' replies (tutor A in the "ours" slot)."""

    dataset: str
    human: HumanLabel
    """The people's preference from the summed annotation scores."""
    human_by_dimension: dict[str, HumanLabel]
    """The people's preference on each dimension the file annotates."""


class SignTest(_Strict):
    wins: int
    losses: int
    n: int
    p_value: float | None


class AspectRates(_Strict):
    win_rate: Metric
    baseline_win_rate: Metric
    tie_rate: Metric


class RobustTotals(_Strict):
    """Seed 003's `summary` block, key for key."""

    evaluation_completed: str
    num_evaluation_runs: int
    total_subsets: int
    successful_evaluations: int
    final_verdict_distribution: dict[str, int]
    confidence_distribution: dict[str, int]
    # null when nothing was evaluated: n/a, never a 0.0 win rate
    ours_win_rate: float | None
    baseline_win_rate: float | None
    tie_rate: float | None
    unanimous_agreement_rate: float | None


class RobustEntry(_Strict):
    verdicts: list[str]
    verdict_counts: dict[str, int]
    final_verdict: str
    confidence: Confidence


class RobustEvaluation(_Strict):
    """Seed 003's robust-evaluation file."""

    summary: RobustTotals
    aggregated_results: dict[str, RobustEntry]


class Comparison(Figures):
    """Our tutor against the baseline on one source of dialogues."""

    model_config = ConfigDict(extra="forbid")
    dataset: str | None = None
    #: The names `ours_name` / `baseline_name` gave the two tutors: the tables' row labels.
    ours_name: str | None = None
    baseline_name: str | None = None
    #: Subsets whose dialogue and replies repeat another's word for word, counted once: kept id → the others.
    identical: dict[str, list[str]] | None = None
    win_rate: Metric | None = None
    baseline_win_rate: Metric | None = None
    tie_rate: Metric | None = None
    decisive_win_rate: Metric | None = None
    sign_test: SignTest | None = None
    unanimous_rate: Metric | None = None
    final_verdicts: dict[str, int] | None = None
    confidence: dict[str, int] | None = None
    counted_runs: dict[str, int] | None = None
    position_consistency: Metric | None = None
    longer_wins_rate: Metric | None = None
    length_controlled_win_rate: Metric | None = None
    by_subject: dict[str, Metric] | None = None
    seed003: RobustEvaluation | None = None
    aspects: dict[str, AspectRates] | None = None
    jury: dict[str, JurorAgreement] | None = None


class DimensionAgreement(_Strict):
    agreement_with_ties: Metric
    agreement_without_ties: Metric
    human_tie_rate: Metric


class HumanAgreement(Figures):
    """The judge against people's preferences between two tutors."""

    model_config = ConfigDict(extra="forbid")
    jury: dict[str, JurorAgreement] | None = None
    dataset: str
    agreement_with_ties: Metric
    agreement_without_ties: Metric
    human_tie_rate: Metric
    judge_tie_rate: Metric
    position_consistency: Metric
    chance_agreement_with_ties: float | None
    dimensions: list[str]
    by_dimension: dict[str, DimensionAgreement]


class SocraticSection(Comparison, Section):
    """The simulated comparison at the top (seed 000's figures), real and pre-collected dialogues
    and the judge's agreement with people beside it."""

    mathdial: Comparison | None = None
    responses: Comparison | None = None
    judge_validity: HumanAgreement | None = None
    #: Per judge: verdicts scored directly, after a repair call, or unscored by cause (`llmjury.results.repairs`).
    repairs: dict[str, JudgeRepairs] = Field(default_factory=dict)
