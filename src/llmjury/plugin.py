"""The pytest plugin: options, the planning phase, verdict transport across xdist, reports, gates.

Roles are decided once: an xdist worker plans and runs tests and ships verdicts on its test
reports (and its usage ledger in `workeroutput`); the controller, or the only process under
`-n 0`, collects verdicts from `pytest_runtest_logreport` and writes reports in
`pytest_sessionfinish`. Both paths share one collector and one report writer.
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import random
import re
import secrets
import time
from collections.abc import Callable, Coroutine, Iterable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

pytest.register_assert_rewrite("llmjury.assertions")

from llmjury.budget import UNKNOWN_POLICIES, Budget  # noqa: E402
from llmjury.cache import (  # noqa: E402
    CacheMode,
    SampleStore,
    forget_unanswered,
    remove_scratch,
    scratch_path,
    shards,
)
from llmjury.case_sets import OPTIONS, CaseSets  # noqa: E402
from llmjury.cases import CASES_MARK, LOADED, PIPELINE_MARK, Case, add_markers, generate  # noqa: E402
from llmjury.datasets.files import read_text  # noqa: E402
from llmjury.decision_field import OUTPUT_MODES, check_output  # noqa: E402
from llmjury.engine import Engine  # noqa: E402
from llmjury.errors import ConfigError, ConfigWarning, DatasetError  # noqa: E402
from llmjury.exit_status import GateExit, gate_exit_status  # noqa: E402
from llmjury.families import discover, offline_answers  # noqa: E402
from llmjury.family import Family, FamilyOptions  # noqa: E402
from llmjury.freshness import UNDER_TEST  # noqa: E402
from llmjury.gates import Gate, check_metrics, check_selection  # noqa: E402
from llmjury.handoff import OutcomeHandoff, forget_run  # noqa: E402
from llmjury.interrupts import Interrupts  # noqa: E402
from llmjury.item_outcomes import ITEM_FAILURES, ItemOutcomes  # noqa: E402
from llmjury.judges import CUSTOM, BoundJury  # noqa: E402
from llmjury.jury import Jury, Outcome  # noqa: E402
from llmjury.limits import RateLimit  # noqa: E402
from llmjury.loading import LoadReport, merge  # noqa: E402
from llmjury.planner import (  # noqa: E402
    Pipeline,
    PlannedTest,
    Planner,
    body_of,
    coroutine_of,
    in_share,
    is_jury_test,
    plannable,
    plugin_modules,
    work_key,
)
from llmjury.pricing import PriceTable  # noqa: E402
from llmjury.progress import DEFAULT_INTERVAL_S, JUDGING, PROGRESS_MODES  # noqa: E402
from llmjury.prompts import PromptLibrary, use_library  # noqa: E402
from llmjury.redact import redact_log_records, redact_spec  # noqa: E402
from llmjury.refusals import BudgetRefusals  # noqa: E402
from llmjury.saved import SavedRun, load_run  # noqa: E402
from llmjury.settings import (  # noqa: E402
    OptionLine,
    Settings,
    check_roles,
    check_spec,
    choice,
    confidence_level,
    did_you_mean,
    parse_assignments,
    parse_roles,
    positive_number,
    whole_number,
)
from llmjury.verdicts import Verdict  # noqa: E402
from llmjury.watch import RunWatch, budget_of  # noqa: E402

SESSION_PLUGIN = "llmjury-session"
VERDICTS = pytest.StashKey[list[dict[str, Any]]]()
BASELINE = pytest.StashKey[SavedRun]()  # the --llm-baseline run, read once by the controller
#: Data files named by family options (a user's own), whose load lines the terminal always shows.
GIVEN_FILES = pytest.StashKey[list[Path]]()
#: Set once this session has taken its objects out of the garbage collector's way (gc.freeze): only
#: a session with llmjury cases does, so a pytest run without them keeps the collector as it was.
FROZEN = pytest.StashKey[bool]()
#: A name in a `-m` expression (pytest's grammar: letters, digits and _ : + - . [ ] \).
MARK_NAME = re.compile(r"[\w:+\-.\[\]\\]+")
STARTUP_ERROR = "llmjury_startup_error"  # a worker's start-up error, in its workeroutput
#: Colours of the terminal summary's decision lines, by their first word.
SUMMARY_MARKUP = {"PASS": {"green": True}, "FAIL": {"red": True, "bold": True}, "INCONCLUSIVE": {"yellow": True},
                  "INCOMPLETE": {"red": True, "bold": True}}


# -- options --------------------------------------------------------------------------------------
def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("llmjury", "judging LLM systems with LLMs")
    group.addoption("--llm-judge", help="judge provider spec, e.g. openai:gpt-4o-mini (default: offline)")
    group.addoption("--llm-role", action="append", default=[], metavar="ROLE=SPEC",
                    help="provider for a role, optionally per family: candidate=http:..., socratic.judge=gemini:...")
    group.addoption("--llm-under-test", action="append", default=[], metavar="ROLE",
                    help="a role that is a system under test besides candidate: its answers are asked afresh each "
                         "run, never replayed from an earlier run's cache (unless its spec has ;version=...)")
    group.addoption("--llm-replay-under-test", action="store_true", default=None,
                    help="replay cached answers of the roles under test too (they are asked afresh by default)")
    group.addoption("--llm-option", action="append", default=[], metavar="FAMILY.KEY=VALUE",
                    help="family option, e.g. socratic.dialogues=100 or socratic.positions=random")
    group.addoption("--llm-cache", choices=[m.value for m in CacheMode], help="cache mode (default: record)")
    group.addoption("--llm-cache-path", help="SQLite cache file (default: .llmjury/cache.sqlite)")
    group.addoption("--llm-concurrency", type=int,
                    help="calls in flight per provider for the whole run, split across xdist workers (default 16)")
    group.addoption("--llm-runs", type=int, help="judge runs per case for majority verdicts (default 3)")
    group.addoption("--llm-judge-output", metavar="MODE",
                    help="how verdict judges give their decision: auto (default) asks for a schema field where "
                         "the provider sends a JSON schema natively and its server accepts it, else plain text; "
                         "schema always asks for the field; text never does")
    group.addoption("--llm-seed", type=int, help="seed for data generation, sampling and bootstraps (default 0)")
    group.addoption("--llm-sample", type=int, help="run a seeded random subset of N cases")
    group.addoption("--llm-gate", action="append", default=[], metavar="EXPR",
                    help="threshold checked at session end, e.g. 'socratic.win_rate>=0.55'")
    group.addoption("--llm-gate-uncertain", choices=["pass", "inconclusive"],
                    help="a gate whose interval straddles its threshold: report inconclusive (default; exit 11 "
                         "when nothing failed) or decide on the point estimate alone (pass)")
    group.addoption("--llm-baseline", metavar="PATH",
                    help="a saved run (its folder or verdicts.jsonl) to compare this run with: headline metrics "
                         "on shared cases, paired differences, gates such as 'socratic.win_rate.delta>=-0.02'")
    group.addoption("--llm-compare-confidence", metavar="LEVEL",
                    help="two-sided level of the intervals of the comparison with --llm-baseline, strictly between "
                         "0.5 and 1 (default 0.95); at 0.92 a 'delta.high>=0' gate is a one-sided 4%% test")
    group.addoption("--llm-baseline-allow-judge-change", action="store_true", default=False,
                    help="compare with the baseline even when the judges differ (provider, model, prompt, "
                         "parser, temperature)")
    group.addoption("--llm-item-failures", choices=ITEM_FAILURES,
                    help="a failed assertion in a case test of your own: fail the test (default), or record it as "
                         "an outcome (reported as xfail) and let the gates decide the exit code")
    group.addoption("--llm-reports", help="reports directory (default: reports)")
    group.addoption("--llm-data", help="data root: where the families find the datasets a suite ships "
                                       "(default: the llm_data ini value; none in a plain install)")
    group.addoption("--llm-no-plan", action="store_true", default=False,
                    help="skip the concurrent planning phase; each test makes its own calls")
    parser.addini("llm_judge", "judge provider spec")
    parser.addini("llm_roles", "ROLE=SPEC lines", type="linelist", default=[])
    parser.addini("llm_options", "FAMILY.KEY=VALUE lines", type="linelist", default=[])
    parser.addini("llm_under_test", "roles under test besides candidate, one a line", type="linelist", default=[])
    parser.addini("llm_replay_under_test", "replay cached answers of the roles under test (default false)",
                  type="bool", default=False)
    parser.addini("llm_cache", "cache mode: replay, record, refresh, off")
    parser.addini("llm_cache_path", "SQLite cache file")
    parser.addini("llm_recordings", "directory of JSONL recordings shipped with the suite")
    parser.addini("llm_prompts", "directory of prompt templates that shadow the bundled ones")
    parser.addini("llm_reports", "reports directory")
    parser.addini("llm_data", "data root holding the datasets a suite ships (fixtures/ in llmjury's own suite)")
    parser.addini("llm_families", "extra families, one 'module:attribute' a line", type="linelist", default=[])
    parser.addini("llm_concurrency", "calls in flight per provider per process")
    parser.addini("llm_rate_limits", "lines 'SPEC rpm=N tpm=N concurrency=N'", type="linelist", default=[])
    parser.addini("llm_retry_attempts", "attempts for transient provider errors (default 4)")
    parser.addini("llm_judge_runs", "judge runs per case (default 3)")
    parser.addini("llm_judge_output", "auto, schema or text: how verdict judges give their decision")
    parser.addini("llm_seed", "seed (default 0)")
    parser.addini("llm_gates", "gates checked at session end", type="linelist", default=[])
    parser.addini("llm_gate_uncertain", "pass or inconclusive")
    parser.addini("llm_item_failures", "fail or record: what a failed assertion in a case test of your own does")
    parser.addini("llm_baseline", "a saved run (folder or verdicts.jsonl) to compare each run with")
    parser.addini("llm_compare_confidence", "level of the comparison's intervals, between 0.5 and 1 (default 0.95)")
    parser.addini("llm_prices", "TOML price table overriding the bundled one")
    parser.addini("llm_openai_base_url", "base URL for openai: providers when OPENAI_BASE_URL is unset")
    parser.addini("llm_gemini_base_url", "base URL for gemini: providers when GOOGLE_GEMINI_BASE_URL is unset")
    # Long runs: live progress of the planning phase and a spending cap (llmjury.watch).
    group.addoption("--llm-progress", choices=PROGRESS_MODES,
                    help="live progress of the planning phase across workers: a bar on a terminal and lines in a "
                         "log (auto, the default), lines always, or off")
    group.addoption("--llm-progress-interval", metavar="SECONDS",
                    help=f"seconds between progress lines in a log (default {DEFAULT_INTERVAL_S:g})")
    group.addoption("--llm-budget", metavar="USD",
                    help="estimated spend (price table x token usage, all workers) at which no new paid call "
                         "starts; the cases left end unscored with the cause 'budget'")
    group.addoption("--llm-budget-unknown", choices=UNKNOWN_POLICIES,
                    help="a model with no price under --llm-budget: refuse to start (default) or count it as $0")
    parser.addini("llm_progress", "off, auto or lines")
    parser.addini("llm_progress_interval", "seconds between progress lines in a log")
    parser.addini("llm_budget", "US dollars: no new paid call once the run's estimated spend reaches it")
    parser.addini("llm_budget_unknown", "refuse or allow: a model with no price under a budget")


def resolve_settings(config: pytest.Config) -> Settings:
    """One place where command line, ini and defaults meet, and where every value is checked: a bad
    one is a ConfigError naming where it came from (`--llm-runs` or the ini key `llm_judge_runs`)."""

    def pick(option: str, ini: str) -> tuple[Any, str]:
        """The command line's value, else the ini's, with the name an error should blame."""
        value = config.getoption(option)
        if value not in (None, [], ""):
            return value, "--" + option.replace("_", "-")
        return config.getini(ini) or None, f"ini {ini}"

    def number(option: str, ini: str, default: int, minimum: int | None = 1) -> int:
        value, what = pick(option, ini)
        return default if value is None else whole_number(value, what, minimum)

    def path(value: str | None, default: str) -> Path:
        raw = Path(value or default)
        return raw if raw.is_absolute() else config.rootpath / raw

    def folder(value: str | None, what: str) -> Path | None:
        """A configured folder, which must exist: a typo must not quietly mean 'none'."""
        if not value:
            return None
        found = path(value, "")
        if not found.is_dir():
            raise ConfigError(f"{what} {value}: no such folder ({found})")
        return found

    def lines(option: str, ini: str) -> list[tuple[list[str], str]]:
        """ini lines first, so the command line's assignments win."""
        cli = "--" + option.replace("_", "-")
        return [(list(config.getini(ini)), f"ini {ini}"), (list(config.getoption(option)), cli)]

    concurrency = number("llm_concurrency", "llm_concurrency", 16)
    limits = dict(RateLimit.parse(line, concurrency) for line in config.getini("llm_rate_limits"))
    retry_attempts = config.getini("llm_retry_attempts")
    sample = config.getoption("llm_sample")
    judge, judge_source = pick("llm_judge", "llm_judge")
    cache_mode, cache_source = pick("llm_cache", "llm_cache")
    uncertain, uncertain_source = pick("llm_gate_uncertain", "llm_gate_uncertain")
    item_failures, item_failures_source = pick("llm_item_failures", "llm_item_failures")
    recordings = config.getini("llm_recordings")
    prompts = config.getini("llm_prompts")
    prices = config.getini("llm_prices")
    data, data_source = pick("llm_data", "llm_data")
    budget, budget_source = pick("llm_budget", "llm_budget")
    unknown, unknown_source = pick("llm_budget_unknown", "llm_budget_unknown")
    progress, progress_source = pick("llm_progress", "llm_progress")
    interval, interval_source = pick("llm_progress_interval", "llm_progress_interval")
    level, level_source = pick("llm_compare_confidence", "llm_compare_confidence")
    output, output_source = pick("llm_judge_output", "llm_judge_output")
    roles: dict[str, str] = {}
    options: dict[str, str] = {}
    role_sources: dict[str, str] = {}
    option_sources: dict[str, str] = {}
    for given, what in lines("llm_role", "llm_roles"):
        parsed = parse_roles(given, what)
        roles |= parsed
        role_sources |= dict.fromkeys(parsed, what)
    for given, what in lines("llm_option", "llm_options"):
        parsed = parse_assignments(given, what, "socratic.dialogues=100")
        options |= parsed
        option_sources |= dict.fromkeys(parsed, what)
    under_test = [role.strip() for given, _ in lines("llm_under_test", "llm_under_test") for role in given]
    replay_under_test = config.getoption("llm_replay_under_test")
    return Settings(
        judge=check_spec(judge or "offline", judge_source),
        roles=roles,
        under_test=UNDER_TEST | {role for role in under_test if role},
        replay_under_test=bool(config.getini("llm_replay_under_test") if replay_under_test is None
                               else replay_under_test),
        cache_mode=CacheMode(choice(cache_mode or "record", cache_source, tuple(m.value for m in CacheMode))),
        cache_path=path(pick("llm_cache_path", "llm_cache_path")[0], ".llmjury/cache.sqlite"),
        recordings=path(recordings, "") if recordings else None,
        prompts=folder(prompts, "ini llm_prompts"),
        reports=path(pick("llm_reports", "llm_reports")[0], "reports"),
        data_root=folder(data, data_source),
        concurrency=concurrency,
        rate_limits=limits,
        retry_attempts=whole_number(retry_attempts, "ini llm_retry_attempts") if retry_attempts else 4,
        judge_runs=number("llm_runs", "llm_judge_runs", 3),
        judge_output=choice(output or "auto", output_source, OUTPUT_MODES),
        seed=number("llm_seed", "llm_seed", 0, minimum=None),
        budget=None if budget is None else positive_number(budget, budget_source, "US dollars"),
        budget_source=budget_source,
        budget_unknown=choice(unknown or "refuse", unknown_source, UNKNOWN_POLICIES),
        progress=choice(progress or "auto", progress_source, PROGRESS_MODES),
        progress_interval=DEFAULT_INTERVAL_S if interval is None else positive_number(
            interval, interval_source, "seconds"),
        sample=None if sample is None else whole_number(sample, "--llm-sample"),
        gates=tuple(list(config.getini("llm_gates")) + list(config.getoption("llm_gate"))),
        compare_confidence=Settings.compare_confidence if level is None else confidence_level(level, level_source),
        gate_uncertain=choice(uncertain or "inconclusive", uncertain_source, ("inconclusive", "pass")),
        item_failures=choice(item_failures or "fail", item_failures_source, ITEM_FAILURES),
        prices=path(prices, "") if prices else None,
        options=options,
        option_sources=option_sources,
        role_sources=role_sources,
    )


def pytest_configure(config: pytest.Config) -> None:
    # Registered before pytest's own unraisable-exception plugin adds its cleanup (this hook runs
    # first), so it runs after it: see JurySession.pytest_unconfigure.
    config.add_cleanup(partial(give_back_frozen, config))
    config.add_cleanup(redact_log_records())
    config.addinivalue_line("markers", f"{PIPELINE_MARK}(pipeline): the coroutine that turns a case into verdicts")
    config.addinivalue_line("markers", f"{CASES_MARK}(cases): llmjury cases a test is parametrized over")
    try:
        check_ini_keys(config)
        settings = resolve_settings(config)
        check_output(settings.judge_output, settings.judge_specs())
        families = discover(config.getini("llm_families"))
        register_family_markers(config, families)
        role_warnings = check_roles(settings, families)
        config.stash[OPTIONS] = check_family_options(settings, families)
        for name, options in config.stash[OPTIONS].items():
            config.stash.setdefault(GIVEN_FILES, []).extend(check_dataset_files(families[name], options, settings))
        gates = [Gate.parse(text) for text in settings.gates]
        baseline = baseline_path(config)
        check_metrics(gates, families, baseline=baseline is not None)
        if baseline is not None and not hasattr(config, "workerinput"):
            config.stash[BASELINE] = load_run(*baseline)
        check_prices(settings)
        budget = budget_of(settings, [settings.judge, *settings.roles.values()])
    except ConfigError as exc:  # the message may quote a spec: never its key
        raise pytest.UsageError(redact_spec(str(exc))) from None
    if not hasattr(config, "workerinput"):  # once, from the process that reports
        for text in role_warnings:
            try:
                config.issue_config_time_warning(ConfigWarning(text), stacklevel=2)
            except ConfigWarning:  # `-W error::llmjury.errors.ConfigWarning`: a usage error, not a traceback
                raise pytest.UsageError(text) from None
    config.pluginmanager.register(GateSelection(config, gates, families), "llmjury-gate-selection")
    config.pluginmanager.register(DataErrors(config), "llmjury-data-errors")
    base_urls = (("OPENAI_BASE_URL", "llm_openai_base_url"), ("GOOGLE_GEMINI_BASE_URL", "llm_gemini_base_url"))
    for variable, ini in base_urls:
        if config.getini(ini) and not os.environ.get(variable):
            os.environ[variable] = config.getini(ini)
    session = JurySession(config, settings, gates, families, budget)
    # xdist's hooks are known whatever name its plugin was loaded under (`-p xdist`, or `-p xdist.plugin`
    # and PYTEST_PLUGINS=xdist.plugin where plugin autoload is off).
    xdist = hasattr(config.hook, "pytest_configure_node")
    # SIGINT and SIGTERM, where the run reports: registered before the session (see llmjury.interrupts).
    if not session.is_worker:
        interrupts = Interrupts(session.stopped_by_signal)
        config.pluginmanager.register(interrupts, "llmjury-interrupts")
        if xdist:
            config.pluginmanager.register(interrupts.workers, "llmjury-interrupt-workers")
    config.pluginmanager.register(session, SESSION_PLUGIN)
    config.pluginmanager.register(CaseSets(families, session.settings), "llmjury-case-sets")
    config.pluginmanager.register(session.watch, "llmjury-watch")
    if not session.is_worker:
        config.pluginmanager.register(session.gate_exit, "llmjury-gate-exit")
    config.pluginmanager.register(session.item_outcomes, "llmjury-item-outcomes")
    if budget is not None:  # a test the budget stopped is unscored, not failed (llmjury.refusals)
        config.pluginmanager.register(BudgetRefusals(_recorded, _record_on), "llmjury-budget-refusals")
    if xdist and not session.is_worker:
        config.pluginmanager.register(XdistController(session), "llmjury-xdist")
        config.pluginmanager.register(WorkerStartupErrors(), "llmjury-worker-startup-errors")


def register_family_markers(config: pytest.Config, families: dict[str, Family]) -> None:
    """The family names and fixed markers that `-m` names, whether or not a collected case carries
    them: pytest 9.2+ refuses an unregistered `-m` name under --strict-markers. Only those `-m`
    names, so `pytest --markers` of a project that does not use llmjury lists none of them."""
    named = set(MARK_NAME.findall(config.getoption("markexpr", "") or ""))
    for family in families.values():
        vocabulary = {family.name: f"the {family.name} family's cases", **family.markers}
        add_markers(config, {name: text for name, text in vocabulary.items() if name in named})


def check_family_options(settings: Settings, families: dict[str, Family]) -> dict[str, FamilyOptions]:
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
    if not any((path / name).is_file() for name in ("verdicts.jsonl.gz", "verdicts.jsonl")) and not path.is_file():
        raise ConfigError(f"{what} {given}: no such run folder or verdicts.jsonl file ({path})")
    return path, what


def check_prices(settings: Settings) -> None:
    """The `llm_prices` table is read now, not when the first cost is reported at the end of the run."""
    if settings.prices is not None:
        try:
            PriceTable.load(settings.prices)
        except ConfigError as exc:
            raise ConfigError(f"ini llm_prices: {exc}") from None


def check_dataset_files(family: Family, options: FamilyOptions, settings: Settings) -> list[Path]:
    """Each data file an option names is readable, non-empty UTF-8 text (a folder: exists), so a bad
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
        if path.is_dir():
            continue
        try:
            read_text(path)
        except DatasetError as exc:
            raise ConfigError(f"{line}: {exc}") from None
    return given


def selected_families(items: Iterable[pytest.Item]) -> set[str] | None:
    """The families the selected tests record verdicts under; None when a test records verdicts of its
    own making (`record_verdict` outside a pipeline), whose family start-up cannot know."""
    families: set[str] = set()
    for item in items:
        names = getattr(item, "fixturenames", ())
        case = _case_of(item)
        if case is not None:
            families.add(case.family)
        if "jury" in names or (case is not None and _own_test(item)):  # own tests record `check` verdicts
            families.add(CUSTOM)
        if "record_verdict" in names and item.get_closest_marker(PIPELINE_MARK) is None:
            return None
    return families


class GateSelection:
    """Once collection has selected the tests, every gate's family must have a case among them.

    `tryfirst`, so it runs before planning makes any call. xdist's controller never collects, so a
    worker hands its error on through `workeroutput` and `WorkerStartupErrors` raises it there."""

    def __init__(self, config: pytest.Config, gates: list[Gate], families: dict[str, Family]) -> None:
        self.config, self.gates, self.known = config, gates, set(families)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        selected = selected_families(session.items) if self.gates else None
        if selected is None:
            return
        try:
            check_selection(self.gates, selected, self.known)
        except ConfigError as exc:
            if hasattr(self.config, "workeroutput"):
                self.config.workeroutput[STARTUP_ERROR] = str(exc)
            raise pytest.UsageError(str(exc)) from None


class DataErrors:
    """A dataset that cannot be loaded (a malformed record, an unknown label, no usable item) is
    found while the eval modules generate their cases, at collection. It stops the run as a usage
    error naming the file, item and cause (exit 4), at any `-n` and before planning makes a call,
    instead of a collection error that xdist's workers run past. Other collection errors (a test
    module's own bug) keep pytest's handling."""

    ERROR = re.compile(r"^E\s+(?:llmjury\.errors\.)?(?:DatasetError|ConfigError): (.+)$", re.MULTILINE)

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.errors: list[str] = []

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            found = self.ERROR.findall(str(report.longrepr))
            if found:
                self.errors.append(found[-1].strip())

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.errors:
            message = "; ".join(dict.fromkeys(self.errors))
            if hasattr(self.config, "workeroutput"):
                self.config.workeroutput[STARTUP_ERROR] = message
            raise pytest.UsageError(message)


class WorkerStartupErrors:
    """The controller's side of `GateSelection` (registered only with xdist): a worker's start-up error
    ends the run as a usage error, exit 4, as it would at `-n 0`."""

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        message = (getattr(node, "workeroutput", None) or {}).get(STARTUP_ERROR)
        if message:
            raise pytest.UsageError(message)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """`llmjury.parametrize(cases)`: parametrize here, where the markers can be registered."""
    marker = metafunc.definition.get_closest_marker(CASES_MARK)
    if marker is not None:
        generate(metafunc, marker.args[0])


# -- fixtures --------------------------------------------------------------------------------------
@pytest.fixture
def jury(request: pytest.FixtureRequest) -> BoundJury:
    """Providers by role, prompts and cached calls, plus judge calls (`compare`, `score`, `geval`,
    `ask`) that record their verdicts on this test."""
    return bound_jury(session_of(request.config).jury, request.node)


def bound_jury(jury: Jury, item: pytest.Item) -> BoundJury:
    """The run's jury recording onto `item`: verdicts go to its stash, hence its teardown report."""
    case = _case_of(item)

    def record(verdict: Verdict) -> None:
        item.stash.setdefault(VERDICTS, []).append(verdict.record())

    return BoundJury(jury, record, case_id=case.id if case is not None else item.nodeid,
                     name=getattr(item, "originalname", item.name), test=item.nodeid)


@pytest.fixture
def case(request: pytest.FixtureRequest) -> Case:
    """The case a test was parametrized with by `llmjury.parametrize`."""
    return request.param


@pytest.fixture
def record_verdict(request: pytest.FixtureRequest) -> Any:
    """Attach a verdict to this test's report, to be merged and aggregated at session end."""

    def record(verdict: Verdict) -> None:
        request.node.stash.setdefault(VERDICTS, []).append(verdict.record())

    return record


@pytest.fixture
def outcome(request: pytest.FixtureRequest, case: Case, record_verdict: Any) -> Outcome:
    """The outcome of this test's pipeline on its `case`, with its verdicts already recorded."""
    marker = request.node.get_closest_marker(PIPELINE_MARK)
    if marker is None:
        raise pytest.UsageError(
            f"{request.node.nodeid}: the `outcome` fixture needs @llmjury.pipeline(...) and a `case` "
            "parameter from llmjury.parametrize(...)")
    result = session_of(request.config).planner.outcome(marker.args[0], case)
    for verdict in result.verdicts:
        record_verdict(verdict)
    return result


# -- the session ---------------------------------------------------------------------------------
def session_of(config: pytest.Config) -> JurySession:
    """The run's llmjury state, registered once in `pytest_configure`."""
    return config.pluginmanager.get_plugin(SESSION_PLUGIN)


class JurySession:
    def __init__(self, config: pytest.Config, settings: Settings, gates: list[Gate],
                 families: dict[str, Family], budget: Budget | None = None) -> None:
        self.config = config
        self.settings = settings
        self.gates = gates
        self.families = families
        self.is_worker = hasattr(config, "workerinput")
        if self.is_worker:
            self.run_id = config.workerinput["llmjury_run_id"]
            self.worker_index = int(config.workerinput["workerid"].lstrip("gw") or 0)
            self.worker_count = int(config.workerinput["workercount"])
            self.settings = settings.share(self.worker_count)
        else:
            self.run_id = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)
            self.worker_index, self.worker_count = 0, 1
        self.started = time.time()
        self.records: dict[str, list[dict[str, Any]]] = {}
        self.worker_ledgers: list[dict[str, dict[str, float]]] = []
        self.worker_roles: list[dict[str, Any]] = []
        self.worker_loading: list[dict[str, Any]] = []
        #: Load reports of the datasets the selected tests use (set once collection has selected them).
        self.loading: list[LoadReport] = []
        #: What providers learned their servers do differently (ignore n, refuse json_schema), by provider.
        self.adaptations: dict[str, dict[str, str]] = {}
        self.workers = 0
        #: Progress and budget: this process's meter, and the display where the run reports.
        self.watch = RunWatch(config, settings, budget, self.run_id, lambda: self.workers or 1)
        self._jury: Jury | None = None
        self._planner: Planner | None = None
        self.summary_lines: list[str] = []
        #: The gates' exit status, applied after every other session end (llmjury.exit_status).
        self.gate_exit = GateExit()
        #: Own-eval case tests' pass/fail as verdicts, and `--llm-item-failures` (llmjury.item_outcomes).
        self.item_outcomes = ItemOutcomes(settings.item_failures, _case_of, _own_test, _record_on)
        #: What stopped the run before its end (SIGTERM, Ctrl-C), None while it runs its course.
        self.stopped_by: str | None = None
        #: xdist workers that went down with an error (a crash), as their causes.
        self.crashed: list[str] = []
        self.tests_finished = 0
        self.collected_by_workers = 0  # xdist's controller collects nothing itself

    # lazily built so a session with no llmjury tests opens no cache and starts no thread
    @property
    def jury(self) -> Jury:
        if self._jury is None:
            settings = self.settings
            if settings.cache_mode is CacheMode.OFF:
                store = SampleStore(scratch_path(settings.cache_path, self.run_id))
            else:
                store = SampleStore(settings.cache_path, shards(settings.recordings))
            prompts = PromptLibrary([settings.prompts] if settings.prompts else [])
            use_library(prompts)
            engine = Engine(settings, store, self.run_id, offline_answers(self.families),
                            meter=self.watch.meter)
            self._jury = Jury(engine, settings, prompts,
                              PriceTable.load(settings.prices), options=self.config.stash[OPTIONS])
        return self._jury

    @property
    def planner(self) -> Planner:
        if self._planner is None:
            store = self.jury.engine.store
            handoff = None
            if self.worker_count > 1 and store is not None:
                handoff = OutcomeHandoff(store.path, self.run_id, self.worker_index)
            self._planner = Planner(self.jury, worker=self.worker_index, workers=self.worker_count,
                                    handoff=handoff, typed=self.typed_verdict, wait=self.watch.wait)
        return self._planner

    def typed_verdict(self, record: dict[str, Any]) -> Verdict:
        """A verdict record with its result typed by its family, when the run knows the family."""
        family = self.families.get(record.get("family", ""))
        return family.typed(record) if family is not None else Verdict.foreign(record)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """`--llm-sample N`: keep a seeded random subset of the case tests (same on every worker)."""
        if self.settings.sample is None:
            return
        cased = [item for item in items if _case_of(item) is not None]
        rng = random.Random(self.settings.seed)
        keep = set(rng.sample(sorted(i.nodeid for i in cased), min(self.settings.sample, len(cased))))
        dropped = [i for i in cased if i.nodeid not in keep]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = [i for i in items if i.nodeid in keep or _case_of(i) is None]

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        loaded = self.config.stash.get(LOADED, None)
        if loaded is not None:  # after -k, -m and --llm-sample: only the datasets of the tests that run
            self.loading = loaded.used(filter(None, map(_case_of, session.items)),
                                       self.config.stash.get(GIVEN_FILES, []))
        if self.config.getoption("llm_no_plan") or self.config.getoption("collectonly"):
            return
        work: list[tuple[Pipeline, Case]] = []
        tests: dict[str, Callable[[], Coroutine[Any, Any, Any]]] = {}
        plugins = plugin_modules(self.config)
        for item in session.items:
            marker, case = item.get_closest_marker(PIPELINE_MARK), _case_of(item)
            if marker is not None and case is not None:
                pipeline = marker.args[0]
                if in_share(work_key(pipeline, case), self.worker_index, self.worker_count):
                    work.append((pipeline, case))
            elif plannable(item, plugins) and in_share(item.nodeid, self.worker_index, self.worker_count):
                tests[item.nodeid] = PlannedTest(partial(body_of, item, bound_jury(self.jury, item)),
                                                 partial(_recorded, item))
        if work or tests or any(_case_of(item) is not None or is_jury_test(item) for item in session.items):
            # What start-up and collection built lives to the end of the session: out of the garbage
            # collector's way, so each full collection during planning, tests and the session end
            # walks only what came after (give_back_frozen runs as the session's last cleanup).
            self.config.stash[FROZEN] = True
            gc.freeze()
            freeze_at_exit()
            if self.is_worker:  # the controller collects nothing: tell it this run judges (judging())
                JUDGING.mark(self.run_id)
            # A worker with an empty share says so too, so the progress display knows it is not coming.
            done = self.watch.planning(len({work_key(p, c) for p, c in work}) + len(tests))
            if work or tests:
                self.planner.start(work, tests, on_done=done)

    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(self, pyfuncitem: pytest.Function) -> bool | None:
        """An `async def` test taking `jury`: its planned result, else its body run now on the engine
        loop (pytest itself would skip it); an exception in the body is the test's outcome."""
        if not is_jury_test(pyfuncitem):
            return None
        planned = self.planner.test_result(pyfuncitem.nodeid)
        if planned is not None:
            self.watch.wait(planned)
            return True
        handed = self.planner.handed_test(pyfuncitem.nodeid)
        if handed is None:
            self.jury.engine.run(coroutine_of(pyfuncitem, pyfuncitem.funcargs))
            return True
        # Planned by another worker: its verdicts and its outcome, not a second run of the body.
        pyfuncitem.stash.setdefault(VERDICTS, []).extend(handed["verdicts"])
        if handed.get("outcome") == "skip":
            pytest.skip(handed["error"])
        if handed.get("outcome") == "xfail":
            pytest.xfail(handed["error"])
        if "error" in handed:
            pytest.fail(f"{handed['summary']}\n{handed['error']}\n(planned by another worker)", pytrace=False)
        return True

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        if report.when == "teardown":
            # Only the teardown report carries verdicts, so nothing is counted twice.
            report.llmjury_verdicts = list(item.stash.get(VERDICTS, []))
        return report

    def stopped_by_signal(self, cause: str) -> None:
        self.stopped_by = self.stopped_by or cause

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        self.stopped_by = self.stopped_by or "KeyboardInterrupt (Ctrl-C)"

    def judging(self) -> bool:
        """Did this session select llmjury's tests (this process's, or any worker's)? A project's own
        tests, stopped, get no report."""
        return self.config.stash.get(FROZEN, False) or JUDGING.marked(self.run_id)

    def pytest_internalerror(self, excrepr: Any, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        self.stopped_by = self.stopped_by or f"INTERNALERROR: {excinfo.exconly().splitlines()[0][:300]}"

    def stopped(self, session: pytest.Session) -> dict[str, Any] | None:
        """Why the run ended before its last test, with how far it got; None for a whole run. Whatever
        stopped it (a signal, -x, an internal error, a crashed worker), a run in which a selected test
        never reported is not whole."""
        by = self.stopped_by or session.shouldstop or session.shouldfail or "; ".join(self.crashed)
        selected = len(session.items) or self.collected_by_workers or None
        # Only the reporting process counts reports: a worker runs a share of the tests it collected.
        if not by and not self.is_worker and selected is not None and self.tests_finished < selected:
            by = f"{selected - self.tests_finished} of {selected} selected tests never reported"
        if not by:
            return None
        return {"by": by if isinstance(by, str) else "an early stop", "tests_finished": self.tests_finished,
                "tests_collected": selected}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker or report.when != "teardown":
            return
        self.tests_finished += 1
        verdicts = getattr(report, "llmjury_verdicts", None)
        if verdicts:
            self.records[report.nodeid] = verdicts  # a rerun replaces, never adds

    def all_records(self) -> list[dict[str, Any]]:
        return [r for nodeid in sorted(self.records) for r in self.records[nodeid]]

    # tryfirst: a stopped xdist run writes its report before xdist's teardown waits for the workers
    # (their figures never come once the controller's loop is interrupted); a whole run is unchanged,
    # its workers were down before the session finished.
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.is_worker and self._planner is not None and self.stopped(session) is None:
            self._planner.settle()  # a stopped run cancels what is left instead (engine.close)
        ledger = self._jury.engine.ledger_dict() if self._jury is not None else {}
        roles = self._jury.engine.roles_dict() if self._jury is not None else {}
        loading = merge([*self.loading, *self.worker_loading])
        adaptations = self._jury.engine.adaptations() if self._jury is not None else {}
        if self.is_worker:
            self.config.workeroutput["llmjury_adaptations"] = adaptations
            self.config.workeroutput["llmjury_ledger"] = ledger
            self.config.workeroutput["llmjury_roles"] = roles
            self.config.workeroutput["llmjury_loading"] = [r.model_dump() for r in loading]
            return
        for provider, learned in adaptations.items():
            self.adaptations.setdefault(provider, {}).update(learned)
        records = self.all_records()
        stopped = self.stopped(session)
        if stopped is not None:
            planned = self.finished_planning(records)
            records += planned
            stopped["planned_verdicts"] = len(planned)
        if not records and not any([ledger, *self.worker_ledgers]) and (stopped is None or not self.judging()):
            return  # a stopped run of llmjury's tests says so even when nothing had finished
        freeze_at_exit()
        # Imported here: statistics and tables are needed only when there is something to report.
        from llmjury import aggregate
        from llmjury.model import BudgetFacts
        from llmjury.reports import terminal_lines, write_run

        usage = aggregate.merge_usage(ledger, *self.worker_ledgers)
        typed = aggregate.typed_verdicts(records, self.families)
        budget = self.watch.summary(records).get("budget")  # the budget's facts, when the run had one
        summary = aggregate.summarize(records, {**self.run_info(), "stopped": stopped}, usage,
                                      PriceTable.load(self.settings.prices), self.families, loading, typed,
                                      roles=aggregate.merge_roles(roles, *self.worker_roles), complete=stopped is None,
                                      budget=None if budget is None else BudgetFacts.model_validate(budget))
        baseline = self.config.stash.get(BASELINE, None)
        if baseline is not None:
            from llmjury.compare import compare_runs

            # The comparison reads this run's sections, so it joins the summary once they exist.
            comparison = compare_runs(
                records, baseline, self.families, current_summary=summary,
                allow_judge_change=self.config.getoption("llm_baseline_allow_judge_change"),
                confidence=self.settings.compare_confidence)
            summary = summary.model_copy(update={"comparison": comparison})
        summary = summary.portable(self.config.rootpath)  # no runner's absolute path in any report
        results = [g.check(summary, uncertain=self.settings.gate_uncertain) for g in self.gates]
        run_dir = write_run(self.settings.reports, summary, records, results, self.families, typed,
                            baseline=baseline.records if baseline is not None else None, root=self.config.rootpath)
        self.summary_lines = terminal_lines(summary, results, run_dir, self.families, self.config.rootpath)
        if summary.comparison is not None:
            from llmjury.compare import comparison_lines

            self.summary_lines += comparison_lines(summary.comparison)
        self.gate_exit.status = gate_exit_status(results)

    def finished_planning(self, reported: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Verdicts that planning finished but no test reported, because the run stopped first: from
        this process's planner, and from what xdist workers handed on in the run's SQLite file."""
        found = self._planner.finished() if self._planner is not None else []
        if self.workers:
            s = self.settings
            path = scratch_path(s.cache_path, self.run_id) if s.cache_mode is CacheMode.OFF else s.cache_path
            if path.exists():
                handoff = OutcomeHandoff(path, self.run_id, 0)
                try:
                    found += [r for payload in handoff.handed_on() for r in payload.get("verdicts", [])]
                finally:
                    handoff.close()
        seen = {json.dumps(r, sort_keys=True) for r in reported}
        new = []
        for record in found:
            key = json.dumps(record, sort_keys=True)
            if key not in seen:
                seen.add(key)
                new.append(record)
        return new

    def run_info(self) -> dict[str, Any]:
        s = self.settings
        return {
            "id": self.run_id, "started": _iso(self.started), "finished": _iso(time.time()),
            "judge": redact_spec(s.judge), "roles": {role: redact_spec(spec) for role, spec in s.roles.items()},
            "cache_mode": s.cache_mode.value, "seed": s.seed, "judge_runs": s.judge_runs,
            "judge_output": s.judge_output, "sample": s.sample,
            "workers": self.workers or 1, "args": [redact_spec(arg) for arg in self.config.invocation_params.args],
            "adaptations": self.adaptations,
        }

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        lines = self.summary_lines + self.item_outcomes.summary_lines()
        if lines:
            terminalreporter.section("llmjury")
            for line in lines:
                terminalreporter.write_line(line, **SUMMARY_MARKUP.get(line.split(" ", 1)[0], {}))

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self._jury is not None:  # first: its cancelled work may still hand on through the hand-off
            self._jury.engine.close()
        if self._planner is not None and self._planner.handoff is not None:
            self._planner.handoff.close()
        if not self.is_worker:
            JUDGING.clear(self.run_id)
        if not self.is_worker and self.settings.cache_mode is CacheMode.OFF:
            remove_scratch(self.settings.cache_path, self.run_id)
        elif not self.is_worker:  # the workers are gone and the report is written
            if self.workers:
                forget_run(self.settings.cache_path, self.run_id)
            forget_unanswered(self.settings.cache_path, self.run_id)
        # pytest's cleanup then runs five full garbage collections to surface unraisable exceptions,
        # each walking every object of the run (1.2 s of CPU after 1000 cases): one collection here,
        # while pytest still records what it raises, then what lives is set aside until that cleanup
        # is over (give_back_frozen), so they walk only what the other plugins' unconfigure leave.
        if config.stash.get(FROZEN, False):
            gc.collect()
            gc.freeze()


class XdistController:
    """Registered only when xdist is installed, so its hooks are never 'unknown'."""

    def __init__(self, session: JurySession) -> None:
        self.session = session

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["llmjury_run_id"] = self.session.run_id
        self.session.workers += 1

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.session.collected_by_workers = max(self.session.collected_by_workers, len(ids))

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        if error is not None:
            name = getattr(getattr(node, "gateway", None), "id", "a worker")
            self.session.crashed.append(f"worker {name} went down: {str(error).strip().splitlines()[-1][:300]}")
        output = getattr(node, "workeroutput", None) or {}  # a crashed worker has none
        if "llmjury_ledger" in output:
            self.session.worker_ledgers.append(output["llmjury_ledger"])
            self.session.worker_roles.append(output.get("llmjury_roles", {}))
        self.session.worker_loading.extend(output.get("llmjury_loading", []))
        for provider, learned in output.get("llmjury_adaptations", {}).items():
            self.session.adaptations.setdefault(provider, {}).update(learned)


def freeze_at_exit() -> None:
    """Freeze what is alive when the interpreter exits: its last full collection would walk every
    object of the run once more (0.3-0.5 s per process after 1000 cases) in a process that is ending."""
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)


def give_back_frozen(config: pytest.Config) -> None:
    """Hand what the session froze back to the garbage collector, as its last cleanup."""
    if config.stash.get(FROZEN, False):
        gc.unfreeze()


def _own_test(item: pytest.Item) -> bool:
    """A case test of the user's own (no family pipeline decides its verdicts)."""
    return item.get_closest_marker(PIPELINE_MARK) is None


def _record_on(item: pytest.Item, verdict: Verdict) -> None:
    item.stash.setdefault(VERDICTS, []).append(verdict.record())


def _recorded(item: pytest.Item) -> list[dict[str, Any]]:
    return list(item.stash.get(VERDICTS, []))


def _case_of(item: pytest.Item) -> Case | None:
    case = getattr(getattr(item, "callspec", None), "params", {}).get("case")
    return case if isinstance(case, Case) else None


def _iso(timestamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(timestamp))
