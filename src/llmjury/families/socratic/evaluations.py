"""Seed 003's `--existing_files`: single-run evaluation files, read as {subset id: label or None}.

Accepted, told apart by content:

- the seed's own `judge_evaluations_*.json` (`evaluate_teacher_responses.py`):
  `{"summary": ..., "evaluations": [{"subset_id", "success", "verdict"}, ...]}`, where `verdict`
  is one of the two systems' labels (`chat`, `simple-chat`), `equivalent` or `unclear`;
- our `socratic_run_N.json`: `{"run": N, "evaluations": {subset_id: label or null}}`;
- a plain `{subset_id: label}` mapping.

`equivalent` reads as `tie`; `unclear`, null and unsuccessful items are runs that did not count.
Any other label is an error naming the file and the item, so a run with mistyped system names
does not quietly count as ties.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from llmjury.datasets.files import read_json
from llmjury.errors import DatasetError

TIE = "tie"
UNCOUNTED = ("unclear", None)


def read_run(path: Path, *, ours: str, baseline: str) -> dict[str, str | None]:
    """One run's labels by subset id, in the vocabulary `ours`, `baseline`, `tie`."""
    data = read_json(path)
    evaluations = data.get("evaluations", data) if isinstance(data, dict) else data
    if isinstance(evaluations, list):
        pairs = [_item(path, number, item) for number, item in enumerate(evaluations)]
    elif isinstance(evaluations, dict):
        pairs = [(str(subset), label) for subset, label in evaluations.items()]
    else:
        raise DatasetError(str(path), None, "expected seed 003's {'evaluations': [...]}, "
                                            "{'evaluations': {subset_id: verdict}} or {subset_id: verdict}")
    run: dict[str, str | None] = {}
    for subset, label in pairs:
        run[subset] = _label(path, subset, label, ours, baseline)
    return run


def _item(path: Path, number: int, item: Any) -> tuple[str, Any]:
    if not isinstance(item, dict) or "subset_id" not in item:
        raise DatasetError(str(path), number, "an evaluation must be an object with a 'subset_id'")
    if item.get("success") is False:
        return str(item["subset_id"]), None
    if "verdict" not in item:
        raise DatasetError(str(path), number, f"evaluation of {item['subset_id']!r} has no 'verdict'")
    return str(item["subset_id"]), item["verdict"]


def _label(path: Path, subset: str, label: Any, ours: str, baseline: str) -> str | None:
    if label in UNCOUNTED:
        return None
    if label in (ours, baseline, TIE):
        return str(label)
    if label == "equivalent":
        return TIE
    raise DatasetError(str(path), subset, f"verdict {label!r} is neither --ours {ours!r}, --baseline {baseline!r}, "
                                          "'equivalent'/'tie' nor 'unclear'; name the systems as the file does")
