"""Juries: a judge spec naming several judges, `spec+spec` or `spec*k`.

`openai:gpt-4o+gemini:gemini-2.0-flash` is two jurors; `openai:gpt-4o*3` is the same model three
times, each juror drawing its own sample indices so their votes are independent samples, not one
answer counted three times. Families ask each juror, decide by majority, and record every
juror's vote (how often each agreed with the jury is `llmjury.agreement`'s, at report time).
"""

from __future__ import annotations

from dataclasses import dataclass

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
