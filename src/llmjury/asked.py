"""The decision's format as a prompt asks for it, which a repair call asks for again.

It is held in parts, not as one English sentence, so that `prompts/core/repair.j2` can say it in the
asking template's language: the decision lines the prompt allows (joined by that language's "or"),
a form whose lines each end with a score, a scale, the fields of a JSON object, or the format as a
template declares it in its own words (`reading.toml`), shown as it stands.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Asked:
    """What the prompt asks the decision to look like; exactly one of its shapes is set."""

    #: The decision lines the prompt allows, one of which is the answer (`### (a) Teacher A`, `[[A]]`).
    alternatives: tuple[str, ...] = ()
    #: A form's lines, each to end with a score on `scale` (`- Score of Model 1:`).
    form: tuple[str, ...] = ()
    #: The scale a score is asked on: (lowest, highest); alone, the answer is the score alone.
    scale: tuple[int, int] | None = None
    #: The fields of the JSON object that is the answer.
    fields: tuple[str, ...] = ()
    #: The values the JSON object's `decision` field allows (with `fields`).
    values: tuple[str, ...] = ()
    #: The format as a template declares it in its own words: shown as it stands.
    text: str = ""

    @property
    def first(self) -> str:
        """Its first line, as a reader's cause names it ("no decision in the prompt's format (### A ...)")."""
        lines = self.alternatives or self.form or tuple(self.text.splitlines()) or self.fields
        return lines[0] if lines else ""
