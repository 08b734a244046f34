"""Writing a run's reports. `summary.json` (a `RunSummary`) is the single source: Markdown, HTML, CSV
and the terminal table are rendered from it (and from the saved verdicts), never from live state. Every report leads
with the Decision block (`llmjury.results.decision`); the long reference and replay tables follow, folded."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llmjury.family import AnyFamily
from llmjury.loading import LoadReport
from llmjury.model import FamilySummary, GateResult, RunSummary
from llmjury.portable import portable, shown
from llmjury.reporting.offline_banner import offline_banner, offline_roles
from llmjury.results.decision import (
    Decision,
    Flips,
    decision_of,
    hidden_keys,
    metric_rows,
    metric_text,
    sig3,
    signed,
)
from llmjury.results.drift import drift_lines
from llmjury.results.sequential_gates import sequential_lines
from llmjury.runfiles import VERDICTS, link_identical, place, point_latest, write_gzip, write_text
from llmjury.tables import csv_chunks

if TYPE_CHECKING:
    from llmjury.judgement.verdicts import Verdict
    from llmjury.reporting.report_cases import FamilyCases

#: Flipped cases `summary.md` lists per family; report.html lists every one the comparison kept.
FLIPS_IN_MARKDOWN = 10

def write_run(directory: Path, summary: RunSummary, records: list[dict[str, Any]],
              gates: list[GateResult], families: Mapping[str, AnyFamily],
              typed: Mapping[str, Sequence[Verdict]] | None = None, *,
              baseline: Sequence[dict[str, Any]] | None = None, root: Path | None = None) -> Path:
    """Write `directory/<run-id>/` and point `directory/latest` at it when the run recorded a verdict
    (a run that failed before any verdict leaves the last good `latest` alone); returns the run folder.

    `baseline` (the compared run's verdict records) feeds report.html's per-case view; paths the
    reports show are relative to `root` (the project; the working directory when not given)."""
    root = root or Path.cwd()
    run_dir = run_folder_of(directory, summary.run.id)
    written = write_summary(run_dir, summary, gates, root)  # first: a stop during the rest keeps the figures
    encode = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps' bytes, without a new encoder per record
    write_gzip(run_dir / VERDICTS, (encode(r) + "\n" for r in records))
    files: dict[str, str] = {}
    for name in summary.run.families:
        family_records = [r for r in records if r["family"] == name]
        write_table(run_dir, name, family_records)
        family = families.get(name)
        if family is not None:
            verdicts = typed[name] if typed is not None else [family.typed(r) for r in family_records]
            files |= family_files(written.families[name], family, verdicts, root)
    finish_run(directory, run_dir, written, gates, families, files, latest=bool(records),
               page=lambda: page(written, gates, families, records, baseline, root))
    return run_dir


def run_folder_of(directory: Path, run_id: str) -> Path:
    """The run's folder under the reports folder, made."""
    run_dir = directory / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    return run_dir


def write_table(run_dir: Path, name: str, records: list[dict[str, Any]]) -> None:
    """A family's verdict table, `<name>.csv.gz`, a row per record in the run's order."""
    write_gzip(run_dir / f"{name}.csv.gz", verdict_table(records))


def family_files(summary: FamilySummary, family: AnyFamily, typed: Sequence[Verdict], root: Path) -> dict[str, str]:
    """The family's files of its own (`Family.files`: name -> content) from its section and its typed
    verdicts in the run's order, the paths in its figures shown from `root` as in every report."""
    return family.files(family.section.model_validate(portable(summary.figures, root)), list(typed))


def write_summary(run_dir: Path, summary: RunSummary, gates: list[GateResult], root: Path) -> RunSummary:
    """`summary.json`, with its gates and its paths shown from `root`; returns the summary as written,
    which every other report of the run is rendered from."""
    written = summary.model_copy(update={"gates": list(gates)}).portable(root)
    write_text(run_dir / "summary.json", written.model_dump_json(indent=2))
    return written


def finish_run(directory: Path, run_dir: Path, written: RunSummary, gates: list[GateResult],
               families: Mapping[str, AnyFamily], files: dict[str, str], *, latest: bool,
               page: Callable[[], str]) -> None:
    """The run's files after its summary, verdicts and tables: the families' own files, `summary.md`
    and report.html (`page()`), then `latest` when the run recorded a verdict."""
    links = link_identical(files)
    for filename, content in files.items():
        if filename not in links:
            write_text(run_dir / filename, content)
    for filename, same_as in links.items():
        place(run_dir, filename, same_as)
    write_text(run_dir / "summary.md", markdown(written, gates, families))
    write_text(run_dir / "report.html", page())
    if latest:
        point_latest(directory, run_dir)


def page(summary: RunSummary, gates: list[GateResult], families: Mapping[str, AnyFamily],
         records: Sequence[Mapping[str, Any]] = (), baseline: Sequence[Mapping[str, Any]] | None = None,
         root: Path | None = None, *, shown: Sequence[FamilyCases] | None = None) -> str:
    """report.html, its module (and matplotlib's) imported only when a report is written."""
    from llmjury.reporting import report_html

    return report_html.page(summary, gates, families, records, baseline, root, shown=shown)


def verdict_table(records: list[dict[str, Any]]) -> Iterator[str]:
    """One CSV row per verdict, nested fields flattened (`result.winner`, `judge.provider`, ...):
    the bytes `pandas.json_normalize(records, sep=".").to_csv(index=False)` gives (a record's own
    fields first, then its nested ones), without pandas' import and per-record flattening; in
    parts, each row flattened as it is written."""
    return csv_chunks(lambda: map(_flat, records))


def _flat(record: dict[str, Any]) -> dict[str, Any]:
    """A record's own fields (but `raw`), then `raw` joined, then its nested fields, in one pass."""
    row: dict[str, Any] = {}
    nested = []
    for key, value in record.items():
        if isinstance(value, dict):
            nested.append((key, value))
        elif key != "raw":
            row[key] = value
    row["raw"] = " ||| ".join(record.get("raw", []))
    for key, value in nested:
        _flatten(f"{key}.", value, row)
    return row


def _flatten(prefix: str, node: dict[str, Any], row: dict[str, Any]) -> None:
    for key, value in node.items():
        if isinstance(value, dict):
            _flatten(f"{prefix}{key}.", value, row)
        else:
            row[prefix + key] = value


def incomplete_banner(decision: Decision) -> str:
    return (f"> **Incomplete run: {decision.stopped or 'stopped early'}.** The figures and gates cover only "
            "the cases that finished (`summary.json` says `\"complete\": false`).")


def decision_markdown(decision: Decision) -> list[str]:
    """The Decision block: gates and why, then each family's headline metrics."""
    lines = ["## Decision", ""]
    if decision.gates:
        lines += ["| status | gate | value | interval | threshold | decided by | why |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| **{g.status.upper()}** | `{g.gate}` | {g.value} | {g.interval} | {g.threshold} | "
                  f"{g.decided_by} | {g.why} |" for g in decision.gates]
    else:
        lines.append("No gate was set (`--llm-gate`, ini `llm_gates`): nothing here decided the exit code.")
    lines.append("")
    if decision.baseline:
        note = f"; {decision.baseline_note}" if decision.baseline_note else ""
        lines += [f"Baseline: `{decision.baseline}`{note}", ""]
        lines += [f"- Cases, {_cell(line)}" for line in decision.case_notes] + ([""] if decision.case_notes else [])
    change = bool(decision.baseline)
    lines += ["| family | headline metric | value [95% CI] | n |"
              + (f" {decision.change_label} vs baseline |" if change else ""),
              "|---|---|---|---|" + ("---|" if change else "")]
    for family in decision.families:
        for row in family.rows:
            cell = (row.change.text() if row.change is not None else "not compared") if change else None
            lines.append(f"| {family.family} | `{family.family}.{row.path}` | {row.value} | {row.metric['n']} |"
                         + (f" {cell} |" if cell is not None else ""))
        if family.more_headline:
            lines.append(f"| {family.family} | *{family.more_headline} more headline rows in its details below* "
                         "| | |" + (" |" if change else ""))
        if not family.rows:
            lines.append(f"| {family.family} | *no headline metric: {family.counts}* | | |" + (" |" if change else ""))
    lines.append("")
    return lines


def flips_markdown(flips: list[Flips], cap: int = FLIPS_IN_MARKDOWN) -> list[str]:
    """The cases that moved between the baseline and this run, the worse direction first, `cap` per
    family; nothing when the comparison listed none."""
    lines: list[str] = []
    for family in flips:
        if not family.cases:
            continue
        lines += [f"### Cases that flipped: {family.family} ({family.total}; right to wrong first, partial moves "
                  "such as judge noise after)", "",
                  "| case | metric | baseline | this run | change | answer in the baseline | answer in this run "
                  "| the judge, this run |", "|---|---|---|---|---|---|---|---|"]
        lines += [f"| `{_cell(c.case_id)}` | `{_cell(c.metric)}` | {_figure(c.baseline)} | {_figure(c.current)} | "
                  f"{signed(c.change)}{' (worse)' if c.worse else ''}{'' if c.decisive else ' (partial)'} | "
                  f"{_cell(c.baseline_answer or '')} | {_cell(c.current_answer or '')} | "
                  f"{_cell(c.current_reason or '')} |" for c in family.cases[:cap]]
        shown_here = min(cap, len(family.cases))
        if family.total > shown_here:
            lines.append(f"\n{shown_here} of {family.total} shown; report.html lists {len(family.cases)}.")
        lines.append("")
    return lines


def _figure(x: Any) -> str:
    return sig3(x) if isinstance(x, int | float) and not isinstance(x, bool) else _cell(str(x))


def _cell(text: str) -> str:
    """Text safe in a Markdown table cell: no pipe, no line break, no backtick to close the code span."""
    return text.replace("|", "\\|").replace("`", "'").replace("\n", " ")


def decisions_read_line(read: dict[str, int]) -> str:
    """How the family's judge runs were read: a schema's field (a verdict's decision, a structured
    answer), or the text's decision line."""
    return "decisions read: " + ", ".join(f"{count} {READ_AS.get(how, how)}" for how, count in read.items())


READ_AS = {"schema": "from a schema's field", "text": "from the text's decision line"}


def markdown(summary: RunSummary, gates: list[GateResult], families: Mapping[str, AnyFamily]) -> str:
    """`summary.md`: the decision first, as a pull-request comment should read; tables folded below."""
    run = summary.run
    decision = decision_of(summary, gates, families)
    lines = [f"# llmjury run `{run.id}`", ""]
    if not decision.complete:
        lines += [incomplete_banner(decision), ""]
    if run.offline:
        lines += [offline_banner(summary), ""]
    if played := offline_roles(summary):
        lines += [f"> **{played[0].upper()}{played[1:]}.**", ""]
    if summary.budget is not None and summary.budget.stopped:  # the cases it left unscored change every figure
        lines += [f"> **{summary.budget.note}**", ""]
    lines += decision_markdown(decision)
    lines += flips_markdown(decision.flips)
    lines += [f"- judge: `{run.judge}`; cache: `{run.cache_mode}`; seed: {run.seed}; workers: {run.workers}", ""]
    decided = [*sequential_lines(summary.sequential), *drift_lines(summary.judge)]  # --llm-sequential, the canary
    lines += [*(f"- {line}" for line in decided), *([""] if decided else [])]
    for provider, learned in run.adaptations.items():
        lines.append(f"- `{provider}` adapted to its server: " + "; ".join(f"{k}: {v}" for k, v in learned.items()))
    if run.adaptations:
        lines.append("")
    if run.families:
        lines += ["## Details", "", "Each family's reference and replay tables, and every metric with its gate path.",
                  ""]
    for name in run.families:
        section = summary.families[name]
        counts = next(f.counts for f in decision.families if f.family == name)
        judges = ", ".join(f"`{j}`" for j in section.judges)
        lines += ["<details>", f"<summary><b>{name}</b>: {counts}</summary>", "", f"judge: {judges}", ""]
        if section.decisions_read:
            lines += [decisions_read_line(section.decisions_read), ""]
        lines += [f"- data: {LoadReport.model_validate(r).line()}" for r in section.loading]
        if section.loading:
            lines.append("")
        family = families.get(name)
        if family is not None:
            own = family.markdown(family.section.model_validate(section.figures))
            if own:
                lines += [own, ""]
        rows = metric_rows(section.tree(), hidden=hidden_keys(families, name))
        if rows:
            lines += ["| metric | value [95% CI] | n | method |", "|---|---|---|---|"]
            lines += [f"| `{name}.{path}` | {metric_text(m)} | {m['n']} | {m['method']} |" for path, m in rows]
            lines.append("")
        lines += ["</details>", ""]
    usage = summary.usage
    if usage.providers:
        lines += ["## Usage", "", "| provider | calls | fresh samples | cached samples | prompt tokens | "
                  "completion tokens | est. cost (USD) |", "|---|---|---|---|---|---|---|"]
        for provider, u in usage.providers.items():
            cost = u.get("cost_usd")
            lines.append(f"| `{provider}` | {_count(u, 'calls')} | {_count(u, 'fresh_samples')} | "
                         f"{_count(u, 'cached_samples')} | {_count(u, 'prompt_tokens')} | "
                         f"{_count(u, 'completion_tokens')} | {'unpriced' if cost is None else f'{cost:.4f}'} |")
        lines.append("")
        repaid = {provider: _count(u, "repaid_samples") for provider, u in usage.providers.items()}
        lines += [f"`{provider}`: {count} sample(s) paid again, taken over from a process that died holding "
                  "them (its process ended, or its lease ran out)." for provider, count in repaid.items() if count]
        if any(repaid.values()):
            lines.append("")
        batched = [(provider, u) for provider, u in usage.providers.items() if _count(u, "batch_samples")]
        lines += [f"`{provider}`: {_count(u, 'batch_samples')} sample(s) through its Batch API at the batch rate"
                  + ("" if u.get("batch_saving_usd") is None else
                     f" (est. ${u.get('batch_cost_usd') or 0:.4f}, ${u['batch_saving_usd']:.4f} less than synchronous)")
                  + "." for provider, u in batched]
        if batched:
            lines.append("")
    if usage.roles:
        lines += ["| role | provider | fresh samples | replayed samples | policy |", "|---|---|---|---|---|"]
        for role, providers in usage.roles.items():
            lines += [f"| {role} | `{provider}` | {u['fresh_samples']} | {u['replayed_samples']} | {u['policy']} |"
                      for provider, u in providers.items()]
        lines.append("")
    return "\n".join(lines)


def _count(usage: Mapping[str, float | None], key: str) -> int:
    return int(usage.get(key) or 0)


def terminal_lines(summary: RunSummary, gates: list[GateResult], run_dir: Path,
                   families: Mapping[str, AnyFamily], root: Path | None = None) -> list[str]:
    """The end-of-run summary: the same Decision block as `summary.md`, then where the rest is
    (paths relative to `root`, the working directory when not given)."""
    root = root or Path.cwd()
    decision = decision_of(summary, gates, families)
    lines: list[str] = []
    if not decision.complete:
        lines.append(f"INCOMPLETE RUN: {decision.stopped or 'stopped early'}; figures cover the finished cases only")
    if summary.run.offline:
        lines.append("offline run: numbers come from heuristics, not an LLM")
    if played := offline_roles(summary):
        lines.append(played)
    if summary.run.store is not None:
        lines += summary.run.store.lines()
    for g in decision.gates:
        interval = f" {g.interval}" if g.interval else ""
        lines.append(f"{g.status.upper():<12} {g.gate}: value {g.value}{interval} vs {g.threshold}: {g.why}")
    for flipped in decision.flips:
        if flipped.cases:
            # A case is listed once per metric whose value it changed: the count is of values, the names distinct.
            worst = ", ".join(list(dict.fromkeys(c.case_id for c in flipped.cases))[:3])
            lines.append(f"{flipped.family}: {flipped.total} case value(s) changed against the baseline "
                         f"(first: {worst})")
    if decision.baseline:
        note = f": {decision.baseline_note}" if decision.baseline_note else ""
        lines.append(f"baseline {decision.baseline}{note}")
    for family in decision.families:
        lines.append(f"{family.family}: {family.counts}")
        lines += [f"  data: {LoadReport.model_validate(r).line()}" for r in summary.families[family.family].loading
                  if r["dropped"] or r.get("given")]  # a user's own file: always said
        # The columns fit the family's longest metric name and value (an own eval's names run long).
        path_width = max([34, *(len(row.path) for row in family.rows)])
        value_width = max([24, *(len(row.value) for row in family.rows)])
        for row in family.rows:
            change = f"  change {row.change.text()}" if row.change is not None else ""
            lines.append(f"  {family.family}.{row.path:<{path_width}} {row.value:<{value_width}} "
                         f"n={row.metric['n']}{change}")
        if family.more_metrics:
            rows = "row" if family.more_metrics == 1 else "rows"
            where = shown(run_dir / "summary.md", root)
            lines.append(f"  ({family.more_metrics} more metric {rows} for {family.family} in {where})")
    lines.append(f"reports: {shown(run_dir, root)} (summary.md, report.html)")
    return portable(lines, root)  # the lines, not the whole summary: a path shows only where it is printed
