"""Juries: a judge spec naming several judges, `spec+spec` or `spec*k`.

`openai:gpt-4o+gemini:gemini-2.0-flash` is two jurors; `openai:gpt-4o*3` is the same model three
times, each juror drawing its own sample indices so their votes are independent samples, not one
answer counted three times. Families ask each juror, decide by majority, and record every
juror's vote so reports can show how often each agreed with the jury and with humans.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from llmjury.errors import ConfigError
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


def juror_agreement(records: list[dict[str, Any]], human: dict[str, str] | None = None) -> dict[str, Any]:
    """Per juror: agreement of its vote with the jury's decision and, where labels exist, with humans.

    `records` are verdicts whose result holds `winner` and `jurors: [{judge, winner}]`; `human`
    maps case id to the human label in the same vocabulary.
    """
    from llmjury.stats import proportion  # report time only: keeps scipy out of plugin start-up

    out: dict[str, Any] = {}
    names = sorted({j["judge"] for r in records for j in r["result"].get("jurors", [])})
    for name in names:
        votes = [(r, j["winner"]) for r in records for j in r["result"]["jurors"] if j["judge"] == name
                 and j["winner"] is not None]
        entry = {"agreement_with_jury": proportion(sum(w == r["result"]["winner"] for r, w in votes), len(votes))}
        if human:
            labelled = [(human[r["case_id"]], w) for r, w in votes if r["case_id"] in human]
            entry["agreement_with_humans"] = proportion(sum(h == w for h, w in labelled), len(labelled))
        out[name] = entry
    return out
