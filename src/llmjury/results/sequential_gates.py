"""Gates decided on confidence sequences, for runs that stop once every gate is decided
(`--llm-sequential`).

A gate can be looked at after every batch when its metric is a mean of per-case figures on a known
scale: a rate, a mean score, or a headline metric's paired delta against the baseline (the per-case
differences on the cases both runs share). Each case's figure is its family's own aggregate of that
case's verdicts alone (as `llmjury.results.compare` computes per-case values), taken in the run's
seeded case order; the interval is the betting confidence sequence of `llmjury.sequential.confidence`
over those figures, each case weighing one. A gate on any other figure (a rating, a correlation, a
threshold that names another metric) is never decided early: the run goes to its end for it.

At a look a gate is decided when the whole sequence satisfies it (pass) or no point of it does
(fail): a bound gate such as `M.delta.high>=0` is therefore not passed early on a wide interval,
though at the run's end it reads its named bound as `Gate.check` does.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from llmjury.errors import ConfigError
from llmjury.family import AnyFamily
from llmjury.judgement.verdicts import Verdict
from llmjury.model import GateResult
from llmjury.results.gates import BOUNDS, OPS, RUN_SECTIONS, Gate, _holds_anywhere, delta_split, resolve
from llmjury.sequential.decide import decided
from llmjury.sequential.order import in_seeded_order

#: The scale a per-case figure is assumed to lie on unless `llm_sequential_scales` names another.
UNIT = (0.0, 1.0)
METHOD = "confidence sequence (betting, Waudby-Smith & Ramdas 2023), valid at every look"


@dataclass
class Track:
    """One gate as a sequence of per-case figures, or why it cannot be one (`not_sequential`)."""

    gate: Gate
    family: AnyFamily | None = None
    steps: tuple[str, ...] = ()
    bound: Literal["low", "high"] | None = None
    delta: bool = False
    threshold: float = 0.0
    scale: tuple[float, float] = UNIT
    not_sequential: str | None = None
    cache: dict[str, float | None] = field(default_factory=dict)
    baseline_cache: dict[str, float | None] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return ".".join(self.steps)


def track(gate: Gate, families: Mapping[str, AnyFamily], scales: Mapping[str, tuple[float, float]],
          baseline: bool) -> Track:
    """A gate's per-case track, or the reason it is decided only at the run's end."""
    if not isinstance(gate.right, float):
        return Track(gate, not_sequential="its threshold names another metric")
    left, delta = gate.left, False
    split = delta_split(left)
    if split is not None:
        name, steps, rest = split
        delta = True
    else:
        name, steps, rest = left[0], left[1:], ()
        if steps and steps[-1] in BOUNDS:
            steps, rest = steps[:-1], (steps[-1],)
    family = families.get(name)
    if name in RUN_SECTIONS:
        return Track(gate, not_sequential="it reads a run-wide figure, not a mean of per-case figures")
    if family is None:
        return Track(gate, not_sequential=f"its family {name!r} is not one of this run's")
    if delta and not baseline:
        return Track(gate, not_sequential="it needs a baseline (--llm-baseline)")
    key = ".".join((name, *steps))
    lo, hi = scales.get(key, UNIT)
    bound: Literal["low", "high"] | None = "low" if rest[:1] == ("low",) else "high" if rest[:1] == ("high",) else None
    scale = (lo - hi, hi - lo) if delta else (lo, hi)
    return Track(gate, family, (name, *steps), bound, delta, gate.right, scale)


@dataclass(frozen=True)
class GateLook:
    """A gate at one look: its sequence's bounds over `n` cases and its outcome, if decided."""

    gate: str
    n: int
    value: float | None
    low: float | None
    high: float | None
    outcome: Literal["pass", "fail"] | None
    not_sequential: str | None = None


class SequentialGates:
    """The run's gates as confidence sequences over its cases in seeded order."""

    def __init__(self, gates: Sequence[Gate], families: Mapping[str, AnyFamily], *, seed: int,
                 confidence: float, scales: Mapping[str, tuple[float, float]] | None = None,
                 baseline: Sequence[dict[str, Any]] | None = None) -> None:
        self.seed, self.confidence = seed, confidence
        self.tracks = [track(g, families, scales or {}, baseline is not None) for g in gates]
        self.baseline: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for record in baseline or ():
            self.baseline.setdefault((record["family"], record["case_id"]), []).append(record)

    def look(self, records: Sequence[dict[str, Any]]) -> list[GateLook]:
        """Every gate on these verdict records (the cases judged so far)."""
        by_case: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for record in records:
            by_case.setdefault((record["family"], record["case_id"]), []).append(record)
        return [self._look(t, by_case) for t in self.tracks]

    def all_decided(self, records: Sequence[dict[str, Any]]) -> str | None:
        """Why every gate is decided on these records, or None while one is not (or there is none)."""
        looks = self.look(records)
        if not looks or any(g.outcome is None for g in looks):
            return None
        n = max(g.n for g in looks)
        said = "; ".join(f"{g.gate}: {g.outcome} [{g.low:.4g}, {g.high:.4g}]" for g in looks)
        return f"decided: every gate was decided after {n} cases ({said})"

    def _look(self, t: Track, by_case: Mapping[tuple[str, str], list[dict[str, Any]]]) -> GateLook:
        if t.not_sequential is not None or t.family is None:
            return GateLook(t.gate.text, 0, None, None, None, None, t.not_sequential)
        family = t.family
        cases = in_seeded_order([case for fam, case in by_case if fam == family.name], self.seed)
        values: list[float] = []
        for case in cases:
            now = _figure(t, family, by_case[family.name, case], t.cache)
            if now is None:
                continue
            if t.delta:
                theirs = self.baseline.get((family.name, case))
                before = None if theirs is None else _figure(t, family, theirs, t.baseline_cache)
                if before is None:
                    continue
                now -= before
            if not t.scale[0] <= now <= t.scale[1]:
                raise ConfigError(f"gate {t.gate.text!r}: case {case!r} has {t.name} = {now:g}, outside the scale "
                                  f"[{t.scale[0]:g}, {t.scale[1]:g}] a confidence sequence needs; give its scale "
                                  f"in ini llm_sequential_scales as {t.name}=LOW:HIGH")
            values.append(now)
        if not values:
            return GateLook(t.gate.text, 0, None, None, None, None)
        # Imported here: numpy loads where verdicts are looked at, not in every process at start-up.
        from llmjury.sequential.confidence import confidence_sequence

        low, high = confidence_sequence(values, t.scale, self.confidence).at(len(values))
        return GateLook(t.gate.text, len(values), sum(values) / len(values), low, high,
                        decided(t.gate.op, t.threshold, low, high))

    def results(self, records: Sequence[dict[str, Any]], fixed: Sequence[GateResult], *,
                uncertain: Literal["pass", "inconclusive"] = "inconclusive") -> list[GateResult]:
        """The gates' results at the run's end: each sequential gate read on its sequence as
        `Gate.check` reads an interval (a bound gate on its named bound; with `uncertain="pass"` a
        straddling one decided on its named figure), the others as `fixed` has them."""
        out = []
        for t, g, result in zip(self.tracks, self.look(records), fixed, strict=True):
            if g.not_sequential is not None or g.low is None or g.high is None or g.value is None:
                out.append(result)
                continue
            named = g.value if t.bound is None else (g.low if t.bound == "low" else g.high)
            holds = OPS[t.gate.op]
            interval = (g.low, g.high)
            why = f" ({METHOD}, n={g.n})"
            if t.bound is None:
                status = decided(t.gate.op, t.threshold, g.low, g.high) or "inconclusive"
            elif holds(named, t.threshold):
                status = "pass"
            else:
                status = "inconclusive" if _holds_anywhere(t.gate.op, g.low, g.high, t.threshold) else "fail"
            decider: Literal["low", "high", "value"] | None = None
            if status == "inconclusive" and uncertain == "pass":  # --llm-gate-uncertain pass
                status = "pass" if holds(named, t.threshold) else "fail"
                why += "; interval straddles the threshold, decided on " + (t.bound or "the point estimate")
                decider = t.bound or "value"
            elif status != "inconclusive":
                decider = t.bound or ("low" if status == "pass" else "high")
            out.append(GateResult(t.gate.text, status, g.value, t.threshold, interval, why, decider))
        return out


def _figure(t: Track, family: AnyFamily, records: list[dict[str, Any]],
            cache: dict[str, float | None]) -> float | None:
    """One case's figure of the gate's metric: the family's aggregate of that case's verdicts alone,
    kept by the records' content (a case's verdicts do not change between looks; a rerun's may)."""
    key = hashlib.blake2b(json.dumps(records, sort_keys=True, default=str).encode(), digest_size=16).hexdigest()
    if key not in cache:
        verdicts: list[Verdict] = [family.typed(r) for r in records]
        try:
            section = family.aggregate(verdicts).model_dump(mode="json")
            value, _, _ = resolve(section, t.steps[1:])
        except Exception:  # a family's aggregate may refuse one case alone (as compare's _safe says)
            value = None  # no figure on this case alone (unscored, or not this metric's kind)
        cache[key] = value
    return cache[key]


def sequential_lines(section: Mapping[str, Any] | None) -> list[str]:
    """What the terminal and summary.md say of a sequential run: when it was decided, what the decision
    cost and what stopping saved."""
    if section is None:
        return []
    cost = section["cost"]
    spent = f"{cost['calls']:.0f} calls (${cost['cost_usd']:.4f})"
    if not section["decided"]:
        return [f"sequential: not decided early; all {section['tests_judged']} tests judged, {spent}, none saved"]
    return [f"sequential: decided after {section['tests_judged']} tests; {section['tests_decided']} tests skipped as "
            f"decided; {spent} until the decision, about {cost['calls_saved']:.0f} calls "
            f"(${cost['cost_saved_usd']:.4f}) saved by stopping"]
