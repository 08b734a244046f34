"""Juries: a judge spec naming several judges, `spec+spec` or `spec*k`.

`openai:gpt-4o+gemini:gemini-2.0-flash` is two jurors; `openai:gpt-4o*3` is the same model three
times, each juror drawing its own sample indices so their votes are independent samples, not one
answer counted three times. Families ask each juror, decide by majority, and record every
juror's vote so reports can show how often each agreed with the jury and with humans.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import ConfigDict

from llmjury.errors import ConfigError
from llmjury.model import Figures, Metric
from llmjury.providers.base import ProviderSpec


@dataclass(frozen=True)
class Juror:
    spec: str
    label: str
    index: int  # which of several jurors sharing one spec; offsets its sample indices


def parse_jury(text: str) -> list[Juror]:
    """Jurors in order; jurors sharing a spec are numbered across the whole jury (`#1`, `#2`, ...)."""
    specs: list[str] = []
    for part in (p.strip() for p in text.split("+")):
        if not part:
            raise ConfigError(f"jury spec {text!r}: empty juror between '+'")
        spec, _, count = part.rpartition("*") if "*" in part else (part, "", "1")
        try:
            k = int(count)
        except ValueError as exc:
            raise ConfigError(f"jury spec {text!r}: '*{count}' is not a whole number of jurors") from exc
        if k < 1:
            raise ConfigError(f"jury spec {text!r}: a juror count must be at least 1")
        specs += [spec] * k
    jurors: list[Juror] = []
    for spec in specs:
        label = str(ProviderSpec.parse(spec))
        index = sum(j.spec == spec for j in jurors)
        repeated = specs.count(spec) > 1
        jurors.append(Juror(spec=spec, label=f"{label}#{index + 1}" if repeated else label, index=index))
    return jurors


def jury_label(jurors: list[Juror]) -> str:
    return jurors[0].label if len(jurors) == 1 else "jury(" + ", ".join(j.label for j in jurors) + ")"


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
