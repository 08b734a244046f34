"""What a baseline comparison costs: CPU seconds per family to compare two saved runs, and which
interval method each family's headline metrics got.

    python bench/compare.py reports/RUN_A reports/RUN_B

Each family is compared as `--llm-baseline` does at session end (the saved summaries stand for the
shared-case figures when every case is shared). CPU time, not wall time: on a shared machine the
wall clock measures the neighbours.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from llmjury.families import discover
from llmjury.model import RunSummary
from llmjury.results.compare import compare_family, metric_rows
from llmjury.saved import load_run


def section_of(summary: RunSummary | None, name: str) -> dict[str, Any] | None:
    """A family's section as the run's summary.json holds it (a saved run's summary is a RunSummary)."""
    section = summary.families.get(name) if summary is not None else None
    return section.tree() if section is not None else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("current", type=Path)
    parser.add_argument("baseline", type=Path)
    args = parser.parse_args()
    families = discover()
    current, baseline = load_run(args.current, "current"), load_run(args.baseline, "baseline")
    total = time.process_time()
    for name in sorted({r["family"] for r in current.records} & families.keys()):
        started = time.process_time()
        rows = compare_family(families[name], [r for r in current.records if r["family"] == name],
                              [r for r in baseline.records if r["family"] == name],
                              current_section=section_of(current.summary, name),
                              baseline_section=section_of(baseline.summary, name))
        metrics = metric_rows(rows)
        methods = sorted({row["delta"]["method"].split(",")[0].split(":")[0] for row in metrics.values()})
        print(f"{name}: {len(metrics)} headline metrics, {time.process_time() - started:.1f} CPU s, {methods}")
    print(f"all families: {time.process_time() - total:.1f} CPU s")


if __name__ == "__main__":
    main()
