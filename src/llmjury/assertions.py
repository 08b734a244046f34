"""Assertion helpers for eval tests; pytest rewrites this module so failures read well."""

from __future__ import annotations

from llmjury.jury import Outcome


def assert_scored(outcome: Outcome) -> None:
    """Every verdict of the outcome was scored; otherwise say which and why."""
    unscored = [v for v in outcome.verdicts if not v.valid]
    detail = "; ".join(f"{v.case_id}: {v.error}" for v in unscored)
    assert not unscored, f"{len(unscored)} unscored verdict(s): {detail}"
