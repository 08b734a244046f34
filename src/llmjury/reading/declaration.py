"""What a prompt template declares about the decision its answers hold, in the template's own words.

A template written in another language (or with other option names) declares them beside it, in
`reading.toml` in its prompts directory (the project's before the bundled one, like
`generation.toml`):

    ["socratic/judge.j2"]
    language = "ko"                                  # the repair call asks in it
    format = "### (a) 선생님 A\\nor\\n### (b) 선생님 B"   # the decision as the template asks it
    [ "socratic/judge.j2".labels ]                    # more names per option value
    a = ["(가) 선생님 A", "가"]
    b = ["(나) 선생님 B", "나"]

The readers already know the role and decision words of English, Korean and Italian; a declaration
adds the names only this template uses. Each entry is checked when the prompts are loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: The languages a repair call can ask in (`prompts/core/repair.j2`).
LANGUAGES = ("en", "ko", "it")
KEYS = frozenset({"language", "format", "labels"})


@dataclass(frozen=True)
class Declaration:
    """A template's language, more names for its options, and its decision's format."""

    language: str | None = None
    labels: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    expected: str | None = None
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
        expected = entry.get("format")
        if expected is not None and not (isinstance(expected, str) and expected.strip()):
            raise ValueError(f"{where}: format must be the decision's format as text")
        labels = entry.get("labels", {})
        if not isinstance(labels, dict) or not all(
                isinstance(names, list) and names and all(isinstance(n, str) and n.strip() for n in names)
                for names in labels.values()):
            raise ValueError(f"{where}: labels must map each option to a list of names")
        return cls(language, {value: tuple(names) for value, names in labels.items()}, expected, where)
