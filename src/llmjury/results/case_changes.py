"""Which cases a comparison really compares: the cases a pull request added, dropped, or changed
under the same id (their content fingerprint differs), and whether so many of the baseline's cases
went that a delta on what is left says nothing about the system.

A pull request that drops 66 of 72 cases, or rewords them under the same ids, would otherwise pass
its delta gates on the few cases left (or on cases that are no longer the same question). Changed
cases leave the paired comparison; when dropped and changed cases together exceed `max_changed`
of the baseline's cases (`--llm-compare-max-changed`, 0.1 by default), a delta gate on the family
is inconclusive, never a pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: The share of the baseline's cases a pull request may drop or change before its delta gates are
#: inconclusive (`--llm-compare-max-changed`, ini `llm_compare_max_changed`).
MAX_CHANGED = 0.1
#: Case ids listed per kind of change (the counts cover all).
LISTED = 50
#: The family comparison's key for its case changes.
KEY = "case_changes"


@dataclass(frozen=True)
class CaseChanges:
    """The case ids only this run has, only the baseline has, and both have with other content."""

    added: list[str]
    dropped: list[str]
    changed: list[str]
    baseline_cases: int

    @property
    def share(self) -> float:
        """The share of the baseline's cases this run dropped or changed."""
        return (len(self.dropped) + len(self.changed)) / self.baseline_cases if self.baseline_cases else 0.0

    def section(self, max_changed: float) -> dict[str, Any]:
        """As the comparison holds it: counts, the share, the limit, whether it is exceeded, and the ids."""
        return {"added": len(self.added), "dropped": len(self.dropped), "changed": len(self.changed),
                "baseline_cases": self.baseline_cases, "share": self.share, "max_changed": max_changed,
                "exceeds": self.share > max_changed,
                "ids": {"added": self.added[:LISTED], "dropped": self.dropped[:LISTED],
                        "changed": self.changed[:LISTED]}}


def _fingerprints(records: Sequence[dict[str, Any]]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for record in records:
        marks = found.setdefault(str(record["case_id"]), set())
        if record.get("case_fingerprint"):
            marks.add(str(record["case_fingerprint"]))
    return found


def case_changes(current: Sequence[dict[str, Any]], baseline: Sequence[dict[str, Any]]) -> CaseChanges:
    """One family's case changes between two runs' records; a case recorded without a fingerprint
    (an older run) counts as unchanged, its content unknown."""
    now, before = _fingerprints(current), _fingerprints(baseline)
    changed = sorted(case for case in now.keys() & before.keys() if now[case] and before[case]
                     and now[case] != before[case])
    return CaseChanges(sorted(now.keys() - before.keys()), sorted(before.keys() - now.keys()), changed, len(before))


def exceeded(family_comparison: dict[str, Any]) -> str | None:
    """Why a delta gate on this family cannot pass (too many of the baseline's cases dropped or
    changed), or None."""
    changes = family_comparison.get(KEY)
    if not isinstance(changes, dict) or not changes.get("exceeds"):
        return None
    return (f"this run dropped {changes['dropped']} and changed {changes['changed']} of the baseline's "
            f"{changes['baseline_cases']} cases ({changes['share']:.0%}, more than {changes['max_changed']:.0%}): "
            "what is left is not the same test")


def case_note(family: str, family_comparison: dict[str, Any]) -> str | None:
    """A family's case changes in one line for the reports, or None when the cases are the baseline's."""
    changes = family_comparison.get(KEY)
    if not isinstance(changes, dict) or not (changes["added"] or changes["dropped"] or changes["changed"]):
        return None
    ids = changes.get("ids", {})

    def some(kind: str) -> str:
        """The first few ids of one kind of change, and how many more."""
        shown = (ids.get(kind) or [])[:5]
        rest = changes[kind] - len(shown)
        return (": " + ", ".join(shown) + (f" and {rest} more" if rest > 0 else "")) if shown else ""

    verdict = (f"; {changes['share']:.0%} of the baseline's cases dropped or changed, more than "
               f"{changes['max_changed']:.0%}: its delta gates are inconclusive" if changes["exceeds"] else "")
    return (f"{family}: {changes['added']} cases added{some('added')}; {changes['dropped']} dropped{some('dropped')}; "
            f"{changes['changed']} changed under the same id{some('changed')}{verdict}")
