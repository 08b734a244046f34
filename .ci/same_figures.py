"""Exit 1 unless two summary.json files hold the same figures: every family section (counts,
aggregates, intervals, load reports), the gates, and whether the run was complete.

What differs between two runs of one suite by design is left out: the `run` section (ids, times,
arguments, workers) and `usage` (cache hits depend on what ran before) and
when a family's figures were aggregated. Used by .ci/run to check that
the shards of the offline suite, merged, give the whole run's report.

    python .ci/same_figures.py WHOLE/summary.json MERGED/summary.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

#: Top-level keys that are not figures.
NOT_FIGURES = {"run", "usage"}
#: Keys inside a family's section that say when it was aggregated, not what.
TIMES = {"evaluation_completed"}


def figures(summary: dict[str, Any]) -> dict[str, Any]:
    """A summary's figures: everything but its run and usage, plus the families it judged."""
    kept = {key: value for key, value in summary.items() if key not in NOT_FIGURES}
    return {**kept, "run.families": summary["run"]["families"], "run.offline": summary["run"]["offline"]}


def differences(whole: Any, merged: Any, path: str = "") -> list[str]:
    """Every path at which the two differ, with both values."""
    if isinstance(whole, dict) and isinstance(merged, dict):
        found = []
        for key in sorted((whole.keys() | merged.keys()) - TIMES, key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in merged or key not in whole:
                found.append(f"{where}: only in {'the whole run' if key in whole else 'the merged report'}")
            else:
                found += differences(whole[key], merged[key], where)
        return found
    if isinstance(whole, list) and isinstance(merged, list) and len(whole) == len(merged):
        pairs = enumerate(zip(whole, merged, strict=True))
        return [d for i, (a, b) in pairs for d in differences(a, b, f"{path}[{i}]")]
    return [] if whole == merged else [f"{path}: {whole!r} (whole) != {merged!r} (merged)"]


def main(argv: list[str]) -> int:
    whole, merged = (json.loads(Path(name).read_text(encoding="utf-8")) for name in argv)
    found = differences(figures(whole), figures(merged))
    for line in found[:30]:
        print(line)
    if found:
        print(f"{len(found)} difference(s) between {argv[0]} and {argv[1]}")
        return 1
    families = len(whole["run"]["families"])
    print(f"same figures: {families} families, {len(whole.get('gates', []))} gates ({argv[0]} = {argv[1]})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
