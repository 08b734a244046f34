"""Assertion helpers for eval tests; pytest rewrites this module so failures read well."""

from __future__ import annotations

from typing import Any

from llmjury.judgement.bound_jury import Judgement
from llmjury.judgement.jury import Outcome


def assert_scored(*judged: Outcome | Judgement[Any]) -> None:
    """Every verdict of the outcomes and judgements was scored; otherwise say which and why."""
    verdicts = [v for item in judged for v in (item.verdicts if isinstance(item, Outcome) else [item.verdict])]
    unscored = [v for v in verdicts if not v.valid]
    detail = "; ".join(f"{v.case_id} ({v.kind or v.family}): {v.error}" for v in unscored)
    assert not unscored, f"{len(unscored)} unscored verdict(s): {detail}"
