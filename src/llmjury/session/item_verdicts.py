"""A test's verdicts, kept in its item's stash until its teardown report carries them.

One place for the stash key and the case a test was parametrized with, so the fixtures, the planner's
test bodies, own-eval outcomes and budget refusals all record the same way.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from llmjury.cases import PIPELINE_MARK, Case
from llmjury.judgement.bound_jury import BoundJury
from llmjury.judgement.jury import Jury
from llmjury.judgement.verdicts import Verdict

VERDICTS = pytest.StashKey[list[dict[str, Any]]]()
#: The teardown report's attribute that carries its test's records (their key in the serialized report too).
REPORT_KEY = "llmjury_verdicts"


def record_on(item: pytest.Item, verdict: Verdict) -> None:
    """Keep `verdict` as a plain record on `item`, for its teardown report."""
    item.stash.setdefault(VERDICTS, []).append(verdict.record())


def carry(report: pytest.TestReport, records: list[dict[str, Any]]) -> None:
    """Put a test's records on its teardown report, which takes them to the process that reports."""
    setattr(report, REPORT_KEY, records)


def carried(report: pytest.TestReport) -> list[dict[str, Any]]:
    """The records a report carries: none but on a teardown report of a test that recorded some."""
    records: list[dict[str, Any]] = getattr(report, REPORT_KEY, None) or []
    return records


def recorded(item: pytest.Item) -> list[dict[str, Any]]:
    """The records kept on `item` so far."""
    kept: list[dict[str, Any]] = item.stash.get(VERDICTS, [])
    return list(kept)


def taken(item: pytest.Item) -> list[dict[str, Any]]:
    """The records kept on `item`, taken out of its stash: its teardown report carries them from
    now on (pytest keeps every item to the session end; a rerun records afresh)."""
    kept: list[dict[str, Any]] = item.stash.get(VERDICTS, [])
    if VERDICTS in item.stash:
        del item.stash[VERDICTS]
    return kept


def case_of(item: pytest.Item) -> Case | None:
    """The case `item` was parametrized with by `llmjury.parametrize`, if any."""
    case = getattr(getattr(item, "callspec", None), "params", {}).get("case")
    return case if isinstance(case, Case) else None


def own_test(item: pytest.Item) -> bool:
    """A case test of the user's own (no family pipeline decides its verdicts)."""
    return item.get_closest_marker(PIPELINE_MARK) is None


def bound_jury(jury: Jury, item: pytest.Item) -> BoundJury:
    """The run's jury recording onto `item`: verdicts go to its stash, hence its teardown report."""
    case = case_of(item)
    return BoundJury(jury, partial(record_on, item), case_id=case.id if case is not None else item.nodeid,
                     name=getattr(item, "originalname", item.name), test=item.nodeid)
