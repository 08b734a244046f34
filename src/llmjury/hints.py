"""The nearest known word to a mistyped one, for the "did you mean" of a start-up error."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """` (did you mean 'x'?)` when a known word is close to `word`, else nothing."""
    close = difflib.get_close_matches(word, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
