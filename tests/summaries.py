"""Typed run summaries from hand-written summary.json trees, for tests of the report layer."""

from __future__ import annotations

from typing import Any

from llmjury.model import RunSummary

#: The core's counts of a family section a test leaves out: an empty run's.
ZERO: dict[str, Any] = {
    "cases": 0, "verdicts": 0, "valid": 0, "unscored": 0,
    "unscored_rate": {"value": None, "low": None, "high": None, "n": 0, "method": "wilson"},
    "unscored_reasons": {}, "judges": [], "unscored_by_judge": {}, "unscored_cases": [], "judge_config": [],
    "offline": False,
}


def summary_of(tree: dict[str, Any]) -> RunSummary:
    """The summary a tree in summary.json's shape stands for: its top-level keys that are not the
    summary's own fields are family sections (zero counts where a test gives none), named in
    `run.families` unless the tree names them."""
    own = RunSummary.model_fields.keys() | RunSummary.model_computed_fields.keys()
    names = [key for key in tree if key not in own]
    run = {"id": "test-run", "families": names, **tree.get("run", {})}
    return RunSummary.model_validate({**{key: tree[key] for key in tree if key not in names}, "run": run,
                                      **{name: {**ZERO, **tree[name]} for name in names}})
