"""The family contract: what a family gives the core, checked once at start-up.

A family is one object (by convention `FAMILY` in its package) that the plugin finds through the
`llmjury.families` entry-point group or an `llm_families = module:attribute` ini line. The core
asks it for its options model (parsed once, at start-up), its datasets, its named case sets (a
loader and the pipeline their tests run), its offline answers, a typed result model per verdict
kind and a typed aggregate section, and for the headline metrics a report leads with. Everything
else (planning, caching, transport across xdist, reports, gates) is the core's.

Aggregation is imported lazily by the families (scipy, pandas), so loading every family costs a
pytest session next to nothing.
"""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeAlias, TypeVar, cast

from pydantic import BaseModel

from llmjury.errors import ConfigError
from llmjury.intervals import KINDS, IntervalKind
from llmjury.model import FamilyOptions, Figures, Metric, Result, Section

if TYPE_CHECKING:
    import argparse

    from llmjury.cases import Case
    from llmjury.judgement.jury import Jury, Outcome
    from llmjury.judgement.verdicts import Verdict
    from llmjury.loading import LoadReport
    from llmjury.providers.base import ProviderSpec
    from llmjury.providers.offline import Heuristic
    from llmjury.running.settings import OptionLine, Settings

#: What a family's author imports from here: the contract, and the value types (`llmjury.model`) a
#: family's results and section are made of.
__all__ = ["CaseLoad", "CaseSet", "Dataset", "Family", "FamilyOptions", "Figures", "Metric", "OptionSpec", "OptionsT",
           "Pipeline", "Plot", "Replayed", "Result", "Section", "SectionT", "check_family"]

Pipeline: TypeAlias = "Callable[[Case, Jury], Awaitable[Outcome]]"
#: What a case set's loader returns: its cases, and the load reports of the files it read.
CaseLoad: TypeAlias = "tuple[Sequence[Case], Sequence[LoadReport]]"
#: A family's aggregate model: `aggregate` returns it and the report hooks receive it, so a family
#: reads its own fields without narrowing a `Section` back.
SectionT = TypeVar("SectionT", bound=Section)


#: A family's options model: its case sets' loaders receive it parsed, as this type.
OptionsT = TypeVar("OptionsT", bound=FamilyOptions)


@dataclass(frozen=True)
class Replayed:
    """What `Family.replay` read: the verdicts, and what loading kept and left out (shown in the
    replayed report as in a run's)."""

    verdicts: list[Verdict]
    loading: list[LoadReport] = field(default_factory=list)


@dataclass(frozen=True)
class Plot:
    """One figure of `report.html`: an id the page (and its tests) find it by, a caption, and an
    inline `<svg>` that fetches nothing. The caption is escaped; the SVG is the family's own markup."""

    id: str
    caption: str
    svg: str


@dataclass(frozen=True)
class Dataset:
    """A named data source a family reads: the option that points at it and what it holds.

    `option` is the family option holding the file's path; `default` is the path, relative to the
    suite's data root (`llm_data`), of the copy a suite ships, if any. `formats` names the shapes
    the loader detects (documented in the README).
    """

    name: str
    option: str
    description: str
    default: str | None = None
    formats: tuple[str, ...] = ()

    def path(self, options: FamilyOptions, settings: Settings) -> Path | None:
        """This run's file or folder: the option's path, else the shipped copy under the data root,
        else None."""
        given = getattr(options, self.option, None)
        if given:
            return Path(given)
        if self.default and settings.data_root is not None:
            return settings.data_root / self.default
        return None


@dataclass(frozen=True)
class OptionSpec:
    """A provider spec written inside a family option (an arena's live contestant) rather than as a
    role: start-up checks it as it checks the judge's and the roles' specs (`Family.provider_specs`)."""

    #: The option that holds it (`models`).
    option: str
    #: The entry as written, which an error names (`tutor=http://host/chat;body=tutor/body.j2`).
    entry: str
    spec: ProviderSpec


@dataclass(frozen=True)
class CaseSet(Generic[OptionsT]):
    """A named set of cases a family's tests run over (`@llmjury.case_set(FAMILY, NAME)`), so an eval
    module holds assertions only. `load` reads the cases from this run's parsed options and settings,
    with the load reports of the files it read (raise `llmjury.cases.NoCases` to skip the tests with
    a reason); `pipeline` turns each case into the test's `outcome` (None: the test takes `case`).
    Sets sharing one `load` read their files once per process; `select` keeps each set's own cases."""

    load: Callable[[OptionsT, Settings], CaseLoad]
    #: Takes the set's own case type (Any here: `load` makes the cases it is handed).
    pipeline: Callable[[Any, Jury], Awaitable[Outcome]] | None = None
    select: Callable[[Case], bool] | None = None


@dataclass(frozen=True)
class Command:
    """A subcommand a family adds to the `llmjury` command line (`Family.commands`): `arguments`
    declares its options on its parser, `run` does the work and returns the exit status."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


class Family(abc.ABC, Generic[OptionsT, SectionT]):
    """One evaluation family. Subclass it (`Family[MyOptions, MySection]`), fill the class
    attributes, and expose one instance."""

    #: The family's name: the option prefix, the verdicts' `family`, the report section's key.
    name: ClassVar[str]
    #: `--llm-option NAME.KEY=VALUE` model (a FamilyOptions subclass), parsed once at start-up.
    options: type[OptionsT]
    #: The decision model of each verdict kind this family records (`Verdict.kind` -> model).
    results: ClassVar[Mapping[str, type[Result]]]
    #: The aggregate model `aggregate` returns.
    section: type[SectionT]
    #: Metric paths in the section that a report and the terminal lead with.
    headline: ClassVar[tuple[str, ...]] = ()
    #: What each metric is, by path (headline syntax, `*` for any key), which decides how its
    #: intervals are made (`llmjury.intervals`): `{"rating": "rating", "win_rate": "proportion"}`.
    interval_kinds: ClassVar[Mapping[str, IntervalKind]] = MappingProxyType({})
    #: The data sources this family's loaders read.
    datasets: ClassVar[tuple[Dataset, ...]] = ()
    #: Markers its cases carry whatever the data, with what each selects. With the family's name,
    #: those a `-m` expression names are registered at start-up, so `-m` may name one under
    #: `--strict-markers` when no collected case carries it (pytest 9.2+ refuses unregistered names
    #: in `-m`); markers named after the data are registered as cases are generated.
    markers: ClassVar[Mapping[str, str]] = MappingProxyType({})
    #: The roles its pipelines ask for (`--llm-role ROLE=SPEC`), with what each plays: a role set
    #: for this family (`NAME.ROLE=SPEC`) must be one of them. Empty where tests name their own.
    roles: ClassVar[Mapping[str, str]] = MappingProxyType({})

    def case_sets(self) -> Mapping[str, CaseSet[OptionsT]]:
        """The case sets its eval tests name, by name (a family whose tests bring their own cases,
        such as `custom`, declares none)."""
        return {}

    @abc.abstractmethod
    def offline(self) -> Mapping[str, Heuristic]:
        """The offline provider's answers, by prompt template this family renders."""

    @abc.abstractmethod
    def aggregate(self, verdicts: Sequence[Verdict]) -> SectionT:
        """The family's figures from its verdicts (typed results), pure: no model call."""

    def markdown(self, section: SectionT) -> str:
        """The family's own Markdown tables for `summary.md` (beyond the generic metric table)."""
        return ""

    def files(self, section: SectionT, verdicts: Sequence[Verdict]) -> dict[str, str]:
        """Extra files for the run folder (seed formats, CSVs), by file name."""
        return {}

    def figures(self, section: SectionT) -> list[Plot]:
        """The family's own plots for `report.html`, beside the core's comparison view."""
        return []

    def replay(self, path: Path, options: FamilyOptions) -> Replayed:
        """Verdicts recorded elsewhere (a judge's saved answers), read from `path` without a model
        call, for `llmjury replay`. Families that read no recorded files keep this default."""
        raise ConfigError(f"family {self.name!r} replays no recorded verdict files")

    def commands(self) -> Sequence[Command]:
        """Subcommands this family adds to `llmjury` (work on its own file formats), so the core's
        command line names no family. Most families add none."""
        return ()

    #: Section keys the generic metric table leaves out because `markdown` renders them.
    hidden_from_tables: ClassVar[tuple[str, ...]] = ()

    def parse_options(self, lines: Sequence[OptionLine]) -> OptionsT:
        """This family's options from the lines that set them (none: its defaults), parsed once at
        start-up (and by `llmjury replay`); a ConfigError names each bad line and where it was set."""
        from llmjury.running.settings import checked_options

        # checked_options validates with `self.options`, so the value is this family's own model.
        return cast(OptionsT, checked_options(self.name, self.options, lines))

    def dataset_paths(self, options: FamilyOptions, settings: Settings) -> dict[str, Path]:
        """Every dataset file this run reads, by dataset name: the option's path, else the shipped copy
        under the suite's data root (`llm_data`); datasets with neither are left out."""
        return {dataset.name: path for dataset in self.datasets
                if (path := dataset.path(options, settings)) is not None}

    def provider_specs(self, options: OptionsT) -> Sequence[OptionSpec]:
        """The provider specs this run's options name beyond the roles, so start-up checks them (an
        `http:` body template, ...) before any call is paid for. Most families name none."""
        return ()

    def result_model(self, kind: str) -> type[Result]:
        try:
            return self.results[kind]
        except KeyError:
            raise ConfigError(f"family {self.name!r} has no verdict kind {kind!r}; "
                              f"it records {sorted(self.results)}") from None

    def typed(self, record: Mapping[str, Any]) -> Verdict:
        """A verdict record (plain JSON data) with its result validated by its kind's model."""
        from llmjury.judgement.verdicts import Verdict

        raw = record.get("result")
        # An unscored verdict has no result to type, whatever its kind (none: the budget refused a
        # test's call before any judgement, llmjury.session.refusals).
        result = None if raw is None else self.result_model(record.get("kind", "")).model_validate(raw)
        # The typed result passes the Verdict's validation as it is: no second model_copy of every verdict.
        return Verdict.model_validate({**record, "result": result})


def check_family(family: object, where: str) -> AnyFamily:
    """The start-up check: `family` keeps the contract, or a ConfigError says what it lacks."""
    if not isinstance(family, Family):
        raise ConfigError(f"family {where}: {family!r} is not a llmjury.family.Family instance")
    problems = []
    name = getattr(family, "name", None)
    if not isinstance(name, str) or not name.isidentifier():
        problems.append(f"name {name!r} is not an identifier")
    options = getattr(family, "options", None)
    if not (isinstance(options, type) and issubclass(options, FamilyOptions)):
        problems.append("options is not a FamilyOptions subclass (which rejects unknown keys)")
    elif required := [key for key, spec in options.model_fields.items() if spec.is_required()]:
        # Every family's options are parsed at start-up, also in runs that give it none.
        problems.append(f"options {', '.join(required)} have no default (every option needs one)")
    results = getattr(family, "results", None)
    if not isinstance(results, Mapping) or not results:
        problems.append("results maps no verdict kind to a model")
    else:
        problems += [f"results[{kind!r}] is not a Result subclass" for kind, model in results.items()
                     if not (isinstance(model, type) and issubclass(model, Result))]
    section = getattr(family, "section", None)
    if not (isinstance(section, type) and issubclass(section, Section)):
        problems.append("section is not a Section subclass")
    elif any(path.split(".")[0] not in section.model_fields for path in family.headline):
        problems.append(f"headline {family.headline} names a metric its section lacks")
    else:
        problems += [f"interval_kinds[{path!r}]: {problem}" for path, kind in family.interval_kinds.items()
                     if (problem := _kind_problem(path, kind, section))]
    if not problems and not type(family).__module__.startswith("llmjury."):
        problems += _unbuildable([family.section, *family.results.values()])
    if problems:
        raise ConfigError(f"family {where}: " + "; ".join(problems))
    return family


def _kind_problem(path: str, kind: object, section: type[Section]) -> str | None:
    """Why a declared interval kind cannot stand, or None."""
    if kind not in KINDS:
        return f"{kind!r} is not a kind of metric (one of {', '.join(KINDS)})"
    if path.split(".")[0] not in section.model_fields:
        return "names a metric its section lacks"
    return None


def _unbuildable(models: Sequence[type[BaseModel]]) -> list[str]:
    """Schemas are built at first use (`Figures`): a family not shipped with llmjury has its models
    built here, so a field pydantic cannot validate stops the run at start-up, not at its first
    verdict or at the session end after every call has been paid for."""
    problems = []
    for model in models:
        try:
            model.model_rebuild(force=True)
        except Exception as exc:  # pydantic's schema errors, or a user type's own
            problems.append(f"{model.__name__}: {str(exc).splitlines()[0]}")
    return problems


#: Any family, for the code that treats every family alike (discovery, aggregation, reports).
AnyFamily = Family[Any, Any]
