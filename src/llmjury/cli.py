"""`llmjury`: re-aggregate saved verdicts and manage recordings, without calling any model."""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from importlib.metadata import version
from pathlib import Path

from llmjury.arguments import Parser
from llmjury.batch_commands import add_batch_commands
from llmjury.collector import held_off
from llmjury.errors import CommandLineError, ConfigError
from llmjury.families import discover
from llmjury.family import Command
from llmjury.hints import did_you_mean
from llmjury.loading import LoadReport, merge
from llmjury.model import RunInfo, RunSummary, read_summary
from llmjury.pricing import PriceTable
from llmjury.reporting.reports import terminal_lines, write_run
from llmjury.results import aggregate
from llmjury.results.exit_status import gate_exit_status
from llmjury.results.gate_checks import COMPARE_COMMAND, check_metrics
from llmjury.results.gates import Gate
from llmjury.results.verdict_spill import VerdictSpill
from llmjury.runfiles import verdict_files
from llmjury.running.cache import SampleStore
from llmjury.session.projectini import ProjectFamilies
from llmjury.step_outcome import USAGE_ERROR
from llmjury.store.location import KINDS, StoreLocation
from llmjury.store.postgres import DSN_VARIABLE


def source_summaries(verdict_files: Sequence[Path]) -> list[RunSummary]:
    """The `summary.json` beside each verdicts file re-aggregated (one per run: `runfiles.verdict_files`),
    where there is one: it says what loading kept and left out, and which families the run defined, which
    verdicts cannot say. One that is not a run summary is a ConfigError naming it."""
    summaries = []
    for verdicts in verdict_files:
        file = verdicts.parent / "summary.json"
        if file.is_file():
            summaries.append(read_summary(file.read_text(encoding="utf-8"), str(file)))
    return summaries


@held_off()
def report(args: argparse.Namespace) -> int:
    """Saved verdicts re-aggregated into a new report, a family at a time (`llmjury.reporting.by_family`).
    The families are the installed ones plus those the project's ini registers (`llm_families`), as in
    a run: a family a run defined that this folder does not know is refused, not counted bare."""
    from llmjury.reporting.by_family import write_by_family
    from llmjury.session.projectini import project_families

    try:
        project = project_families(Path.cwd())
        gates = [Gate.parse(text) for text in args.gate]
        check_metrics(gates, project.families, baseline=False, baseline_hint=COMPARE_COMMAND)
        files = verdict_files(args.verdicts)
        summaries = source_summaries(files)  # before any verdict is read: a summary says what they are
        loading = merge(LoadReport.model_validate(r) for summary in summaries for r in summary.loading)
        defined = {name for summary in summaries for name, section in summary.families.items() if section.figures}
        run = {"id": args.run_id or fresh_id(args.out, "reaggregated"),
               "reaggregated_from": [str(p) for p in args.verdicts], "judge": "recorded", "cache_mode": "none",
               "seed": None, "workers": 0, "llmjury_version": version("llmjury")}
        with spilled(files) as spill:
            check_known(spill.families, gates, project, "report", set(spill.families) - defined)
            summary, results, run_dir = write_by_family(args.out, spill, run, project.families, gates,
                                                        uncertain=args.gate_uncertain, prices=PriceTable.load(),
                                                        loading=loading,
                                                        usage=aggregate.added_usage([s.usage for s in summaries]))
    except ConfigError as exc:
        print(f"llmjury report: {exc}", file=sys.stderr)
        return USAGE_ERROR
    print("\n".join(terminal_lines(summary, results, run_dir, project.families)))
    return gate_exit_status(results)


def fresh_id(out: Path, what: str) -> str:
    """A new run id under `out`: the time to the second and `what`, with `-2`, `-3`... when a report
    made in the same second took it."""
    stem = time.strftime("%Y%m%d-%H%M%S") + f"-{what}"
    taken = {path.name for path in out.glob(stem + "*")} if out.is_dir() else set()
    return next(name for name in (stem, *(f"{stem}-{n}" for n in range(2, len(taken) + 3))) if name not in taken)


@contextlib.contextmanager
def spilled(paths: Sequence[Path]) -> Iterator[VerdictSpill]:
    """The verdicts of `paths` spilled a family to a file, in a temporary folder (TMPDIR) removed
    after; a file that cannot be read is a ConfigError naming the file and line."""
    with tempfile.TemporaryDirectory(prefix="llmjury-verdicts-") as folder:
        yield VerdictSpill(paths, Path(folder))


@held_off()
def replay(args: argparse.Namespace) -> int:
    """Recorded verdicts (a family's own file formats) into a full report folder, with no model call."""
    from pytest import ExitCode

    from llmjury.errors import LLMJuryError
    from llmjury.hints import did_you_mean
    from llmjury.running.settings import OptionLine, parse_assignments

    families = discover()
    try:
        if args.family not in families:
            raise ConfigError(f"unknown family {args.family!r}{did_you_mean(args.family, families)}; "
                              f"known families: {', '.join(families)}")
        family = families[args.family]
        given = parse_assignments(args.option, "--option", "pairs_name=my_set")
        lines = [OptionLine(key, value, "--option", f"{key}={value}") for key, value in given.items()]
        options = family.parse_options(lines)
        gates = [Gate.parse(text) for text in args.gate]
        check_metrics(gates, families, baseline=False, baseline_hint=COMPARE_COMMAND)
        replayed = family.replay(args.path, options)
    except LLMJuryError as exc:
        print(f"llmjury replay: {exc}", file=sys.stderr)
        return int(ExitCode.USAGE_ERROR)  # as the plugin's start-up checks: a usage error
    records = [v.record() for v in replayed.verdicts]
    run = {"id": args.name or f"{time.strftime('%Y%m%d-%H%M%S')}-replay-{args.path.stem}",
           "replayed_from": str(args.path), "judge": "recorded", "cache_mode": "none", "seed": None, "workers": 0}
    loading = [report.model_copy(update={"given": True}) for report in replayed.loading]  # the user's file
    typed = aggregate.typed_verdicts(records, families)
    summary = aggregate.summarize(records, run, {}, PriceTable.load(), families, loading, typed)
    results = [gate.check(summary, uncertain=args.gate_uncertain) for gate in gates]
    run_dir = write_run(args.out, summary, records, results, families, typed)
    print("\n".join(terminal_lines(summary, results, run_dir, families)))
    return gate_exit_status(results)


@held_off()
def compare(args: argparse.Namespace) -> int:
    """Two saved runs compared on their shared cases: the current run's report with a `comparison`
    section, its delta gates checked, no model call. The families are the installed ones plus those
    the project's ini registers (`llm_families`), as in a run."""
    from pytest import ExitCode

    from llmjury.reporting.compare_terminal import comparison_lines
    from llmjury.results.comparability import shown_path
    from llmjury.results.compare import compare_runs
    from llmjury.running.settings import confidence_level, share_of
    from llmjury.saved import load_run
    from llmjury.session.projectini import project_families

    try:
        confidence = confidence_level(args.confidence, "--confidence")
        max_changed = share_of(args.max_changed, "--max-changed")
        project = project_families(Path.cwd())
        families = project.families
        current, baseline = load_run(args.current, "CURRENT"), load_run(args.baseline, "BASELINE")
        gates = [Gate.parse(text) for text in args.gate]
        check_metrics(gates, families, baseline=True)
        check_known({r["family"] for r in current.records}, gates, project)
    except ConfigError as exc:
        print(f"llmjury compare: {exc}", file=sys.stderr)
        return int(ExitCode.USAGE_ERROR)
    run = {"id": f"{time.strftime('%Y%m%d-%H%M%S')}-compared", "compared_from": shown_path(args.current),
           "judge": "recorded", "cache_mode": "none", "seed": args.seed, "workers": 0}
    if current.summary is not None:  # the run's own figures, not a second aggregation of the same verdicts
        own = current.summary
        summary = own.model_copy(update={"gates": [], "comparison": None,
                                         "run": RunInfo.model_validate({**own.run.model_dump(), **run})})
    else:
        summary = aggregate.summarize(current.records, run, {}, PriceTable.load(), families)
    comparison = compare_runs(current.records, baseline, families, allow_judge_change=args.allow_judge_change,
                              current_summary=summary, confidence=confidence, max_changed=max_changed)
    summary = summary.model_copy(update={"comparison": comparison})
    results = [gate.check(summary, uncertain=args.gate_uncertain) for gate in gates]
    run_dir = write_run(args.out, summary, current.records, results, families)
    print("\n".join(terminal_lines(summary, results, run_dir, families) + comparison_lines(comparison)))
    return gate_exit_status(results)


def check_known(recorded: Collection[str], gates: Sequence[Gate], project: ProjectFamilies,
                command: str = "compare", undefined: Iterable[str] = ()) -> None:
    """Every family of the run's verdicts (`recorded`) and of the gates is known, else a ConfigError naming it:
    unknown, it would be left out of the comparison and its gates would fail as "no metric".
    `undefined` names families the runs themselves judged with no definition (the core's counts only)."""
    from llmjury.judgement.verdicts import CUSTOM
    from llmjury.results.gates import RUN_SECTIONS

    wanted = set(recorded) | {f for gate in gates for f in gate.families if f not in RUN_SECTIONS}
    unknown = sorted(wanted - project.families.keys() - set(undefined))
    if unknown:
        where = f"the llm_families lines of {project.inifile}" if project.inifile else "no pytest ini file found here"
        present = (project.families.keys() | set(undefined) | set(recorded)) - set(unknown)
        hint = did_you_mean(unknown[0], present) if len(unknown) == 1 else ""
        own = (f"; a gate on the family your own cases name reads {CUSTOM}, where their tests' verdicts are"
               if CUSTOM in recorded and not set(unknown) & set(recorded) else "")
        raise ConfigError(f"unknown famil{'y' if len(unknown) == 1 else 'ies'} {', '.join(map(repr, unknown))}{hint}: "
                          f"neither installed (entry point llmjury.families) nor registered ({where}); run "
                          f"llmjury {command} from the project's folder, or register it as module:attribute in "
                          f"the ini's llm_families{own}")


@held_off()
def merge_shards(args: argparse.Namespace) -> int:
    """The shards of one suite (`--llm-shard I/N` runs) into one report, as one run of the whole
    suite would give, its gates checked; a set that is not one whole suite is refused, naming the shard."""
    from pytest import ExitCode

    from llmjury.reporting.by_family import write_by_family
    from llmjury.results import shard_merge
    from llmjury.session.projectini import project_families

    try:
        project = project_families(Path.cwd())
        gates = [Gate.parse(text) for text in args.gate]
        check_metrics(gates, project.families, baseline=False, baseline_hint=COMPARE_COMMAND)
        shards = shard_merge.check_shards([shard_merge.read_shard(path) for path in args.shards])
    except ConfigError as exc:
        print(f"llmjury merge: {exc}", file=sys.stderr)
        return int(ExitCode.USAGE_ERROR)
    families = project.families
    run = shard_merge.merged_run(shards, args.run_id or fresh_id(args.out, "merged"))
    # In shard order: a case's verdicts all come from one shard, in the order its run kept them.
    judged = [shard.folder for shard in shards if shard.summary is not None]
    try:
        with spilled(judged) as spill:
            check_known(spill.families, gates, project, "merge", shard_merge.undefined_families(shards))
            summary, results, run_dir = write_by_family(
                args.out, spill, run, families, gates, uncertain=args.gate_uncertain, prices=PriceTable.load(),
                loading=shard_merge.merged_loading(shards),
                usage=aggregate.added_usage([shard.manifest.usage for shard in shards]))
    except ConfigError as exc:
        print(f"llmjury merge: {exc}", file=sys.stderr)
        return int(ExitCode.USAGE_ERROR)
    print(f"merged {len(shards)} shards: {len(spill)} verdicts")
    print("\n".join(terminal_lines(summary, results, run_dir, families)))
    return gate_exit_status(results)


def workflow(args: argparse.Namespace) -> int:
    """Write the pull-request workflow into a repository."""
    from llmjury.scaffold import write_workflow

    try:
        for gate in args.gate:
            Gate.parse(gate)  # a gate that cannot be read stops here, not in the first pull request
        written = write_workflow(args.root, force=args.force, gates=args.gate)
    except (FileExistsError, ConfigError) as exc:
        raise SystemExit(f"llmjury workflow: {exc}") from None
    for path in written:
        print(f"wrote {path}")
    return 0


def export(args: argparse.Namespace) -> int:
    store = SampleStore(StoreLocation.parse(args.store, args.cache, "--store"))
    try:
        count = store.export(args.to, run_id=args.run_id)
    finally:
        store.close()
    print(f"wrote {count} entries to {args.to}")
    return 0


def add_family_commands(commands: argparse._SubParsersAction[Parser]) -> None:
    """The subcommands the project's families contribute (`Family.commands`), beside the core's.
    Families that cannot be loaded leave the rest working: a warning says why theirs are missing."""
    from llmjury.session.projectini import project_families

    try:
        families = project_families(Path.cwd()).families
    except ConfigError as exc:
        print(f"llmjury: family commands unavailable: {exc}", file=sys.stderr)
        return
    for family in families.values():
        for command in family.commands():
            if not isinstance(command, Command):
                raise SystemExit(f"llmjury: family {family.name!r}: commands() gave {command!r}, "
                                 "not a llmjury.family.Command")
            if command.name in commands.choices:
                raise SystemExit(f"llmjury: family {family.name!r}: its command {command.name!r} is already "
                                 "a llmjury command; give it another name")
            sub = commands.add_parser(command.name, help=f"{family.name}: {command.help}")
            command.arguments(sub)
            sub.set_defaults(handler=command.run)


#: What `--gate-uncertain` does, for every command that checks gates.
GATE_UNCERTAIN_HELP = ("an inconclusive gate (its interval straddles the threshold): keep it inconclusive (exit 11), "
                       "or pass it on its point estimate")


def add_gates(command: argparse.ArgumentParser, example: str) -> None:
    """`--gate` (repeated) and `--gate-uncertain`, alike on every command that checks gates."""
    command.add_argument("--gate", action="append", default=[], metavar="EXPR", help=example)
    command.add_argument("--gate-uncertain", choices=["inconclusive", "pass"], default="inconclusive",
                         help=GATE_UNCERTAIN_HELP)


def main(argv: Sequence[str] | None = None) -> int:
    parser = Parser(prog="llmjury")
    parser.add_argument("--version", action="version", version=f"llmjury {version('llmjury')}")
    commands = parser.add_subparsers(dest="command", required=True)
    rep = commands.add_parser("report", help="re-aggregate saved verdicts into a new report (no model calls)")
    rep.add_argument("verdicts", nargs="+", type=Path, help="verdicts.jsonl(.gz) files or run folders")
    rep.add_argument("--out", type=Path, default=Path("reports"), help="where the report is written (default: reports)")
    rep.add_argument("--run-id", help="the report's name (its folder under --out); default: the time and -reaggregated")
    add_gates(rep, "e.g. 'socratic.win_rate>=0.55'")
    rep.set_defaults(handler=report)
    rpl = commands.add_parser("replay", help="recorded verdict files of a family into a report (no model calls)")
    rpl.add_argument("family", help="the family whose file formats PATH is in, e.g. arena")
    rpl.add_argument("path", type=Path, help="the recorded verdicts file")
    rpl.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                     help="a family option, as --llm-option FAMILY.KEY=VALUE without the family")
    rpl.add_argument("--name", help="the report's name (its folder under --out); default: time and file stem")
    rpl.add_argument("--out", type=Path, default=Path("reports"), help="where the report is written (default: reports)")
    add_gates(rpl, "e.g. 'arena.unscored_rate<=0.02'")
    rpl.set_defaults(handler=replay)
    cmp = commands.add_parser("compare", help="compare two saved runs on their shared cases (no model calls)")
    cmp.add_argument("current", type=Path, help="the run to judge: its folder or verdicts.jsonl")
    cmp.add_argument("baseline", type=Path, help="the run to compare it with: its folder or verdicts.jsonl")
    add_gates(cmp, "e.g. 'socratic.win_rate.delta>=-0.02' or 'socratic.win_rate.delta.low>=-0.05'")
    cmp.add_argument("--out", type=Path, default=Path("reports"), help="where the compared report is written")
    cmp.add_argument("--seed", type=int, default=0,
                     help="recorded in the report; the comparison's intervals are closed-form and use no seed")
    cmp.add_argument("--confidence", default="0.95", metavar="LEVEL",
                     help="two-sided level of the delta intervals, strictly between 0.5 and 1 (default 0.95); "
                          "give the level the run used (--llm-compare-confidence) to get its figures")
    cmp.add_argument("--max-changed", default="0.1", metavar="SHARE",
                     help="the share of the baseline's cases CURRENT may drop or change before its delta gates are "
                          "inconclusive (default 0.1; the run's --llm-compare-max-changed)")
    cmp.add_argument("--allow-judge-change", action="store_true",
                     help="compare even when the runs' judges differ (provider, model, prompt, parser, temperature)")
    cmp.set_defaults(handler=compare)
    mrg = commands.add_parser("merge", help="the run folders of a suite's shards (--llm-shard) into one report "
                                            "(no model calls)")
    mrg.add_argument("shards", nargs="+", type=Path, metavar="SHARD_DIR",
                     help="each shard's run folder (holding shard.json), or a reports folder holding one run")
    mrg.add_argument("--out", type=Path, default=Path("reports"), help="where the merged report is written")
    mrg.add_argument("--run-id", help="the merged report's name (its folder under --out); default: time and -merged")
    add_gates(mrg, "e.g. 'socratic.win_rate>=0.55'")
    mrg.set_defaults(handler=merge_shards)
    exp = commands.add_parser("export", help="write cached responses as a JSONL recording shard")
    exp.add_argument("--cache", type=Path, default=Path(".llmjury/cache.sqlite"), help="the SQLite store's file")
    exp.add_argument("--store", choices=KINDS, default="sqlite",
                     help=f"postgres: the store at {DSN_VARIABLE} (or libpq's PG* variables)")
    exp.add_argument("--to", type=Path, required=True, help="the JSONL recording shard to write")
    exp.add_argument("--run-id", help="only entries written by this run")
    exp.set_defaults(handler=export)
    add_batch_commands(commands)
    wfl = commands.add_parser("workflow", help="write the pull-request workflow (GitHub Actions) into a repository")
    wfl.add_argument("--root", type=Path, default=Path("."), help="the repository's top folder (default: here)")
    wfl.add_argument("--force", action="store_true", help="overwrite files that exist")
    wfl.add_argument("--gate", action="append", default=[], metavar="GATE",
                     help="a delta gate the workflow applies to pull requests (repeatable); none: no gate yet")
    wfl.set_defaults(handler=workflow)
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] not in commands.choices:  # a family's command, or help: the core's start without them
        add_family_commands(commands)
    for sub in commands.choices.values():
        sub.set_defaults(command_parser=sub)
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler  # every subcommand sets one (set_defaults)
    try:
        return handler(args)
    except CommandLineError as exc:
        command_parser: argparse.ArgumentParser = args.command_parser
        command_parser.error(str(exc))  # its usage, then the error; exit 2


if __name__ == "__main__":
    sys.exit(main())
