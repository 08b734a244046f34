"""A test the budget stopped is unscored with the cause `budget`, not a failure or an error; so is a
test whose call waits in a provider's batch this run does not wait for (cause `batch pending`).

Once the run's budget is spent a paid call is refused: `jury.ask` (and a pipeline that does not
catch it) raises `BudgetExhaustedError`, since there is no answer to go on with, and a judge call
returns an unscored judgement whose error is the refusal, which the test's assertion then trips
on. Either way the test could not judge what it was written to judge. Its failure (in setup,
where the `outcome` fixture runs a pipeline, or in the call) is reported as a skip naming the
refusal, and the test carries an unscored verdict with the cause `budget`: the refused judge
call's own, or one recorded here when the refusal came before any judge call. So pytest's counts,
the family's `unscored_causes` and the budget's note agree.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import pytest

from llmjury.cases import Case
from llmjury.judgement.planner import is_jury_test
from llmjury.judgement.verdicts import CUSTOM, JudgeConfig, Verdict
from llmjury.running.batch_lane import PENDING_CAUSE, pending_in_batch
from llmjury.running.budget import BUDGET_MARK, refused_by_budget, refused_provider

Records = list[dict[str, Any]]


def refusal_of(error: BaseException | None, recorded: Records) -> str | None:
    """The budget's refusal behind a test's failure, or None: the exception itself or one it
    came from, a failure handed on from the worker that ran the test's body (its text), or an
    unscored verdict the test recorded before it failed."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if _stopped(str(error)):
            return _refusal(str(error))
        error = error.__cause__ or error.__context__
    return next((_refusal(str(r["error"])) for r in recorded if refused(r)), None)


def refused(record: dict[str, Any]) -> bool:
    """An unscored verdict record whose call the budget refused, or that waits in a batch."""
    return not record.get("valid", True) and _stopped(record.get("error"))


def _stopped(text: str | None) -> bool:
    return refused_by_budget(text) or pending_in_batch(text)


def _refusal(text: str) -> str:
    """The refusal's own line, from its mark on (without what a family or pytest put before it)."""
    line = next(line for line in text.splitlines() if _stopped(line))
    mark = BUDGET_MARK if refused_by_budget(line) else f"{PENDING_CAUSE}: "
    return line[line.index(mark):].strip()


class UnansweredSkips:
    """Registered in every process of a run with a budget or a batch lane (xdist's workers make the
    reports). `recorded` reads the verdicts on a test item, `record` adds one."""

    def __init__(self, recorded: Callable[[pytest.Item], Records], record: Callable[[pytest.Item, Verdict], None]
                 ) -> None:
        self.recorded, self.record = recorded, record

    # trylast: the innermost wrapper, so the others (llmjury.session.item_outcomes) see a skip, not a failed item.
    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]
                                  ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """A test the budget stopped, or whose call waits in a batch, is reported skipped, with an
        unscored verdict, not failed."""
        report = yield
        if report.when in ("setup", "call") and report.failed:
            recorded = self.recorded(item)
            refusal = refusal_of(call.excinfo.value if call.excinfo else None, recorded)
            if refusal is not None:
                if not any(refused(r) for r in recorded):
                    self.record(item, unscored_verdict(item, refusal))
                line = item.location[1]
                report.outcome = "skipped"
                report.longrepr = (str(item.path), (line or 0) + 1, f"Skipped: {refusal}")
        return report


def unscored_verdict(item: pytest.Item, refusal: str) -> Verdict:
    """The verdict a test stopped before any judge call carries: its own evals' family (`custom`),
    or its case's family for a pipeline; no kind, since no judgement was made."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    case = params.get("case")
    case = case if isinstance(case, Case) else None
    family = CUSTOM if is_jury_test(item) or case is None else case.family
    return Verdict(case_id=case.id if case is not None else item.nodeid, family=family,
                   judge=JudgeConfig(provider=refused_provider(refusal) or "unknown"), valid=False, error=refusal,
                   attributes={"name": getattr(item, "originalname", item.name), "test": item.nodeid})
