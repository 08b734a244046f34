"""The qa_quality family's typed verdict results (one model per verdict kind) and its section."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from llmjury.families.qa_quality.evaluation import Grade, QualityEvaluation
from llmjury.model import Figures, Metric, Result, Section
from llmjury.results.repairs import JudgeRepairs


class Scores(Figures):
    """The judge's 1-5 score per rubric dimension."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    completeness: int = Field(ge=1, le=5)
    context_independence: int = Field(ge=1, le=5)
    technical_accuracy: int = Field(ge=1, le=5)


class GradeResult(Result):
    """Kind `grade`: a corpus pair graded by the rubric judge."""

    scores: Scores
    #: The grade computed from the scores by seed 001's section 4 rules (what the report counts).
    grade: Grade
    #: The judge's own `overall_quality`, kept beside the computed grade.
    judge_grade: Grade
    grade_disagrees: bool
    avg_score: float
    #: The judge's whole structured answer (reasons and suggestion included).
    evaluation: QualityEvaluation
    #: Judge attempts until the structured output validated.
    attempts: int = 1


class LabelledGrade(GradeResult):
    """Kind `human_label`: a pair people labelled, graded by the same judge to measure the judge."""

    #: The person's label (SemEval's Good / PotentiallyUseful / Bad, or a grade high ... remove).
    label: str


class RulesResult(Result):
    """Kind `rules`: a Slack course's filtering, no model call."""

    removed: dict[str, int]
    removed_answers: dict[str, int]
    kept: int



class _Part(Figures):
    model_config = ConfigDict(extra="forbid")


class GradeCounts(_Part):
    high: int = 0
    medium: int = 0
    low: int = 0
    remove: int = 0


class DimensionMetrics(_Part):
    """A mean with its t interval per rubric dimension."""

    completeness: Metric
    context_independence: Metric
    technical_accuracy: Metric


class PairFigures(_Part):
    """The grades of a set of corpus pairs (all, one course, one dataset)."""

    grades: GradeCounts
    remove_rate: Metric
    judge_grade_disagreement_rate: Metric
    avg_scores: DimensionMetrics


class RuleCounts(_Part):
    threads_removed: dict[str, int]
    answers_removed: dict[str, int]


class TokenSaving(_Part):
    """Estimated tokens of the raw export JSON against the seed's compact evaluation input."""

    raw_json_tokens_est: int
    evaluation_input_tokens_est: int
    saving: float | None


class JudgeValidity(_Part):
    """The judge's grades of one labelled dataset against its people's labels."""

    dataset: str
    spearman_avg_score_vs_label: Metric
    kendall_avg_score_vs_label: Metric
    #: Pairs per judge grade and human label.
    grade_by_label: dict[str, dict[str, int]]
    #: Of the pairs graded `remove`, the share people gave the lowest label (Bad, or remove).
    remove_precision_for_bad: Metric
    #: Of the pairs people gave the lowest label, the share graded `remove`.
    remove_recall_of_bad: Metric


class QASection(Section):
    """Corpus figures over every graded pair without a human label (remove rate first: the headline),
    by course and by dataset, the rules' removals, and the judge against people per labelled dataset."""

    remove_rate: Metric | None = None
    grades: GradeCounts | None = None
    judge_grade_disagreement_rate: Metric | None = None
    avg_scores: DimensionMetrics | None = None
    rules: RuleCounts | None = None
    token_saving: TokenSaving | None = None
    courses: dict[str, PairFigures] | None = None
    datasets: dict[str, PairFigures] | None = None
    judge_validity: dict[str, JudgeValidity] | None = None
    #: Per judge: verdicts scored directly, after a repair call, or unscored by cause (`llmjury.results.repairs`).
    repairs: dict[str, JudgeRepairs] = Field(default_factory=dict)
