"""Juror agreement: how often each juror of a jury voted with the jury's decision and with humans.

Report-time statistics over recorded votes, apart from the jury-spec grammar (`llmjury.jurors`)
that settings and the engine's callers parse at start-up: aggregation sits above judging.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import ConfigDict

from llmjury.family import Figures, Metric


@dataclass(frozen=True)
class JuryDecision:
    """One case a jury decided: the jury's winner and each juror's own vote, by juror label (None:
    none of that juror's runs counted)."""

    case_id: str
    winner: str | None
    votes: tuple[tuple[str, str | None], ...]


class JurorAgreement(Figures):
    """How often one juror's vote matched the jury's decision and, where labels exist, the people's."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    agreement_with_jury: Metric
    agreement_with_humans: Metric | None = None


def juror_agreement(decisions: Sequence[JuryDecision], human: Mapping[str, str] | None = None
                    ) -> dict[str, JurorAgreement]:
    """Per juror: agreement of its vote with the jury's decision and, where labels exist, with humans.

    `human` maps case id to the human label in the jury's vocabulary; a juror's vote of None is left out.
    """
    from llmjury.stats import proportion  # report time only: keeps scipy out of plugin start-up

    out: dict[str, JurorAgreement] = {}
    for name in sorted({judge for d in decisions for judge, _ in d.votes}):
        votes = [(d, vote) for d in decisions for judge, vote in d.votes if judge == name and vote is not None]
        with_humans = None
        if human:
            labelled = [(human[d.case_id], vote) for d, vote in votes if d.case_id in human]
            with_humans = Metric.model_validate(proportion(sum(h == w for h, w in labelled), len(labelled)))
        out[name] = JurorAgreement(
            agreement_with_jury=Metric.model_validate(proportion(sum(w == d.winner for d, w in votes), len(votes))),
            agreement_with_humans=with_humans)
    return out
