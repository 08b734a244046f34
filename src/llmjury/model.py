"""A run's values, from one verdict's result to the whole summary: the ground floor the contract,
aggregation, gates and reports build on. It imports nothing of llmjury's but its errors.

`summary.json` is `RunSummary`'s serialisation. The families' sections sit at its top level, beside
`run` and `usage`, and each section holds the core's counts and the family's own figures side by
side: that is the shape gate paths (`socratic.unscored_rate`, `arena.rating.x`) and summary.md's
metric names walk, so the model keeps it on disk and gathers the sections under `families` in code.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, computed_field, model_serializer, model_validator
from pydantic_core import PydanticCustomError

from llmjury.errors import ConfigError, validation_cause
from llmjury.portable import portable

#: The version of `summary.json` this llmjury writes and reads. A summary without one was written
#: before the field existed, in the same shape, and is read as this version.
SUMMARY_VERSION = 1


class FamilyOptions(BaseModel):
    """Base of every family's `--llm-option FAMILY.KEY=VALUE` model: an unknown key is an error."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Figures(BaseModel):
    """Base of the models a family's results and report are made of. Each builds its validation
    schema at first use (pydantic's defer_build), not when its module loads: every process loads
    every family at start-up, and an xdist worker never builds a report."""

    model_config = ConfigDict(defer_build=True)


class Result(Figures):
    """Base of the decision one verdict kind records (a winner, a score, a grade...)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Metric(Figures):
    """A figure with its interval: a rate, a rating, a correlation, a difference."""

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int
    method: str


class Section(Figures):
    """Base of a family's aggregate: the figures its report shows, as typed fields."""

    model_config = ConfigDict(extra="forbid")


class FamilySummary(BaseModel):
    """A family's section of the summary: the counts the core keeps for every family as typed fields,
    and the family's own figures (its `Section`, dumped) beside them as extra fields, flat as gate
    paths read them."""

    model_config = ConfigDict(extra="allow")

    cases: int
    verdicts: int
    valid: int
    unscored: int
    unscored_rate: Metric
    #: Deprecated since 0.2.0, removed in 0.3.0: unscored verdicts by their error's first clause; use
    #: `unscored_causes`, which counts them by cause.
    unscored_reasons: dict[str, int]
    judges: list[str]
    unscored_by_judge: dict[str, Metric]
    #: The first 200 unscored cases' ids.
    unscored_cases: list[str]
    judge_config: list[dict[str, Any]]
    offline: bool
    #: The metric paths of the family's figures its reports lead with (empty for an unknown family).
    headline: list[str] = Field(default_factory=list)
    loading: list[dict[str, Any]] = Field(default_factory=list)
    #: How the family's judge runs were read: from a schema's field (a verdict's decision, a structured
    #: answer) or the text's decision line.
    decisions_read: dict[str, int] = Field(default_factory=dict)
    #: Unscored verdicts by cause: no_decision, ambiguous, out_of_scale, truncated, filtered, refused,
    #: failed, empty, and calls never made (budget, batch pending); per judge in `repairs`.
    unscored_causes: dict[str, int] = Field(default_factory=dict)

    @property
    def figures(self) -> dict[str, Any]:
        """The family's own figures, without the core's counts: what its `Section` model validates."""
        return dict(self.model_extra or {})

    def tree(self) -> dict[str, Any]:
        """The section as summary.json holds it, for the walks by metric path (tables, headlines), to
        read, not to edit: the family's figures are JSON data already and are shared, not copied (a
        copy of a large section cost the Decision block more than rendering it)."""
        return {**self.model_dump(mode="json", exclude=set(self.model_extra or ())), **(self.model_extra or {})}


@dataclass(frozen=True)
class GateResult:
    """A gate's outcome. `value` is always the metric's point estimate (a delta gate's: the change
    itself), `interval` its interval and `decided_by` the figure that decided (None when inconclusive
    or when the metric has no value), whatever bound the gate names."""

    gate: str
    status: Literal["pass", "fail", "inconclusive", "not compared"]
    value: float | None
    threshold: float | None
    interval: tuple[float | None, float | None] | None
    reason: str
    decided_by: Literal["low", "high", "value"] | None = None

    def line(self) -> str:
        """The gate's terminal line: status, gate, value with its interval, threshold and why."""
        ci = "" if self.interval is None else f" [{_fmt(self.interval[0])}, {_fmt(self.interval[1])}]"
        value, threshold = _fmt(self.value), _fmt(self.threshold)
        return f"{self.status.upper():<12} {self.gate}: value {value}{ci} vs {threshold}{self.reason}"


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4g}"


class StoreFacts(BaseModel):
    """A run's store out of reach: how long the run waited for it and went on, the answers it paid
    for and could not store (kept for the next run, llmjury.running.unsaved), and the answers an
    earlier run kept that this one handed to it."""

    model_config = ConfigDict(extra="forbid")

    #: The longest wait for the store's server that ended with it back, in seconds.
    away_s: float = 0.0
    kept_answers: int = 0
    #: Where the kept answers are, until a run on the same store takes them.
    kept_in: str | None = None
    recovered_answers: int = 0

    @classmethod
    def merged(cls, facts: Iterable[StoreFacts]) -> StoreFacts | None:
        """The run's, from each process's; None when no process has anything to tell."""
        facts = list(facts)
        run = cls(away_s=round(max((f.away_s for f in facts), default=0.0), 1),
                  kept_answers=sum(f.kept_answers for f in facts),
                  kept_in=next((f.kept_in for f in facts if f.kept_in), None),
                  recovered_answers=sum(f.recovered_answers for f in facts))
        return run if run.away_s or run.kept_answers or run.recovered_answers else None

    def lines(self) -> list[str]:
        """What the terminal says of it."""
        said = []
        if self.away_s:
            said.append(f"the run store was out of reach for up to {self.away_s:g} s: the run waited for it "
                        "and went on")
        if self.kept_answers:
            said.append(f"{self.kept_answers} paid answer(s) could not be stored: kept in {self.kept_in} "
                        "until the next run on this store hands them to it")
        if self.recovered_answers:
            said.append(f"{self.recovered_answers} answer(s) an earlier run paid for and could not store "
                        "were handed to the store")
        return said


class RunInfo(BaseModel):
    """What ran: its id, times, judge, cache mode, seed and workers, and the families it judged.
    A re-aggregated, replayed or compared run adds where it came from (`reaggregated_from`...)."""

    model_config = ConfigDict(extra="allow")

    id: str
    started: str | None = None
    finished: str | None = None
    judge: str | None = None
    roles: dict[str, str] = Field(default_factory=dict)
    cache_mode: str | None = None
    seed: int | None = None
    judge_runs: int | None = None
    sample: int | None = None
    workers: int = 1
    args: list[str] = Field(default_factory=list)
    adaptations: dict[str, dict[str, Any]] = Field(default_factory=dict)
    #: What stopped the run before its end (`by`, tests finished and collected), None for a whole run.
    stopped: dict[str, Any] | None = None
    #: What the run's store went through (an outage ridden out, answers it could not take), None
    #: when there is nothing to tell.
    store: StoreFacts | None = None
    families: list[str] = Field(default_factory=list)
    offline: bool = False
    #: The llmjury version that made the run: a pull request installs the one its baseline was made with.
    llmjury_version: str | None = None


class Usage(BaseModel):
    """Calls, tokens and estimated cost per provider, and per role where its samples came from."""

    model_config = ConfigDict(extra="forbid")

    providers: dict[str, dict[str, float | None]] = Field(default_factory=dict)
    total_cost_usd: float = 0.0
    unpriced: list[str] = Field(default_factory=list)
    roles: dict[str, dict[str, dict[str, str | int]]] = Field(default_factory=dict)


class BudgetFacts(BaseModel):
    """The budget's cap, the estimated spend, and whether it stopped the run and what it left unscored."""

    model_config = ConfigDict(extra="forbid")

    limit_usd: float
    spent_usd: float
    stopped: bool
    refused_calls: int
    unscored_verdicts: int
    unscored_cases: int
    unknown_cost: str
    unpriced: list[str]
    note: str
    #: Runs sharing a `--llm-run-group` share the budget: the group, and its spend (every run's).
    run_group: str | None = None
    group_spent_usd: float | None = None


class Status(BaseModel):
    """Whether the figures cover every selected case, and what stopped the run when they do not."""

    state: Literal["complete", "partial"]
    cause: str | None = None


class RunSummary(BaseModel):
    """The whole run: what ran, usage, loading, each family's section, the baseline comparison, the
    budget and the gates' outcomes. Every report is rendered from it; `summary.json` is its JSON."""

    model_config = ConfigDict(extra="forbid")

    version: int = SUMMARY_VERSION
    #: False when the run stopped early: the figures then cover the finished cases only.
    complete: bool = True
    run: RunInfo
    usage: Usage = Field(default_factory=Usage)
    loading: list[dict[str, Any]] = Field(default_factory=list)
    families: dict[str, FamilySummary] = Field(default_factory=dict)
    #: The `comparison` section of a run compared with a baseline (`llmjury.results.compare.compare_runs`).
    comparison: dict[str, Any] | None = None
    budget: BudgetFacts | None = None
    #: A sequential run's looks, the tests skipped as decided and the cost of the decision
    #: (`llmjury.session.sequential`); the judge's drift on its canary (`llmjury.results.drift`).
    sequential: dict[str, Any] | None = None
    judge: dict[str, Any] | None = None
    gates: list[GateResult] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def status(self) -> Status:
        """`complete`, or `partial` with what stopped the run."""
        if self.complete:
            return Status(state="complete")
        by = (self.run.stopped or {}).get("by")
        return Status(state="partial", cause=str(by) if by else "stopped early")

    @model_validator(mode="before")
    @classmethod
    def _gather(cls, data: Any) -> Any:
        """summary.json's top-level family sections (those `run.families` names) into `families`;
        a version this llmjury does not know is refused."""
        if not isinstance(data, dict):
            return data
        version = data.get("version", SUMMARY_VERSION)
        if version != SUMMARY_VERSION:
            raise PydanticCustomError("summary_version", "summary version {version} is not one this llmjury "
                                      "reads (it reads version {known})", {"version": repr(version),
                                                                          "known": SUMMARY_VERSION})
        if "families" in data:
            return data
        run = data.get("run")
        names = run.get("families", []) if isinstance(run, dict) else []
        rest = {k: v for k, v in data.items() if k not in names and k != "status"}
        return {**rest, "families": {name: data[name] for name in names if name in data}}

    @model_serializer(mode="wrap")
    def _flat(self, handler: Any) -> dict[str, Any]:
        """The families' sections at the top level, and no `comparison` or `budget` the run lacks."""
        data: dict[str, Any] = handler(self)
        families = data.pop("families", {})
        for key in ("comparison", "budget", "sequential", "judge"):
            if data.get(key) is None:
                data.pop(key, None)
        return {**data, **families}

    def tree(self) -> dict[str, Any]:
        """The summary as summary.json holds it: what gate paths are written against."""
        return self.model_dump(mode="json")

    def portable(self, root: Path) -> RunSummary:
        """The summary with every absolute path under `root` or the home directory rewritten, as
        reports show paths (`llmjury.portable`)."""
        return RunSummary.model_validate(portable(self.tree(), root))


def read_summary(text: str, where: str) -> RunSummary:
    """A `summary.json` read back into its model; a ConfigError names the file and what is wrong
    (not JSON, a version this llmjury does not read, a field of the wrong shape)."""
    try:
        return RunSummary.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "summary_version":
            raise ConfigError(f"{where}: {first['msg']}; read it with the llmjury that wrote it, or "
                              "re-aggregate its verdicts with `llmjury report`") from None
        raise ConfigError(f"{where}: not a run summary ({validation_cause(exc)})") from None
