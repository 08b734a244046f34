"""How a pairwise file means its columns and labels, declared rather than guessed.

A pairwise set often comes as `prompt, response 1, response 2, label` with labels `0`/`1`/`2`. Which
column is which answer, and which label value means which answer, cannot be read off the data: a file
whose labels are all `1` is the first answer if counting starts at 1 and the second if it starts at 0.
So the columns are named by `arena.pairs_columns` (or the accepted spellings of `pairs.py`), a label
value is read through `arena.pairs_labels` when given, and without it a numeric label is refused.

A judge's verdicts recorded in one file per answer order (`arena.pairs_verdicts_ab`, `_ba`) are
declared in their frame: `as_shown` labels name the answers in the order the judge saw them (in the
`ba` file its first answer is the item's answer B), `as_items` labels name the item's own A and B.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from llmjury.families.arena.results import Winner

ROLES = ("prompt", "answer_a", "answer_b", "label")
SIDES: dict[str, Winner] = {"a": "model_a", "b": "model_b", "tie": "tie"}
#: Label words read without a declared mapping: they say which answer they mean.
WORDS: dict[str, Winner] = {**SIDES, "model_a": "model_a", "model_b": "model_b", "tie (bothbad)": "tie (bothbad)"}
NUMBER = re.compile(r"^[+-]?\d+(\.\d*)?$")
FLIP: dict[Winner, Winner] = {"model_a": "model_b", "model_b": "model_a", "tie": "tie",
                              "tie (bothbad)": "tie (bothbad)"}
Frame = Literal["as_shown", "as_items"]
LABELS_OPTION = "arena.pairs_labels"


def parse_columns(text: str) -> dict[str, str]:
    """`PROMPT,ANSWER_A,ANSWER_B[,LABEL]`: the file's column for each role, in that order."""
    names = [name.strip() for name in text.split(",")]
    if not 3 <= len(names) <= 4 or not all(names):
        raise ValueError(f"{text!r}: name 3 or 4 columns, in this order: the prompt, answer A, answer B and "
                         "optionally the label, e.g. prompt,response 1,response 2,label")
    if len(set(names)) != len(names):
        raise ValueError(f"{text!r}: a column is named twice")
    return dict(zip(ROLES, names, strict=False))


def parse_labels(text: str) -> dict[str, Winner]:
    """`VALUE:SIDE,...` with SIDE one of a, b, tie: what each label value in the file means."""
    out: dict[str, Winner] = {}
    for part in text.split(","):
        value, sep, side = part.rpartition(":")
        value, side = value.strip(), side.strip().lower()
        if not sep or not value or side not in SIDES:
            raise ValueError(f"{part.strip()!r}: write VALUE:SIDE with SIDE a, b or tie, e.g. 0:a,1:b,2:tie")
        if normal(value) in out:
            raise ValueError(f"label value {value!r} is declared twice")
        out[normal(value)] = SIDES[side]
    if not {"model_a", "model_b"} <= set(out.values()):
        raise ValueError(f"{text!r}: declare a value for each answer, a and b")
    return out


def normal(value: Any) -> str:
    """A label as text: `1`, `1.0` and `"1"` are one value; words are compared in lower case."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = "" if value is None else str(value).strip()
    if NUMBER.match(text) and float(text).is_integer():
        return str(int(float(text)))
    return text.lower()


class PairMapping(BaseModel):
    """The declared columns (role -> the file's column) and label values (value -> winner)."""

    model_config = ConfigDict(frozen=True)
    columns: dict[str, str] = {}
    labels: dict[str, Winner] | None = None

    def winner(self, value: Any) -> Winner | None:
        """The winner a label or verdict value means; blank is None. Raises ValueError with the cause
        when the value is not declared, or is a number and no mapping says which answer it counts."""
        text = normal(value)
        if not text:
            return None
        if self.labels is not None:
            if text in self.labels:
                return self.labels[text]
            raise ValueError(f"{text!r} is none of the values {LABELS_OPTION} declares ({', '.join(self.labels)})")
        if NUMBER.match(text):
            raise ValueError(f"{text!r} is a number, which could count the answers from 0 or from 1; declare "
                             f"what each value means with --llm-option {LABELS_OPTION}=0:a,1:b,2:tie "
                             "(or 1:a,2:b,...)")
        if text not in WORDS:
            raise ValueError(f"{text!r} is not one of a, b, tie (declare other values with {LABELS_OPTION})")
        return WORDS[text]
