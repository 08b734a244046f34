"""llmjury: judge LLM systems with LLMs, as pytest tests."""

from __future__ import annotations

import pytest

from llmjury.cases import PIPELINE_MARK, Case, parametrize
from llmjury.judgement.bound_jury import BoundJury, Comparison, GEvalScore, Score
from llmjury.judgement.judges import RubricScore
from llmjury.judgement.jury import Jury, Outcome
from llmjury.judgement.verdicts import JudgeConfig, Verdict
from llmjury.loading import LoadCounter, LoadReport
from llmjury.session.case_sets import case_set, parsed_options

__all__ = ["BoundJury", "Case", "Comparison", "GEvalScore", "JudgeConfig", "Jury", "LoadCounter", "LoadReport",
           "Outcome", "RubricScore", "Score", "Verdict", "case_set", "parametrize", "parsed_options", "pipeline"]


def pipeline(fn: object) -> pytest.MarkDecorator:
    """Mark a test with the coroutine `async def fn(case, jury) -> Outcome` that judges its case.

    The plugin runs these concurrently for all selected cases before tests start; the test's
    `outcome` fixture then returns the result.
    """
    mark: pytest.MarkDecorator = getattr(pytest.mark, PIPELINE_MARK)
    return mark.with_args(fn)
