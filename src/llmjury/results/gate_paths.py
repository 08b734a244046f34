"""Which steps a gate path may take inside a family's section, known from the section's pydantic
model before the run: a misspelt step after a table's entry (`custom.score.helpful.meen`, the name
`helpful` is the suite's own) stops the run at start-up instead of failing its gate once paid for."""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from llmjury.model import Metric

#: The steps after a metric: its interval's bounds, or its point.
METRIC_STEPS = ("low", "high", "value")


@dataclass(frozen=True)
class Misstep:
    """The first step of a path that its model does not admit, and the steps it admits there."""

    at: int
    admitted: tuple[str, ...]


def misstep(annotation: Any, steps: Sequence[str], at: int = 0) -> Misstep | None:
    """Walk `steps` down `annotation` (a section field's type): a model admits its fields (and a
    path may not end at one), a `dict[str, X]` any key (the run names them) and then what X admits,
    a metric its bounds, a number nothing. None when every step is admitted, or where the model
    cannot tell (`Any`, a model that keeps extra fields)."""
    annotation = _without_none(annotation)
    if at == len(steps):  # a path ends at a figure: a metric or a number, not a table of them
        model = isinstance(annotation, type) and issubclass(annotation, BaseModel) and annotation is not Metric
        open_ended = model and annotation.model_config.get("extra") == "allow"
        return Misstep(at, tuple(annotation.model_fields)) if model and not open_ended else None
    if annotation is Metric:
        return None if at == len(steps) - 1 and steps[at] in METRIC_STEPS else Misstep(at, METRIC_STEPS)
    origin = typing.get_origin(annotation)
    if origin is dict:
        return misstep(typing.get_args(annotation)[1], steps, at + 1)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation.model_config.get("extra") == "allow":
            return None
        field = annotation.model_fields.get(steps[at])
        if field is None:
            return Misstep(at, tuple(annotation.model_fields))
        return misstep(field.annotation, steps, at + 1)
    if annotation in (int, float, bool, str):
        return Misstep(at, ())
    return None


def _without_none(annotation: Any) -> Any:
    """`X | None` as X; other unions as they are (the walk cannot tell which member is meant)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        return members[0] if len(members) == 1 else Any
    return annotation
