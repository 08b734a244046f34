"""Whether two runs can be compared at all: the judge configurations that must agree, and the
comparison section of a run that could not be compared (no baseline found, or judges that differ),
which says why and where its baseline came from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from llmjury.saved import SavedRun

#: The judge configuration fields that make two runs' verdicts incomparable when they differ.
JUDGE_FIELDS = ("provider", "model", "prompt", "parser", "temperature", "criteria")


def judge_differences(current: Sequence[dict[str, Any]], baseline: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The judge configuration fields whose values differ between the runs, per family, on the
    verdicts of the cases both runs share."""
    def values(records: Sequence[dict[str, Any]], family: str, field: str) -> set[str]:
        return {_judge_field(r["judge"], field) for r in records if r["family"] == family}

    def recorded(records: Sequence[dict[str, Any]], family: str, field: str) -> bool:
        """Did the run record this field (an older llmjury's run has no `criteria`)?"""
        return field in ("provider", "model") or any(field in r["judge"] for r in records if r["family"] == family)

    differences = []
    for family in sorted({r["family"] for r in current} & {r["family"] for r in baseline}):
        for field in JUDGE_FIELDS:
            if not (recorded(current, family, field) and recorded(baseline, family, field)):
                continue
            now, before = values(current, family, field), values(baseline, family, field)
            if now != before:
                differences.append({"family": family, "field": field, "current": ", ".join(sorted(now)),
                                    "baseline": ", ".join(sorted(before))})
    return differences


def _judge_field(judge: Mapping[str, Any], field: str) -> str:
    provider, _, model = str(judge.get("provider", "")).partition(":")
    if field == "provider":
        return provider
    if field == "model":
        return model
    value = judge.get(field)
    return "" if value is None else str(value)


def not_compared(baseline: SavedRun, reason: str, message: str, confidence: float) -> dict[str, Any]:
    """The comparison section of a run that could not be compared: why (`not_compared`, one of
    `llmjury.baseline_lookup.Reason`) and in words, so a delta gate says so instead of passing."""
    return {"baseline": shown_path(baseline.path), "confidence": confidence, "judges_differ": [],
            "compared": False, "not_compared": reason, "why_not": message, "families": {}} | origin(baseline)


def origin(baseline: SavedRun) -> dict[str, Any]:
    """Where the baseline came from (commit, run, age), when the workflow's lookup says."""
    lookup = baseline.lookup
    return {"origin": lookup.origin()} if lookup is not None and lookup.origin() else {}


def shown_path(path: Path) -> str:
    """A baseline's path as reports show it: as the user gave it, relative to the working directory
    when it lies below it, else only its folder's name (never a runner's absolute path)."""
    if not path.is_absolute():
        return path.as_posix()
    try:
        return path.relative_to(Path.cwd()).as_posix() or "."
    except ValueError:
        return path.name
