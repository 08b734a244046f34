"""Every llmjury setting, resolved once: command line over ini/pyproject over defaults."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from llmjury.errors import ConfigError
from llmjury.hints import did_you_mean
from llmjury.jurors import JurySpec
from llmjury.running.batch_lane import BatchMode, LaneTiming
from llmjury.running.cache import CacheMode, scratch_path
from llmjury.running.freshness import UNDER_TEST
from llmjury.running.leases import LEASE_S
from llmjury.running.limits import RateLimit
from llmjury.running.shard import Shard
from llmjury.sequential.settings import SequentialSettings
from llmjury.store.location import StoreLocation

if TYPE_CHECKING:
    from llmjury.model import FamilyOptions

#: What a role no setting names is asked: the offline heuristics.
DEFAULT_PROVIDER = JurySpec.parse("offline")

#: What a bound gate does when its interval straddles the threshold (`--llm-gate-uncertain`).
Uncertain = Literal["pass", "inconclusive"]
UNCERTAIN: dict[str, Uncertain] = {"inconclusive": "inconclusive", "pass": "pass"}
BATCH_MODES: dict[str, BatchMode] = {"wait": "wait", "submit": "submit"}


#: The least planning window, and its width per concurrency slot of the widest provider.
PLANNING_WINDOW = 256
PLANNING_WINDOW_PER_SLOT = 16


@dataclass(frozen=True)
class Settings:
    #: The judge and every `--llm-role`, parsed once when settings are resolved.
    judge: JurySpec = DEFAULT_PROVIDER
    roles: dict[str, JurySpec] = field(default_factory=dict)
    #: Roles whose answers are asked afresh each run (llmjury.running.freshness), and the opt-out.
    under_test: frozenset[str] = UNDER_TEST
    replay_under_test: bool = False
    cache_mode: CacheMode = CacheMode.RECORD
    cache_path: Path = Path(".llmjury/cache.sqlite")
    #: The run store (`--llm-store`); None: SQLite at `cache_path`. Runs sharing a `run_group` share
    #: one budget; a claim's lease lasts `lease_s` without its owner's heartbeat.
    store: StoreLocation | None = None
    run_group: str | None = None
    lease_s: float = LEASE_S
    #: The Batch API lane (a spec's `;batch=`): wait for the batches, or submit them and end; how
    #: often its batches are polled.
    batch_mode: BatchMode = "wait"
    batch_poll_s: float = LaneTiming.poll_s
    recordings: Path | None = None
    prompts: Path | None = None
    reports: Path = Path("reports")
    data_root: Path | None = None
    concurrency: int = 16
    rate_limits: dict[str, RateLimit] = field(default_factory=dict)
    retry_attempts: int = 4
    retry_base_wait: float = 0.5
    retry_max_wait: float = 60.0
    parse_retries: int = 1
    #: How verdict judges are asked for their decision (llmjury.running.decision_field): auto, schema or text.
    judge_output: str = "auto"
    judge_runs: int = 3
    seed: int = 0
    sample: int | None = None
    #: Long runs: the spending cap in US dollars (None: no cap), where it was set, and what an
    #: unpriced model counts as; live progress (`off`, `auto`, `lines`) and its line interval.
    budget: float | None = None
    budget_source: str = "--llm-budget"
    budget_unknown: str = "refuse"
    progress: str = "auto"
    progress_interval: float = 5.0
    gates: tuple[str, ...] = ()
    #: The part of the suite this invocation runs (`--llm-shard I/N`); None: the whole suite.
    shard: Shard | None = None
    #: Two-sided level of the intervals of a comparison with a baseline (`delta.low`, `delta.high`).
    compare_confidence: float = 0.95
    #: The share of the baseline's cases a run may drop or change before its delta gates are inconclusive.
    compare_max_changed: float = 0.1
    gate_uncertain: Uncertain = "inconclusive"
    #: What a failed assertion in a case test of your own does: `fail` it, or `record` it
    #: (llmjury.session.item_outcomes).
    item_failures: str = "fail"
    prices: Path | None = None
    options: dict[str, str] = field(default_factory=dict)
    #: Where each option and role was set (`--llm-option`, `ini llm_options`, ...), for error messages.
    option_sources: dict[str, str] = field(default_factory=dict)
    role_sources: dict[str, str] = field(default_factory=dict)
    #: `--llm-sequential`: judge in seeded batches and stop once every gate is decided; None: every case.
    sequential: SequentialSettings | None = None

    @property
    def location(self) -> StoreLocation:
        """Where the run's answers, claims, tallies and spend are shared."""
        return self.store if self.store is not None else StoreLocation("sqlite", self.cache_path)

    def answers(self, run_id: str) -> StoreLocation:
        """Where a run keeps its answers: the run store, or with `--llm-cache off` a scratch SQLite
        file of this machine that its own xdist workers share and the run deletes."""
        if self.cache_mode is CacheMode.OFF:
            return StoreLocation("sqlite", scratch_path(self.cache_path, run_id))
        return self.location

    def unsaved(self) -> Path | None:
        """Where this machine keeps paid answers its store never committed (llmjury.running.unsaved),
        until a later run hands them to the store; None with `--llm-cache off`, which keeps nothing."""
        return None if self.cache_mode is CacheMode.OFF else self.cache_path.parent / "unsaved"

    def board(self, run_id: str) -> StoreLocation:
        """Where a run's tallies and spend are shared: PostgreSQL when it is the store (other
        machines read them), else the SQLite file that holds its answers."""
        return self.location if self.location.kind == "postgres" else self.answers(run_id)

    def batched(self) -> bool:
        """Whether a provider the run may call asks for the Batch API lane (`;batch=`)."""
        return any(juror.spec.text_option("batch") is not None
                   for spec in (self.judge, *self.roles.values()) for juror in spec.jurors)

    def planning_window(self) -> int | None:
        """How many planned cases a process runs at once: enough to keep its widest provider's
        slots busy while others wait on a claim held elsewhere; every case when a Batch API lane packs
        the requests into batches."""
        if self.batched():
            return None
        widest = max([self.concurrency, *(limit.concurrency for limit in self.rate_limits.values())])
        return max(PLANNING_WINDOW, PLANNING_WINDOW_PER_SLOT * widest)

    def provider_for(self, role: str, family: str | None = None) -> JurySpec:
        """Spec for a role: `family.role`, then `role`, then the judge (for judges) or offline."""
        for key in ((f"{family}.{role}" if family else None), role):
            if key and key in self.roles:
                return self.roles[key]
        return self.judge if role == "judge" else DEFAULT_PROVIDER

    def judge_specs(self) -> dict[str, JurySpec]:
        """The run's judges: `judge`, and every role set for a family's judge (`socratic.judge`)."""
        return {"judge": self.judge} | {role: spec for role, spec in self.roles.items()
                                        if role.rpartition(".")[2] == "judge"}

    def limit_for(self, provider: str) -> RateLimit:
        return self.rate_limits.get(provider, RateLimit(concurrency=self.concurrency))

    def share(self, workers: int) -> Settings:
        """One worker's part of run-wide limits, so `-n` never multiplies what a provider sees."""
        if workers <= 1:
            return self
        return replace(
            self,
            concurrency=max(1, math.ceil(self.concurrency / workers)),
            rate_limits={name: limit.share(workers) for name, limit in self.rate_limits.items()},
        )


def parse_assignments(lines: list[str], what: str, example: str) -> dict[str, str]:
    """`key=value` lines from the command line or ini, e.g. roles and family options."""
    values: dict[str, str] = {}
    for line in lines:
        key, eq, value = line.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise ConfigError(f"{what} {line!r}: write KEY=VALUE, e.g. {example}")
        values[key.strip()] = value.strip()
    return values


def parse_roles(lines: list[str], what: str = "--llm-role") -> dict[str, JurySpec]:
    """`role=spec` or `family.role=spec` assignments from the command line or ini, each spec parsed."""
    roles = parse_assignments(lines, what, "socratic.candidate=openai:gpt-4o")
    return {role: check_spec(spec, f"{what} {role}={spec}") for role, spec in roles.items()}


def check_spec(spec: str, what: str) -> JurySpec:
    """A judge or role spec (one provider or a jury) parsed, else a ConfigError naming the option it
    came from: a typo stops the run before any model call."""
    try:
        return JurySpec.parse(spec)
    except ConfigError as exc:
        # `socratic=openai:gpt-4o` as a judge: a per-family judge is a role, set elsewhere.
        kind = spec.split(";")[0].split(":")[0]
        hint = "; a family's own judge is --llm-role FAMILY.judge=SPEC (ini llm_roles)" if "=" in kind else ""
        raise ConfigError(f"{what}: {exc}{hint}") from None


def whole_number(raw: object, what: str, minimum: int | None = 1) -> int:
    """An integer setting; a ConfigError names the option when it is not a whole number or is below
    `minimum` (a zero must not quietly mean the default, nor a negative count fail every case)."""
    try:
        number = int(str(raw).strip())
    except ValueError:
        raise ConfigError(f"{what} {raw!r}: not a whole number") from None
    if minimum is not None and number < minimum:
        raise ConfigError(f"{what} {number}: must be at least {minimum}")
    return number


def positive_number(raw: object, what: str, unit: str) -> float:
    """A finite number above 0 (a budget in dollars, an interval in seconds); a ConfigError names
    the option otherwise."""
    try:
        value = float(str(raw).strip().lstrip("$"))
    except ValueError:
        raise ConfigError(f"{what} {raw!r}: not a number of {unit}") from None
    if not 0 < value < float("inf"):
        raise ConfigError(f"{what} {raw!r}: must be a positive number of {unit}")
    return value


def confidence_level(raw: object, what: str) -> float:
    """A two-sided interval level strictly between 0.5 and 1; a ConfigError names the option
    otherwise (95 for 0.95 or 1 would make every interval useless without a word)."""
    try:
        value = float(str(raw).strip())
    except ValueError:
        raise ConfigError(f"{what} {raw!r}: not a number; give a level between 0.5 and 1, e.g. 0.95") from None
    if not 0.5 < value < 1:
        raise ConfigError(f"{what} {raw!r}: must lie strictly between 0.5 and 1, e.g. 0.95")
    return value


def share_of(raw: object, what: str) -> float:
    """A share between 0 and 1; a ConfigError names the option otherwise (10 for 0.1 says nothing)."""
    try:
        value = float(str(raw).strip())
    except ValueError:
        raise ConfigError(f"{what} {raw!r}: not a number; give a share between 0 and 1, e.g. 0.1") from None
    if not 0 <= value <= 1:
        raise ConfigError(f"{what} {raw!r}: must lie between 0 and 1, e.g. 0.1")
    return value


def choice(raw: str, what: str, allowed: tuple[str, ...]) -> str:
    """An ini value restricted to a few words (the command line already checks its own choices)."""
    if raw not in allowed:
        raise ConfigError(f"{what} {raw!r}{did_you_mean(str(raw), allowed)}: use one of {', '.join(allowed)}")
    return raw


def family_options(settings: Settings, family: str | Any) -> dict[str, str]:
    """The `family.key=value` options for one family (its name or its contract), prefix removed."""
    prefix = getattr(family, "name", family) + "."
    return {k[len(prefix):]: v for k, v in settings.options.items() if k.startswith(prefix)}


@dataclass(frozen=True)
class OptionLine:
    """One family option as the user wrote it, and where: an error names the line, not a guess."""

    key: str  # without the family prefix
    value: str
    source: str  # `--llm-option`, `ini llm_options`, `--option` (`llmjury replay`)
    text: str  # as written, e.g. `socratic.dialogues=3`

    def __str__(self) -> str:
        return f"{self.source} {self.text}"


def checked_options(family: str, model: type[FamilyOptions], lines: Sequence[OptionLine]) -> FamilyOptions:
    """Family `family`'s options (its options `model`) from the lines that set them. An unknown
    key is named with the line it came from, a close known key and every key the family knows; a
    bad value with its line. A rule across keys (the model's own check) is blamed on the line of
    the key its message starts with (`items_criteria: ...`), else on every place the family was set."""
    known = model.model_fields
    for line in lines:
        if line.key not in known:
            raise ConfigError(f"{line}: unknown option {family}.{line.key}{did_you_mean(line.key, known)}; "
                              f"{family} knows {', '.join(sorted(known)) or 'no options'}")
    by_key = {line.key: line for line in lines}
    try:
        return model.model_validate({line.key: line.value for line in lines})
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            message = str(error["msg"]).removeprefix("Value error, ")
            key, colon, rest = message.partition(": ")
            named = by_key.get(str(error["loc"][0]) if error["loc"] else key)
            if named is not None:
                problems.append(f"{named}: {rest if colon and not error['loc'] else message}")
            else:  # a rule across keys (the model's own check): name every line of the family
                where = " and ".join(dict.fromkeys(line.source for line in lines))
                problems.append(f"{where} {family}.*: {message}")
        raise ConfigError("; ".join(problems)) from None

