"""The fixtures a test of llmjury asks for: `jury`, `case`, `record_verdict` and `outcome`.

Registered as a plugin module by llmjury.plugin; the planner knows `case` and `jury` by this module's
name (llmjury.judgement.planner.FIXTURES_MODULE), as fixtures it can supply itself when it runs a test ahead.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from llmjury.cases import PIPELINE_MARK, Case
from llmjury.judgement.bound_jury import BoundJury
from llmjury.judgement.jury import Outcome
from llmjury.judgement.verdicts import Verdict
from llmjury.session.item_verdicts import bound_jury, record_on
from llmjury.session.runner import runner_of


@pytest.fixture
def jury(request: pytest.FixtureRequest) -> BoundJury:
    """Providers by role, prompts and cached calls, plus judge calls (`compare`, `score`, `geval`,
    `ask`) that record their verdicts on this test."""
    return bound_jury(runner_of(request.config).jury, request.node)


@pytest.fixture
def case(request: pytest.FixtureRequest) -> Case:
    """The case a test was parametrized with by `llmjury.parametrize`."""
    given: Case = request.param
    return given


@pytest.fixture
def record_verdict(request: pytest.FixtureRequest) -> Callable[[Verdict], None]:
    """Attach a verdict to this test's report, to be merged and aggregated at session end."""

    def record(verdict: Verdict) -> None:
        record_on(request.node, verdict)

    return record


@pytest.fixture
def outcome(request: pytest.FixtureRequest, case: Case) -> Outcome:
    """The outcome of this test's pipeline on its `case`, with its verdicts already recorded (on the
    test's node directly: a `record_verdict` fixture more would cost every test pytest's set-up of one)."""
    marker = request.node.get_closest_marker(PIPELINE_MARK)
    if marker is None:
        raise pytest.UsageError(
            f"{request.node.nodeid}: the `outcome` fixture needs @llmjury.pipeline(...) and a `case` "
            "parameter from llmjury.parametrize(...)")
    result = runner_of(request.config).planner.outcome(marker.args[0], case)
    for verdict in result.verdicts:
        record_on(request.node, verdict)
    return result
