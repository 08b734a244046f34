"""Gates checked at start-up, before a model is called or a verdict read: every family a gate reads
has a case in the run (`check_selection`), and every metric it names exists and can be read, with
the nearest name or the family's metrics when it does not (`check_metrics`). A gate that could only
fail at the end is refused where the run costs nothing yet."""

from __future__ import annotations

import types
import typing
import warnings
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from llmjury.errors import ConfigError
from llmjury.headline import covers
from llmjury.hints import did_you_mean
from llmjury.judgement.verdicts import CUSTOM
from llmjury.model import FamilySummary, Figures, Metric
from llmjury.results.gate_paths import METRIC_STEPS, misstep
from llmjury.results.gates import BOUNDS, DELTA, EQUALITY_ON_INTERVAL, Gate, delta_split

if TYPE_CHECKING:
    from llmjury.family import AnyFamily


def check_selection(gates: Sequence[Gate], selected: Collection[str], labels: Collection[str],
                    known: Collection[str]) -> None:
    """Every family a gate reads has a case in this run, else a ConfigError before any model call:
    a gate on a family that `-k`, `-m` or `--llm-sample` left out (or a misspelt one), or on a family
    only your own cases name (`labels`: their verdicts are under custom), could only fail at the end,
    after the run has been paid for."""
    for gate in gates:
        for family in gate.families:
            if family in selected:
                continue
            if family in labels:
                raise ConfigError(f"gate {gate.text!r}: {family!r} is the family your cases name, and no family "
                                  f"of that name reports metrics: your own tests' verdicts are under {CUSTOM} "
                                  f"({CUSTOM}.compare.TEST.win_rate, {CUSTOM}.score.TEST.mean, {CUSTOM}.unscored_rate)")
            these = f"this run's cases are of {', '.join(sorted(selected))}" if selected else "no case is selected"
            if family in known:
                raise ConfigError(f"gate {gate.text!r}: no case of family {family!r} is selected "
                                  f"(by -k, -m or --llm-sample); {these}")
            hint = did_you_mean(family, [*known, *selected])
            raise ConfigError(f"gate {gate.text!r}: unknown family {family!r}{hint}; {these}")


#: Core counts kept for one minor version after another replaced them (CHANGELOG's policy): a gate
#: naming one still works and warns at start-up, naming its replacement.
DEPRECATED_COUNTS = {"unscored_reasons": ("0.2.0", "0.3.0", "unscored_causes")}


#: How a pytest run gets the baseline a difference needs.
BASELINE_OPTION = "give --llm-baseline PATH"
#: How the saved-verdict commands (report, merge, replay) get it: they take none.
COMPARE_COMMAND = "compare two runs with llmjury compare CURRENT BASELINE"


def check_metrics(gates: Sequence[Gate], families: Mapping[str, AnyFamily], *, baseline: bool,
                  baseline_hint: str = BASELINE_OPTION) -> None:
    """Every metric a gate names on a known family exists in its section (or the core's counts), and a
    delta gate names a headline metric and has a baseline (else `baseline_hint` says how to give one):
    a ConfigError at start-up, with the nearest name, instead of a failed gate after the run has been
    paid for or its verdicts read."""
    for gate in gates:
        for path in [gate.left] + ([gate.right] if isinstance(gate.right, tuple) else []):
            family = families.get(path[0])
            if family is None or len(path) < 2:
                continue  # a run-wide section, or a family whose figures start-up cannot know
            split = delta_split(path)
            if split is not None:
                _check_delta(gate, family, split[1], split[2], baseline, baseline_hint)
                continue
            fields = family.section.model_fields
            known = {**fields, **FamilySummary.model_fields}
            unknown = path[1] not in known
            if unknown or not _gateable(known[path[1]].annotation):
                metrics = [name for name, field in known.items()
                           if name not in DEPRECATED_COUNTS and _gateable(field.annotation)]
                hint = did_you_mean(path[1], metrics) if unknown else ""
                what = (f"{family.name} has no metric {path[1]!r}" if unknown
                        else f"{family.name}.{path[1]} holds no figure a gate can read")
                raise ConfigError(f"gate {gate.text!r}: {what}{hint or '; its metrics are ' + ', '.join(metrics)}")
            if path[1] in DEPRECATED_COUNTS:
                since, removed, instead = DEPRECATED_COUNTS[path[1]]
                warnings.warn(f"gate {gate.text!r}: {path[1]} is deprecated since llmjury {since} and will be "
                              f"removed in {removed}: use {instead}", DeprecationWarning, stacklevel=2)
            if gate.op == "==" and path is gate.left and path[-1] not in ("low", "high") \
                    and path[1] in fields and _holds_metrics(fields[path[1]].annotation):
                raise ConfigError(f"gate {gate.text!r}: {EQUALITY_ON_INTERVAL}")
            wrong = misstep(fields[path[1]].annotation, path[2:]) if path[1] in fields else None
            if wrong is not None:
                _refuse_step(gate, path, 2 + wrong.at, wrong.admitted)


def _refuse_step(gate: Gate, path: tuple[str, ...], at: int, admitted: tuple[str, ...]) -> None:
    before, after = ".".join(path[:at]), ".".join(path[at:])
    if set(admitted) == set(METRIC_STEPS):
        raise ConfigError(f"gate {gate.text!r}: after {before} write nothing, .low, .high or .delta, not "
                          f"{after!r}{did_you_mean(after, [*BOUNDS, DELTA])}")
    if at == len(path):
        raise ConfigError(f"gate {gate.text!r}: {before} holds figures, not one: name one of "
                          f"{', '.join(admitted)}")
    if not admitted:
        raise ConfigError(f"gate {gate.text!r}: {before} is a number: nothing goes after it, not {after!r}")
    hint = did_you_mean(path[at], admitted)
    raise ConfigError(f"gate {gate.text!r}: {before} has no {path[at]!r}{hint or '; it has ' + ', '.join(admitted)}")


def _gateable(annotation: Any) -> bool:
    """Can a gate reach a figure in a field: a metric or a number, alone, as a value of a table, or in
    a model's fields? (A gate's path steps through names, never into a list.)"""
    if annotation in (Metric, int, float):
        return True
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return any(_gateable(field.annotation) for field in annotation.model_fields.values())
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is dict:
        return _gateable(args[-1])
    return origin in (typing.Union, types.UnionType) and any(map(_gateable, args))


def _holds_metrics(annotation: Any) -> bool:
    """Is a section field a metric or a table of them (`dict[str, Metric]`, a model holding some)?"""
    if annotation is Metric:
        return True
    if isinstance(annotation, type) and issubclass(annotation, Figures):
        return any(_holds_metrics(field.annotation) for field in annotation.model_fields.values())
    return any(_holds_metrics(arg) for arg in typing.get_args(annotation))


def _check_delta(gate: Gate, family: AnyFamily, metric: tuple[str, ...], rest: tuple[str, ...], baseline: bool,
                 baseline_hint: str) -> None:
    if not covers(family.headline, metric):
        names = ", ".join(family.headline) or "none"
        raise ConfigError(f"gate {gate.text!r}: differences are computed for {family.name}'s headline metrics "
                          f"({names}), not {'.'.join(metric)!r}{did_you_mean('.'.join(metric), family.headline)}")
    if rest and (len(rest) > 1 or rest[0] not in BOUNDS):
        raise ConfigError(f"gate {gate.text!r}: after .delta write nothing, .low or .high, not {'.'.join(rest)!r}")
    if not baseline:
        raise ConfigError(f"gate {gate.text!r}: a difference needs a baseline run: {baseline_hint}")
