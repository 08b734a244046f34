"""deepeval interop, offline: our provider as its model, its metric as our judge."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pytest

from llmjury.providers.base import ProviderSpec

# deepeval is imported by the tests that use it, not when every xdist worker collects this module
# (over a second a process).
pytestmark = pytest.mark.skipif(importlib.util.find_spec("deepeval") is None, reason="deepeval is not installed")


@pytest.fixture(scope="module")
def de() -> SimpleNamespace:
    """The bridge and the deepeval names the tests use."""
    # The bridge goes first: it switches deepeval's telemetry and file writes off before deepeval loads.
    from llmjury.judgement.deepeval_bridge import JuryModel, MetricResult, metric_verdict  # noqa: I001

    from deepeval.metrics import BaseMetric, GEval
    from deepeval.test_case import LLMTestCase, SingleTurnParams
    return SimpleNamespace(JuryModel=JuryModel, MetricResult=MetricResult, metric_verdict=metric_verdict,
                           BaseMetric=BaseMetric, GEval=GEval, LLMTestCase=LLMTestCase,
                           SingleTurnParams=SingleTurnParams)


def geval(de: SimpleNamespace, model: Any) -> Any:
    return de.GEval(
        name="Helpfulness",
        evaluation_steps=["Check the answer addresses the question.", "Penalise vagueness."],
        evaluation_params=[de.SingleTurnParams.INPUT, de.SingleTurnParams.ACTUAL_OUTPUT],
        model=model, async_mode=False, threshold=0.5,
    )


def test_geval_scores_through_our_openai_provider(de, openai_server, make_engine):
    openai_server.reply = lambda body, i: json.dumps({"score": 8, "reason": "Addresses the question."})
    engine = make_engine()
    model = de.JuryModel(engine, ProviderSpec.parse(f"openai:gpt-4o-mini;base_url={openai_server.base_url}"))
    verdict = de.metric_verdict(geval(de, model), de.LLMTestCase(input="What is 2+2?", actual_output="4"),
                                case_id="q1", family="toy")
    assert verdict.valid and isinstance(verdict.result, de.MetricResult) and verdict.kind == "metric"
    assert verdict.result.score == pytest.approx(0.8)
    result = verdict.result
    assert (result.success, result.threshold, result.metric) == (True, 0.5, "Helpfulness [GEval]")
    assert verdict.raw == ["Addresses the question."]
    sent = openai_server.requests[0]
    assert sent["response_format"]["type"] == "json_schema"
    assert "What is 2+2?" in sent["messages"][0]["content"]


def test_unparseable_metric_output_becomes_an_unscored_verdict(de, openai_server, make_engine):
    openai_server.reply = lambda body, i: "no json at all"
    engine = make_engine()
    model = de.JuryModel(engine, ProviderSpec.parse(f"openai:gpt-4o-mini;base_url={openai_server.base_url}"))
    verdict = de.metric_verdict(geval(de, model), de.LLMTestCase(input="q", actual_output="a"), case_id="q1",
                                family="toy")
    assert not verdict.valid and "GEval failed" in verdict.error
    assert verdict.judge.provider.startswith("deepeval-geval:")


def test_a_family_types_the_metric_verdict_as_its_own_kind(de, openai_server, make_engine):
    from llmjury.family import Result

    class Helpful(Result):
        score: float
        success: bool
        threshold: float
        metric: str
        method: str = "deepeval"

    openai_server.reply = lambda body, i: json.dumps({"score": 3, "reason": "Vague."})
    model = de.JuryModel(make_engine(), ProviderSpec.parse(f"openai:gpt-4o-mini;base_url={openai_server.base_url}"))
    verdict = de.metric_verdict(geval(de, model), de.LLMTestCase(input="q", actual_output="a"), case_id="q1",
                                family="toy", kind="helpful", result=Helpful)
    assert verdict.kind == "helpful" and isinstance(verdict.result, Helpful)
    assert (verdict.result.success, verdict.record()["result"]["method"]) == (False, "deepeval")


def test_importing_llmjury_plugin_does_not_import_deepeval():
    code = "import sys, llmjury.plugin; print('deepeval' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_metric_without_a_threshold_becomes_an_unscored_verdict_naming_it(de):
    class NoThreshold(de.BaseMetric):  # type: ignore[misc]
        """A metric of one's own that scores but sets no threshold (deepeval's own default is None)."""

        def measure(self, test_case, *args, **kwargs):
            self.score, self.reason = 0.7, "fine"
            return self.score

        async def a_measure(self, test_case, *args, **kwargs):
            return self.measure(test_case)

        def is_successful(self):
            return False

    verdict = de.metric_verdict(NoThreshold(), de.LLMTestCase(input="q", actual_output="a"), case_id="q1",
                                family="toy")
    assert not verdict.valid and "no threshold" in verdict.error


BESIDE_DEEPEVAL = """
import llmjury
from llmjury import Case

CASES = [Case(id=f"c{i}", family="custom") for i in range(3)]


@llmjury.parametrize(CASES)
async def test_the_longer_answer_wins(case, jury):
    verdict = await jury.compare("a longer and fuller answer", "short", criteria="the fuller answer")
    assert verdict.winner is not None  # scored
"""


@pytest.mark.e2e  # a pytest process of its own, with deepeval's own plugin loaded
def test_a_run_beside_deepevals_own_pytest_plugin_judges_and_reports_as_without_it(pytester):
    """The docs advise `-p no:deepeval`; a project that leaves deepeval's plugin on still runs, judges
    and reports (the tests' inner runs leave it off, so this run is the one that has it)."""
    pytester.makepyfile(test_beside=BESIDE_DEEPEVAL)
    result = pytester.runpytest_subprocess("-p", "deepeval", "-p", "no:cacheprovider",
                                           "--llm-reports", str(pytester.path / "reports"))
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["plugins:*deepeval*"])
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    assert (summary["custom"]["cases"], summary["custom"]["unscored"]) == (3, 0)
