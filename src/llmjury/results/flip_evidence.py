"""What a reviewer needs beside a flipped case: the system's answer in each run and the judge's
reason for its verdict, taken from the two runs' verdict records; and which flips matter first.

A flip of a 0/1 figure (right to wrong, a won comparison lost) is **decisive**; a move between
values in between (a 1-5 score one point off, a rate over several judge runs) is what judge noise
looks like, and is listed after every decisive flip.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

#: Verdict attributes that hold the system's answer, most telling first (`jury.score`'s answer,
#: `jury.compare`'s a, G-Eval's text, the families' replies).
ANSWER_KEYS = ("answer", "a", "text", "response", "reply", "ours")
#: One run's per-case figures of a metric: each shared case's value times its n, and its n.
PerCase = tuple[np.ndarray, np.ndarray]
#: Characters of an answer or a reason kept for a report.
SHOWN = 300


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def _answer(records: Sequence[Mapping[str, Any]]) -> str | None:
    for key in ANSWER_KEYS:
        for record in records:
            value = (record.get("attributes") or {}).get(key)
            if isinstance(value, str) and value.strip():
                return _short(value)
    return None


def _reason(records: Sequence[Mapping[str, Any]]) -> str | None:
    """The judge's words: its raw answer, or the error (a failed assertion's message, a refusal)."""
    for record in records:
        if record.get("error"):
            return _short(str(record["error"]))
        raw = [text for text in record.get("raw") or [] if isinstance(text, str) and text.strip()]
        if raw:
            return _short(raw[0])
    return None


def _of_metric(records: Sequence[Mapping[str, Any]], metric: str) -> list[Mapping[str, Any]]:
    """The records of the kind a metric is computed from (`check.test_answer.pass_rate`: check), else all."""
    kind = metric.split(".")[0]
    chosen = [r for r in records if r.get("kind") == kind]
    return chosen or list(records)


def evidence(case_id: str, metric: str, current: Sequence[Mapping[str, Any]],
             baseline: Sequence[Mapping[str, Any]]) -> dict[str, str | None]:
    """Each run's answer to the case and the judge's reason, for the changed-case list."""
    found: dict[str, str | None] = {}
    for side, records in (("current", current), ("baseline", baseline)):
        mine = [r for r in records if r.get("case_id") == case_id]
        found[f"{side}_answer"] = _answer(mine)
        found[f"{side}_reason"] = _reason(_of_metric(mine, metric))
    return found


def decisive(baseline: Any, current: Any) -> bool:
    """Is a case's change a flip between 0 and 1 (right to wrong, or back), not a partial move?"""
    return baseline in (0, 1) and current in (0, 1) and baseline != current


def changed_cases(per_case: Mapping[str, tuple[PerCase, PerCase]], shared: Sequence[str]) -> list[dict[str, Any]]:
    """The shared cases whose per-case value differs between the runs: flips between 0 and 1 first
    (right to wrong, `decisive`), then partial moves (judge noise
    looks so), each largest drop first."""
    changed = []
    for key, ((num_now, n_now), (num_before, n_before)) in per_case.items():
        both = np.flatnonzero((n_now > 0) & (n_before > 0))
        now, before = num_now[both] / n_now[both], num_before[both] / n_before[both]
        for i, a, b in zip(both, now, before, strict=True):
            if not math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12):
                changed.append({"case_id": shared[int(i)], "metric": key, "baseline": float(b), "current": float(a),
                                "change": float(a - b)})
    return sorted(changed, key=lambda c: (not decisive(c["baseline"], c["current"]), c["change"], c["case_id"],
                                          c["metric"]))
