"""What a prompt template declares about the decision its answers hold, in the template's own words.

A template written in another language (or with other option names) declares them beside it, in
`reading.toml` in its prompts directory (the project's before the bundled one, like
`generation.toml`):

    ["socratic/judge.j2"]
    language = "ko"                                  # the repair call asks in it
    format = ["### (가) 선생님 A", "### (나) 선생님 B", "### (다) 동등"]  # the decisions as it asks them
    [ "socratic/judge.j2".labels ]                    # more names per option value
    a = ["(가) 선생님 A", "가"]
    b = ["(나) 선생님 B", "나"]
    c = ["(다) 동등", "다"]

The readers already know the role and decision words of English, Korean and Italian; a declaration
adds the names only this template uses. `format` is a list of the decision lines the template
allows (a repair call joins them with its language's "or") or the whole format as text, shown as
it stands. Without `language`, a template's language is told from its own text
(`PromptLibrary.language`). Each entry is checked when the prompts are loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from llmjury.asked import Asked

#: The languages a repair call can ask in (`prompts/core/repair.j2`).
LANGUAGES = ("en", "ko", "it")
KEYS = frozenset({"language", "format", "labels"})


@dataclass(frozen=True)
class Declaration:
    """A template's language, more names for its options, and its decision's format."""

    language: str | None = None
    labels: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: The decision's format as the template asks for it (None: the reader's own).
    asked: Asked | None = None
    #: Where it was declared (`<prompts>/reading.toml [template]`), for errors.
    source: str = ""

    @classmethod
    def parse(cls, entry: Any, where: str) -> Declaration:
        """An entry of `reading.toml`; ValueError naming `where` and the fault."""
        if not isinstance(entry, dict):
            raise ValueError(f"{where}: not a table")
        unknown = set(entry) - KEYS
        if unknown:
            raise ValueError(f"{where}: unknown keys {sorted(unknown)}; use {sorted(KEYS)}")
        language = entry.get("language")
        if language is not None and language not in LANGUAGES:
            raise ValueError(f"{where}: language {language!r} is none of {', '.join(LANGUAGES)}")
        asked = _format(entry.get("format"), where)
        labels = entry.get("labels", {})
        if not isinstance(labels, dict) or not all(
                isinstance(names, list) and names and all(isinstance(n, str) and n.strip() for n in names)
                for names in labels.values()):
            raise ValueError(f"{where}: labels must map each option to a list of names")
        return cls(language, {value: tuple(names) for value, names in labels.items()}, asked, where)


def _format(value: Any, where: str) -> Asked | None:
    """A declaration's `format`: the decision lines it allows (a list), or the whole format as text."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip():
        return Asked(text=value)
    if isinstance(value, list) and value and all(isinstance(line, str) and line.strip() for line in value):
        return Asked(alternatives=tuple(value))
    raise ValueError(f"{where}: format must be a list of the decision lines the template allows, or the "
                     "decision's format as text")
