"""A run's reports built a family at a time from verdicts spilled to disk (`llmjury merge` of a suite's
shards, `llmjury report`): one family's records and typed verdicts are held at once, aggregated,
tabled, filed and shown, then let go. Its memory is the largest family's, not the suite's; the files
are those `write_run` writes from verdicts held in memory (the same figures, tables and pages)."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from llmjury.family import AnyFamily
from llmjury.loading import LoadReport
from llmjury.model import FamilySummary, GateResult, RunSummary, Usage
from llmjury.pricing import PriceTable
from llmjury.reporting import report_cases
from llmjury.reporting.reports import family_files, finish_run, page, run_folder_of, write_summary, write_table
from llmjury.results.aggregate import core_section, run_summary, section_of
from llmjury.results.gates import Gate
from llmjury.results.verdict_spill import VerdictSpill
from llmjury.runfiles import VERDICTS


def write_by_family(directory: Path, spill: VerdictSpill, run: dict[str, Any], families: Mapping[str, AnyFamily],
                    gates: Sequence[Gate], *, uncertain: Literal["pass", "inconclusive"], prices: PriceTable,
                    loading: Sequence[LoadReport] = (), usage: Usage | None = None,
                    root: Path | None = None) -> tuple[RunSummary, list[GateResult], Path]:
    """Write `directory/<run id>/` from the spilled verdicts, its gates checked; returns the summary
    (with `usage` when given: a merge's is the shards' own), the gates' results and the run folder."""
    new = not (directory / run["id"]).exists()
    run_dir = run_folder_of(directory, run["id"])
    try:
        root = root or Path.cwd()
        spill.write(run_dir / VERDICTS)
        sections: dict[str, FamilySummary] = {}
        files: dict[str, str] = {}
        shown = []
        for name in spill.families:
            sections[name], own, cases = _family(run_dir, spill, name, families.get(name), loading, root)
            files |= own
            shown.append(cases)
        summary = run_summary(sections, run, {}, prices, loading)
        if usage is not None:
            summary = summary.model_copy(update={"usage": usage})
        results = [gate.check(summary, uncertain=uncertain) for gate in gates]
        written = write_summary(run_dir, summary, results, root)
        finish_run(directory, run_dir, written, results, families, files, latest=len(spill) > 0,
                   page=lambda: page(written, results, families, root=root, shown=shown))
    except BaseException:
        if new:  # a report that could not be finished leaves no folder to mistake for one
            shutil.rmtree(run_dir, ignore_errors=True)
        raise
    return summary, results, run_dir


def _family(run_dir: Path, spill: VerdictSpill, name: str, family: AnyFamily | None, loading: Sequence[LoadReport],
            root: Path) -> tuple[FamilySummary, dict[str, str], report_cases.FamilyCases]:
    """One family's table, shown cases, core counts, then its section and files: its records are
    let go as they are typed (the typed verdicts share their texts), its verdicts on return, before
    the next family's are read."""
    records = spill.records(name)
    write_table(run_dir, name, records)
    shown = report_cases.family_cases(name, report_cases.group(records), {}, {}, False, root)
    core = core_section(sorted(records, key=lambda r: r["case_id"]))
    if family is None:
        return section_of(name, core, None, loading, ()), {}, shown
    typed = spill.typed(family, records)  # in the records' order, which family files keep; records emptied
    section = section_of(name, core, family, loading, typed)
    return section, family_files(section, family, typed, root), shown
