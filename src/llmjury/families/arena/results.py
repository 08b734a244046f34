"""The arena's typed verdict results, one model per verdict kind, and its typed aggregate section.

Verdict kinds:
- `battle`: a live judge's decision on two answers, asked in both orders (seed 002, MRBench
  tutors, pairwise items);
- `human_label`: a person's (or annotation rule's) preference on a pair (MRBench, PRD, pairwise items);
- `recorded`: a judge's verdict recorded elsewhere and replayed (pairwise items' per-order
  verdicts, seed 002 outcome files, Chatbot Arena logs, MT-Bench judgements);
- `llmbar_replay`: an LLMBar judge file's two completions, read by our parser;
- `prd_replay`: a PRD reviewer's recorded score.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from llmjury.majority import Confidence
from llmjury.model import Figures, Metric, Result, Section
from llmjury.results.agreement import JurorAgreement
from llmjury.results.repairs import JudgeRepairs

Winner = Literal["model_a", "model_b", "tie", "tie (bothbad)"]
Order = Literal["ab", "ba"]
BATTLE, HUMAN, RECORDED, LLMBAR, PRD = "battle", "human_label", "recorded", "llmbar_replay", "prd_replay"


class OrderRun(Figures):
    """One judge run in one answer order; `winner` is already mapped back to the pair's order."""

    model_config = ConfigDict(frozen=True)
    order: Order
    winner: Winner | None = None
    error: str | None = None
    juror: str = ""
    #: What the judge wrote in this order (battle_records.csv keeps both orders').
    response: str | None = None


class JurorVote(Figures):
    """One juror's vote on a battle: its orders agreed (`consistent`) or its vote is a tie."""

    model_config = ConfigDict(frozen=True)
    judge: str
    counted_runs: int
    consistent: bool
    winner: Winner | None = None


class BattleResult(Result):
    """A live judge's decision; None `winner` when no run could be scored (the verdict is unscored)."""

    winner: Winner | None = None
    consistent: bool = True
    counted_runs: int = 0
    confidence: Confidence | None = None
    """A jury's agreement over its jurors' votes (one judge records none)."""
    jurors: list[JurorVote] | None = None
    runs: list[OrderRun] = Field(default_factory=list)

    def by_order(self, order: Order) -> Winner | None:
        """The decision in one answer order: its scored runs if they agree, a tie if not, None if none."""
        winners = {r.winner for r in self.runs if r.order == order and r.winner is not None}
        return None if not winners else winners.pop() if len(winners) == 1 else "tie"


class HumanLabel(Result):
    winner: Winner


class RecordedVerdict(Result):
    """A recorded judge's decision; `ab` / `ba` are its verdicts per answer order when recorded."""

    winner: Winner
    ab: Winner | None = None
    ba: Winner | None = None

    def by_order(self, order: Order) -> Winner | None:
        return self.ab if order == "ab" else self.ba


class LLMBarReplay(Result):
    """`original` / `swapped`: the parsed choice per order (None: unparsed), `gold` the label."""

    winner: Winner
    original: Winner | None
    swapped: Winner | None
    gold: Winner
    recorded: list[str]


class PRDReplay(Result):
    winner: Winner
    parsed_matches_recorded: bool


class Leaderboard(Figures):
    """One set of battles' ratings: Bradley-Terry (primary), online Elo, ranks and win-rate matrices."""

    battles: int
    anchor: str
    rating: dict[str, Metric]
    elo: dict[str, Metric]
    rank: dict[str, Metric]
    order: list[str]
    tie_rate: Metric
    win_rates: dict[str, dict[str, float | None]]
    predicted_win_rates: dict[str, dict[str, float | None]]


class Agreement(Figures):
    with_ties: Metric
    without_ties: Metric


class Ranking(Figures):
    models: int
    spearman: float | None = None
    spearman_p: float | None = None
    kendall: float | None = None
    kendall_p: float | None = None


class AgainstHumans(Figures):
    """One judge against the human labels of the same pairs: per pair, per order, and as a ranking."""

    dataset: str
    judge: str
    battles: int
    agreement: Agreement
    correct_both_orders: Metric | None = None
    swap_consistency: Metric | None = None
    ranking: Ranking | None = None
    judge_order: list[str]
    human_order: list[str]
    human_order_same_battles: list[str]


class HumanComparison(AgainstHumans):
    """A dataset with human labels: the live judge's comparison (empty when only recorded judges
    ran), and each recorded judge's under `recorded`."""

    judge: str | None = None  # type: ignore[assignment]
    battles: int = 0
    agreement: Agreement | None = None  # type: ignore[assignment]
    judge_order: list[str] = Field(default_factory=list)
    human_order_same_battles: list[str] = Field(default_factory=list)
    recorded: dict[str, AgainstHumans] | None = None


class PRDReviewer(Figures):
    agreement_with_ties: Metric
    agreement_without_ties: Metric
    swap_consistency: Metric
    parser_matches_recorded: Metric
    order: list[str]
    spearman_with_human_ranking: float | None = None
    models: int


class PRDValidity(Figures):
    human_majority_rule: str
    reference: dict[str, str | tuple[float, float, float]]
    reviewers: dict[str, PRDReviewer]
    human_order: list[str]


class LLMBarFigures(Figures):
    accuracy_original: Metric
    accuracy_swapped: Metric
    accuracy: float | None = None
    correct_both: Metric
    positional_agreement: Metric
    positional_agreement_parsed: Metric
    unparsed: int
    published_accuracy_percent: float
    published_agreement_percent: float


class JudgeValidity(Figures):
    """Judges measured against people: PRD and LLMBar by name, and every dataset with human labels
    (MRBench, pairwise items) under its own name."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, HumanComparison]
    prd: PRDValidity | None = None
    llmbar: dict[str, LLMBarFigures] | None = None

    @model_serializer(mode="wrap")
    def _present_blocks(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Only the blocks a run measured: an absent PRD or LLMBar block is left out, not null."""
        return {key: value for key, value in handler(self).items() if value is not None}


class SelfPreference(Figures):
    model: str
    own_battles_win_rate: Metric


class ArenaSection(Section):
    """The main leaderboard's figures up front (`main` names it), then every leaderboard and the
    judges' validity against people."""

    main: str | None = None
    rating: dict[str, Metric] | None = None
    elo: dict[str, Metric] | None = None
    rank: dict[str, Metric] | None = None
    tie_rate: Metric | None = None
    longer_wins_rate: Metric | None = None
    self_preference: SelfPreference | None = None
    swap_consistency: Metric | None = None
    jury: dict[str, JurorAgreement] | None = None
    judge_validity: JudgeValidity | None = None
    leaderboards: dict[str, Leaderboard] = Field(default_factory=dict)
    #: Per judge: verdicts scored directly, after a repair call, or unscored by cause (`llmjury.results.repairs`).
    repairs: dict[str, JudgeRepairs] = Field(default_factory=dict)
