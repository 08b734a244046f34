"""Subsets that are the same text: judged once, and counted once.

Two subsets can hold the same dialogue word for word (a simulated teacher and student at
temperature 0 given the same persona and question; a seed file listing one dialogue under two
ids), and deterministic tutors then give them the same replies. The judge is asked once: the
replies' positions follow from this key, not the case id, so in every position mode (`random`
too) both subsets ask the very same prompts and the cache answers the second. Counting both
verdicts would still double one judgement in every rate, interval and sign test. Each judged pair
carries a key of its dialogue and both replies; the report keeps the first subset of a key (by case
id) and names the others.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import TypeVar

from llmjury.families.socratic.dialogue import Turn
from llmjury.judgement.verdicts import Verdict

#: The verdict attribute holding the key.
KEY = "text_key"
T = TypeVar("T")


def text_key(context: Sequence[Turn], ours: str, baseline: str) -> str:
    """The same for two subsets exactly when their dialogue and both replies are the same text."""
    text = json.dumps([[[t.speaker, t.text] for t in context], ours, baseline], ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def counted_once(pairs: Sequence[tuple[Verdict, T]]) -> tuple[list[tuple[Verdict, T]], dict[str, list[str]]]:
    """The pairs with each text counted once (the first case id of a text kept), and kept id → the others."""
    kept: dict[str, tuple[Verdict, T]] = {}
    others: dict[str, list[str]] = {}
    out = []
    for pair in sorted(pairs, key=lambda p: p[0].case_id):
        key = pair[0].attributes.get(KEY)
        if key is None or key not in kept:
            out.append(pair)
            if key is not None:
                kept[key] = pair
            continue
        others.setdefault(kept[key][0].case_id, []).append(pair[0].case_id)
    return out, others
