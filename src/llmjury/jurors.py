"""Juries: a judge spec naming several judges, `spec+spec` or `spec*k`, parsed once into a value.

`openai:gpt-4o+gemini:gemini-2.0-flash` is two jurors; `openai:gpt-4o*3` is the same model three
times, each juror drawing its own sample indices so their votes are independent samples, not one
answer counted three times. Families ask each juror, decide by majority, and record every
juror's vote (how often each agreed with the jury is `llmjury.results.agreement`'s, at report time).
Every role's spec is a `JurySpec`, parsed when settings are resolved: a role of one provider is a
jury of one, and nothing after start-up parses a spec's text again.
"""

from __future__ import annotations

from dataclasses import dataclass

from llmjury.errors import ConfigError
from llmjury.providers.base import ProviderSpec
from llmjury.redact import redact_spec


@dataclass(frozen=True)
class Juror:
    spec: ProviderSpec
    label: str
    index: int  # which of several jurors sharing one spec; offsets its sample indices


@dataclass(frozen=True)
class JurySpec:
    """A role's spec as written (what the run's summary records) and the jurors it names."""

    text: str
    jurors: tuple[Juror, ...]

    def __repr__(self) -> str:
        """The spec as written with its secrets masked (`pytest -l` shows locals holding it)."""
        return f"JurySpec(text={redact_spec(self.text)!r}, jurors={self.jurors!r})"

    @classmethod
    def parse(cls, text: str) -> JurySpec:
        """Jurors in order; jurors sharing a spec are numbered across the whole jury (`#1`, `#2`, ...).
        A ConfigError names the spec and what is wrong with it."""
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
        parsed = {spec: ProviderSpec.parse(spec) for spec in specs}
        jurors: list[Juror] = []
        for position, spec in enumerate(specs):
            label = str(parsed[spec])
            index = specs[:position].count(spec)
            repeated = specs.count(spec) > 1
            jurors.append(Juror(spec=parsed[spec], label=f"{label}#{index + 1}" if repeated else label, index=index))
        return cls(text=text, jurors=tuple(jurors))

    @property
    def label(self) -> str:
        """`kind:model` of a single provider, `jury(a, b)` of several: what verdicts and reports name,
        never a spec's options such as a base URL."""
        if len(self.jurors) == 1:
            return self.jurors[0].label
        return "jury(" + ", ".join(j.label for j in self.jurors) + ")"

    def provider(self, role: str) -> ProviderSpec:
        """The one provider a role that is asked for a plain answer names; a jury there is a ConfigError
        naming the role (several providers cannot give one answer)."""
        if len(self.jurors) != 1:
            raise ConfigError(f"role {role!r} is {self.label}: a role asked for one answer names one provider, "
                              f"not a jury of {len(self.jurors)}")
        return self.jurors[0].spec
