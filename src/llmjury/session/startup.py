"""Start-up: everything a run can know before collection is resolved and checked here.

A bad value (a spec, an option, a gate path, a price table, a data file, an `llm_*` ini key) stops
the run now, as a usage error naming the item and where it was set, before any call is paid for.
"""

from __future__ import annotations

import os
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from llmjury.baseline_lookup import LOOKUP
from llmjury.cases import add_markers
from llmjury.datasets.files import read_text
from llmjury.errors import ConfigError, ConfigWarning, DatasetError
from llmjury.families import discover
from llmjury.family import AnyFamily, FamilyOptions
from llmjury.hints import did_you_mean
from llmjury.pricing import PriceTable
from llmjury.providers.base import ProviderSpec, url
from llmjury.providers.http_body import check_body_templates
from llmjury.providers.keys import missing_key
from llmjury.redact import redact_spec
from llmjury.results.gate_checks import check_metrics
from llmjury.results.gates import Gate
from llmjury.running import unsaved
from llmjury.running.budget import Budget
from llmjury.running.cache import CacheMode
from llmjury.running.decision_field import check_output
from llmjury.running.freshness import UNDER_TEST
from llmjury.running.settings import OptionLine, Settings
from llmjury.saved import SavedRun, load_run
from llmjury.session.case_sets import OPTIONS
from llmjury.session.options import resolve_settings
from llmjury.session.watch import budget_of
from llmjury.store.schema import check_store

#: A name in a `-m` expression (pytest's grammar: letters, digits and _ : + - . [ ] \).
MARK_NAME = re.compile(r"[\w:+\-.\[\]\\]+")
#: Settings that belong to one invocation, not to a project's ini, and why.
PER_INVOCATION = {"llm_shard": "a shard belongs to one invocation, not to the project: pass --llm-shard I/N"}
#: Where an ini key may point the providers' SDKs when their own variable is unset.
BASE_URLS = (("OPENAI_BASE_URL", "llm_openai_base_url"), ("GOOGLE_GEMINI_BASE_URL", "llm_gemini_base_url"))


@dataclass(frozen=True)
class StartUp:
    """What start-up resolved and checked, handed to the plugins of this process's role."""

    settings: Settings
    families: dict[str, AnyFamily]
    gates: list[Gate]
    budget: Budget | None
    #: Data files and folders named by family options (a user's own), whose load lines the terminal always shows.
    given_files: list[Path]
    #: Roles set but asked for by no family: warned about once, by the process that reports.
    role_warnings: list[str]
    #: The `--llm-baseline` (or ini `llm_baseline`) path with the name to blame, read by the process that reports.
    baseline: tuple[Path, str] | None


def start_up(config: pytest.Config) -> StartUp:
    """Resolve and check the run's configuration; a ConfigError becomes a usage error (exit 4)."""
    try:
        check_ini_keys(config)
        settings = resolve_settings(config)
        check_output(settings.judge_output, settings.judge_specs())
        check_keys(settings)
        families = discover(config.getini("llm_families"))
        register_family_markers(config, families)
        role_warnings = check_roles(settings, families)
        parsed = config.stash[OPTIONS] = check_family_options(settings, families)
        check_body_templates(role_specs(settings) + option_specs(settings, families, parsed),
                             [settings.prompts] if settings.prompts else [])
        given = [path for name, options in parsed.items()
                 for path in check_dataset_files(families[name], options, settings)]
        gates = [Gate.parse(text) for text in settings.gates]
        baseline = baseline_path(config)
        check_metrics(gates, families, baseline=baseline is not None)
        check_prices(settings)
        check_store(settings.location)
        unsaved.check(settings.unsaved())
        budget = budget_of(settings, [settings.judge, *settings.roles.values()])
    except ConfigError as exc:  # the message may quote a spec: never its key
        raise pytest.UsageError(redact_spec(str(exc))) from None
    for variable, ini in BASE_URLS:
        from_environment = os.environ.get(variable)
        check_base_url(from_environment or config.getini(ini), variable if from_environment else f"ini {ini}")
        if config.getini(ini) and not os.environ.get(variable):
            os.environ[variable] = config.getini(ini)
    return StartUp(settings, families, gates, budget, given, role_warnings, baseline)


def check_base_url(address: str, where: str) -> None:
    """An SDK's base URL from the environment or the ini file is an http(s) address, as a spec's is."""
    if not address:
        return
    try:
        url(address)
    except ValueError as exc:
        raise pytest.UsageError(f"{where}={address!r}: {exc}") from None


def check_keys(settings: Settings) -> None:
    """A judge with no key (a fork's pull request: no secrets) stops the run at start-up, naming the
    provider, instead of a run of refused calls; a run that replays its cache calls no one."""
    if settings.cache_mode is CacheMode.REPLAY:
        return
    for role, spec in settings.judge_specs().items():
        for juror in spec.jurors:
            message = missing_key(juror.spec)
            if message is not None:
                raise ConfigError(f"{message} (the {role} {juror.label})")


def read_baseline(start: StartUp) -> SavedRun | None:
    """The baseline run, read once by the process that reports; an unreadable one is a usage error."""
    if start.baseline is None:
        return None
    try:
        return load_run(*start.baseline)
    except ConfigError as exc:
        raise pytest.UsageError(redact_spec(str(exc))) from None


def warn_roles(config: pytest.Config, start: StartUp) -> None:
    """Warn of roles no family asks for; under `-W error::llmjury.errors.ConfigWarning`, a usage error."""
    for text in start.role_warnings:
        try:
            config.issue_config_time_warning(ConfigWarning(text), stacklevel=2)
        except ConfigWarning:  # a usage error, not a traceback
            raise pytest.UsageError(text) from None


def role_specs(settings: Settings) -> list[tuple[str, ProviderSpec]]:
    """Every juror's spec of the judge and the roles, with the line that set it (for start-up checks)."""
    lines = [("--llm-judge", "judge", settings.judge)]
    lines += [(settings.role_sources.get(key, "--llm-role"), key, spec) for key, spec in settings.roles.items()]
    return [(f"{where} {key}={spec.text}", juror.spec) for where, key, spec in lines for juror in spec.jurors]


def option_specs(settings: Settings, families: Mapping[str, AnyFamily],
                 parsed: Mapping[str, FamilyOptions]) -> list[tuple[str, ProviderSpec]]:
    """The provider specs families' options name (an arena's live models), each with its option line
    and entry, so they are checked as the roles' are."""
    found = []
    for name, family in families.items():
        for named in family.provider_specs(parsed[name]):
            key = f"{name}.{named.option}"
            found.append((f"{settings.option_sources.get(key, '--llm-option')} {key} entry {named.entry}", named.spec))
    return found


def check_roles(settings: Settings, families: Mapping[str, AnyFamily]) -> list[str]:
    """A role set with a typo would silently never be used, and every call would go to the default
    provider. A per-family role (`socratic.judge=SPEC`) names a known family and a role that family
    asks for (a ConfigError otherwise); a role for every family that none asks for, but that is
    close to one that is, gets a warning (returned): a test of the user's own may ask for any name."""
    asked = {role for family in families.values() for role in family.roles}
    warnings = []
    for key, spec in settings.roles.items():
        where = f"{settings.role_sources.get(key, '--llm-role')} {key}={spec.text}"
        family, dot, role = key.partition(".")
        batched = [juror.spec for juror in spec.jurors if juror.spec.text_option("batch") is not None
                   and juror.spec.version is None]
        if (role or family) in settings.under_test and batched and not settings.replay_under_test:
            raise ConfigError(f"{where}: a role under test is asked afresh by each run, so its calls never go by "
                              "batch (;batch=); give its spec a ;version=... (its answers are then replayed across "
                              "runs, and batched) or drop ;batch=")
        if not dot:
            hint = did_you_mean(key, asked) if key not in asked else ""
            if hint:
                warnings.append(f"{where}: no family asks for role {key!r}{hint}; only a test of your own "
                                f"that asks for {key!r} uses it")
        elif family not in families:
            raise ConfigError(f"{where}: unknown family {family!r}{did_you_mean(family, families)}; "
                              f"known families: {', '.join(families)} (or write {role}=SPEC for every family)")
        elif families[family].roles and role not in families[family].roles:
            roles = families[family].roles
            raise ConfigError(f"{where}: the {family} family asks for no role {role!r}{did_you_mean(role, roles)}; "
                              f"its roles: {', '.join(roles)}")
    named = asked | {key.partition(".")[2] or key for key in settings.roles}
    for role in sorted(settings.under_test - UNDER_TEST - named):
        hint = did_you_mean(role, named)
        if hint:
            warnings.append(f"--llm-under-test {role}: no family asks for role {role!r} and no --llm-role sets it"
                            f"{hint}; only a test of your own that asks for {role!r} uses it")
    return warnings



def register_family_markers(config: pytest.Config, families: dict[str, AnyFamily]) -> None:
    """The family names and fixed markers that `-m` names, whether or not a collected case carries
    them: pytest 9.2+ refuses an unregistered `-m` name under --strict-markers. Only those `-m`
    names, so `pytest --markers` of a project that does not use llmjury lists none of them."""
    named = set(MARK_NAME.findall(config.getoption("markexpr", "") or ""))
    for family in families.values():
        vocabulary = {family.name: f"the {family.name} family's cases", **family.markers}
        add_markers(config, {name: text for name, text in vocabulary.items() if name in named})


def check_family_options(settings: Settings, families: dict[str, AnyFamily]) -> dict[str, FamilyOptions]:
    """Every `FAMILY.KEY=VALUE` option (`--llm-option` or the ini's `llm_options`) names a known
    family and a key its options model knows; an error names the line and where it was set.
    Returns every family's parsed options (its defaults where none was given): the run's only parse."""
    by_family: dict[str, list[OptionLine]] = {}
    for key, value in settings.options.items():
        name, dot, option = key.partition(".")
        line = OptionLine(option, value, settings.option_sources.get(key, "--llm-option"), f"{key}={value}")
        if not dot or not option:
            raise ConfigError(f"{line}: write FAMILY.KEY=VALUE, e.g. socratic.dialogues=100")
        if name not in families:
            raise ConfigError(f"{line}: unknown family {name!r}{did_you_mean(name, families)}; "
                              f"known families: {', '.join(families)}")
        by_family.setdefault(name, []).append(line)
    return {name: family.parse_options(by_family.get(name, [])) for name, family in families.items()}


def check_ini_keys(config: pytest.Config) -> None:
    """An `llm_*` key llmjury does not read (`llm_option` for `llm_options`) is an error: pytest only
    warns about unknown ini keys (unless --strict-config), and the run would go on with defaults.

    pytest keeps the ini file's keys and the registered names private (`Config.inicfg` is deprecated
    since 9.0), so this reads them where pytest's own check does, and does nothing if they move."""
    unknown = getattr(config, "_get_unknown_ini_keys", None)
    registered = getattr(getattr(config, "_parser", None), "_inidict", None)
    if unknown is None or registered is None:
        return
    ours = sorted(name for name in registered if name.startswith("llm_"))
    for key in sorted(unknown()):
        if key in PER_INVOCATION:
            raise ConfigError(f"ini {key}: {PER_INVOCATION[key]}")
        if key.startswith("llm_"):
            raise ConfigError(f"ini {key}: not an llmjury setting{did_you_mean(key, ours)}; "
                              f"llmjury reads {', '.join(ours)}")


def baseline_path(config: pytest.Config) -> tuple[Path, str] | None:
    """The `--llm-baseline` (relative to where pytest was started) or ini `llm_baseline` (relative to
    the root) path, with the name an error should blame; it must exist, checked now."""
    given, what, base = config.getoption("llm_baseline"), "--llm-baseline", config.invocation_params.dir
    if not given:
        given, what, base = config.getini("llm_baseline"), "ini llm_baseline", config.rootpath
    if not given:
        return None
    path = Path(given) if Path(given).is_absolute() else base / given
    if not any((path / name).is_file() for name in ("verdicts.jsonl.gz", "verdicts.jsonl", LOOKUP)) \
            and not path.is_file():
        raise ConfigError(f"{what} {given}: no such run folder or verdicts.jsonl file ({path})")
    return path, what


def check_prices(settings: Settings) -> None:
    """The `llm_prices` table is read now, not when the first cost is reported at the end of the run."""
    if settings.prices is not None:
        try:
            PriceTable.load(settings.prices)
        except ConfigError as exc:
            raise ConfigError(f"ini llm_prices: {exc}") from None


def check_dataset_files(family: AnyFamily, options: FamilyOptions, settings: Settings) -> list[Path]:
    """Each data file an option names is readable, non-empty UTF-8 text (a folder or zip: exists), so a bad
    path or export stops the run at start-up, named, instead of failing or yielding 0 cases later.
    Returns the files and folders the options name."""
    paths = family.dataset_paths(options, settings)
    given: list[Path] = []
    for dataset in family.datasets:
        if dataset.option not in options.model_fields_set or dataset.name not in paths:
            continue  # a shipped copy under the data root is the suite's business, not the user's
        path = paths[dataset.name]
        key = f"{family.name}.{dataset.option}"
        line = f"{settings.option_sources.get(key, '--llm-option')} {key}={getattr(options, dataset.option)}"
        if not path.exists():
            raise ConfigError(f"{line}: {path}: no such file or folder")
        given.append(path)
        if path.is_dir() or zipfile.is_zipfile(path):  # a folder, or an archive of one (a Slack export)
            continue
        try:
            read_text(path)
        except DatasetError as exc:
            raise ConfigError(f"{line}: {exc}") from None
    return given
