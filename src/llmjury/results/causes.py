"""Why an unscored verdict holds no decision, as reports count it: the cause its judge runs were
read with (`Verdict.cause`), or a call never made (refused by the run's budget, waiting in a batch).

A verdict recorded without a cause (a family's own rule, a recording from an earlier version) is
classed by its error's first clause, so old runs re-aggregate into the same columns."""

from __future__ import annotations

from typing import get_args

from llmjury.chat import FILTERED_REASONS
from llmjury.errors import UnscoredCause
from llmjury.running.batch_lane import PENDING_CAUSE, pending_in_batch
from llmjury.running.budget import BUDGET_CAUSE, refused_by_budget

#: Every cause a report counts, in the order its tables list them.
CAUSES: tuple[str, ...] = (*get_args(UnscoredCause), BUDGET_CAUSE, PENDING_CAUSE)
#: An error's first clause, as earlier versions wrote it, to the cause it names.
_CLAUSES = {"unparseable": "no_decision", "unscored": "no_decision", "call failed": "failed", "refused": "refused",
            "empty answer": "empty", "truncated": "truncated", "filtered": "filtered"}


def counted_cause(cause: str | None, error: str | None) -> str:
    """The cause an unscored verdict is counted under (`CAUSES`); an error no cause names is counted
    under its own first clause rather than hidden."""
    if refused_by_budget(error):
        return BUDGET_CAUSE
    if pending_in_batch(error):
        return PENDING_CAUSE
    if cause:
        return cause
    text = (error or "").strip()
    clause = text.split(":")[0].split(" (")[0].strip()
    if clause == "refused" and text.removeprefix("refused:").strip() in FILTERED_REASONS:  # a filter, as written before
        return "filtered"
    return _CLAUSES.get(clause, clause or "failed")


def ordered(counts: dict[str, int]) -> dict[str, int]:
    """Counts by cause in `CAUSES`' order, any other cause after them by name."""
    rank = {cause: i for i, cause in enumerate(CAUSES)}
    return dict(sorted(counts.items(), key=lambda item: (rank.get(item[0], len(rank)), item[0])))
