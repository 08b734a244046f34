"""The plugin's options and ini keys, and the one place where they meet their defaults.

Declared here and resolved here, so a value is checked once, against the name it was given under
(`--llm-runs` or the ini key `llm_judge_runs`), and the rest of the plugin reads typed `Settings`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from llmjury.cases import CASES_MARK, PIPELINE_MARK
from llmjury.errors import ConfigError
from llmjury.jurors import JurySpec
from llmjury.providers import sdk_warnings
from llmjury.running.budget import UNKNOWN_POLICIES
from llmjury.running.cache import CacheMode
from llmjury.running.decision_field import OUTPUT_MODES
from llmjury.running.freshness import UNDER_TEST
from llmjury.running.limits import RateLimit
from llmjury.running.settings import (
    BATCH_MODES,
    UNCERTAIN,
    Settings,
    check_spec,
    choice,
    confidence_level,
    parse_assignments,
    parse_roles,
    positive_number,
    share_of,
    whole_number,
)
from llmjury.running.shard import Shard
from llmjury.session.item_outcomes import ITEM_FAILURES
from llmjury.session.progress_display import DEFAULT_INTERVAL_S, PROGRESS_MODES
from llmjury.session.sequential_options import bridged, declare_canary, declare_sequential, resolve_sequential
from llmjury.store.location import KINDS, StoreLocation
from llmjury.store.outage import OUTAGE_S
from llmjury.store.postgres import DSN_VARIABLE


def declare(parser: pytest.Parser) -> None:
    """llmjury's options and ini keys, each with its help (the options reference is generated from them)."""
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
    group.addoption("--llm-compare-max-changed", metavar="SHARE",
                    help="the share of the baseline's cases a run may drop or change (same id, other content) "
                         "before its delta gates are inconclusive, between 0 and 1 (default 0.1)")
    group.addoption("--llm-baseline-allow-judge-change", action="store_true", default=False,
                    help="compare with the baseline even when the judges differ (provider, model, prompt, "
                         "parser, temperature)")
    group.addoption("--llm-item-failures", choices=ITEM_FAILURES,
                    help="a failed assertion in a case test of your own: fail the test (default), or record it as "
                         "an outcome (reported as xfail) and let the gates decide the exit code")
    group.addoption("--llm-reports", help="reports directory (default: reports)")
    group.addoption("--llm-data", help="data root: where the families find the datasets a suite ships "
                                       "(default: the llm_data ini value; none in a plain install)")
    group.addoption("--llm-shard", metavar="I/N",
                    help="run shard I of N (from 1, as a CI matrix counts): each case with all its tests in one "
                         "shard, by a stable hash; the run folder gets a shard.json for `llmjury merge`")
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
    parser.addini("llm_compare_max_changed", "share of the baseline's cases a run may drop or change before its "
                  "delta gates are inconclusive (default 0.1)")
    parser.addini("llm_prices", "TOML price table overriding the bundled one")
    parser.addini("llm_openai_base_url", "base URL for openai: providers when OPENAI_BASE_URL is unset")
    parser.addini("llm_gemini_base_url", "base URL for gemini: providers when GOOGLE_GEMINI_BASE_URL is unset")
    # Long runs: live progress of the planning phase and a spending cap (llmjury.session.watch).
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
    group.addoption("--llm-store", choices=KINDS,
                    help="where answers, claims, progress and spend are shared: sqlite (default: the cache file, "
                         f"one machine) or postgres (many machines; connection string from {DSN_VARIABLE} or "
                         "libpq's PG* variables)")
    group.addoption("--llm-store-outage", metavar="SECONDS",
                    help="how long the run waits for a PostgreSQL store that went away (a restart), holding "
                         "its answers meanwhile; past it the run stops, its report marked incomplete "
                         f"(default {OUTAGE_S:g})")
    group.addoption("--llm-run-group", metavar="NAME",
                    help="runs that share a name (CI shards of one workflow run, teammates) share one budget "
                         "on the store (default: this run alone)")
    group.addoption("--llm-lease", metavar="SECONDS",
                    help="how long a claimed call stays another process's without its heartbeat: a killed "
                         "process's calls are taken over after this (default 30)")
    group.addoption("--llm-batch", choices=sorted(BATCH_MODES),
                    help="for specs with ;batch=: wait for their batches (default), or submit them and end, "
                         "leaving their cases pending for the next run on the same store to collect")
    group.addoption("--llm-batch-poll", metavar="SECONDS",
                    help="seconds between looks at the providers' batches (default 30)")
    parser.addini("llm_batch", "wait or submit: what a run does with its calls' batches")
    parser.addini("llm_batch_poll", "seconds between looks at the providers' batches")
    parser.addini("llm_store", "sqlite or postgres: the run store")
    parser.addini("llm_store_outage", "seconds the run waits for a PostgreSQL store that went away")
    parser.addini("llm_run_group", "runs sharing this name share one budget")
    parser.addini("llm_lease", "seconds a claim lasts without its owner's heartbeat")
    parser.addini("llm_progress", "off, auto or lines")
    parser.addini("llm_progress_interval", "seconds between progress lines in a log")
    parser.addini("llm_budget", "US dollars: no new paid call once the run's estimated spend reaches it")
    parser.addini("llm_budget_unknown", "refuse or allow: a model with no price under a budget")
    declare_sequential(parser)  # anytime-valid gates and the judge's canary (llmjury.session.sequential_options)
    declare_canary(parser)


def add_ini_lines(config: pytest.Config) -> None:
    """What llmjury adds to the run's ini values: its markers, and filters for the warnings of the
    providers' SDKs that no user can act on (llmjury.providers.sdk_warnings)."""
    config.addinivalue_line("markers", f"{PIPELINE_MARK}(pipeline): the coroutine that turns a case into verdicts")
    config.addinivalue_line("markers", f"{CASES_MARK}(cases): llmjury cases a test is parametrized over")
    for line in sdk_warnings.IGNORED:
        config.addinivalue_line("filterwarnings", line)


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
    max_changed, max_changed_source = pick("llm_compare_max_changed", "llm_compare_max_changed")
    output, output_source = pick("llm_judge_output", "llm_judge_output")
    store, store_source = pick("llm_store", "llm_store")
    group, _ = pick("llm_run_group", "llm_run_group")
    lease, lease_source = pick("llm_lease", "llm_lease")
    outage, outage_source = pick("llm_store_outage", "llm_store_outage")
    batch, batch_source = pick("llm_batch", "llm_batch")
    poll, poll_source = pick("llm_batch_poll", "llm_batch_poll")
    cache_path = path(pick("llm_cache_path", "llm_cache_path")[0], ".llmjury/cache.sqlite")
    roles: dict[str, JurySpec] = {}
    options: dict[str, str] = {}
    role_sources: dict[str, str] = {}
    option_sources: dict[str, str] = {}
    for given, what in lines("llm_role", "llm_roles"):
        specs = parse_roles(given, what)
        roles |= specs
        role_sources |= dict.fromkeys(specs, what)
    for given, what in lines("llm_option", "llm_options"):
        parsed = parse_assignments(given, what, "socratic.dialogues=100")
        options |= parsed
        option_sources |= dict.fromkeys(parsed, what)
    under_test = [role.strip() for given, _ in lines("llm_under_test", "llm_under_test") for role in given]
    replay_under_test = config.getoption("llm_replay_under_test")
    shard = config.getoption("llm_shard")
    # Checked whatever the store: a bad value set for CI's PostgreSQL must not pass on a laptop's SQLite.
    outage_s = OUTAGE_S if outage is None else positive_number(outage, outage_source, "seconds")
    return Settings(
        judge=check_spec(judge or "offline", judge_source),
        roles=roles,
        under_test=UNDER_TEST | {role for role in under_test if role},
        replay_under_test=bridged(config) or bool(config.getini("llm_replay_under_test") if replay_under_test is None
                                                  else replay_under_test),
        cache_mode=CacheMode(choice(cache_mode or "record", cache_source, tuple(m.value for m in CacheMode))),
        cache_path=cache_path,
        store=StoreLocation.parse(store, cache_path, store_source, outage_s) if store else None,
        run_group=group or None,
        lease_s=Settings.lease_s if lease is None else positive_number(lease, lease_source, "seconds"),
        batch_mode=BATCH_MODES[choice(batch or "wait", batch_source, tuple(BATCH_MODES))],
        batch_poll_s=Settings.batch_poll_s if poll is None else positive_number(poll, poll_source, "seconds"),
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
        shard=None if shard is None else Shard.parse(shard),
        gates=tuple(list(config.getini("llm_gates")) + list(config.getoption("llm_gate"))),
        compare_confidence=Settings.compare_confidence if level is None else confidence_level(level, level_source),
        compare_max_changed=Settings.compare_max_changed if max_changed is None
        else share_of(max_changed, max_changed_source),
        gate_uncertain=UNCERTAIN[choice(uncertain or "inconclusive", uncertain_source, tuple(UNCERTAIN))],
        item_failures=choice(item_failures or "fail", item_failures_source, ITEM_FAILURES),
        prices=path(prices, "") if prices else None,
        options=options,
        option_sources=option_sources,
        role_sources=role_sources,
        sequential=resolve_sequential(config),
    )

