"""llmjury: judge LLM systems with LLMs, as pytest tests.

The names below are imported when first used (PEP 562), so `import llmjury.stats` (or cases, or
judges) loads that module and what it needs, not pytest, the engine and the session.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest

    from llmjury.cases import Case, parametrize
    from llmjury.judgement.bound_jury import BoundJury, Comparison, GEvalScore, Score
    from llmjury.judgement.judges import RubricScore
    from llmjury.judgement.jury import Jury, Outcome
    from llmjury.judgement.verdicts import JudgeConfig, Verdict
    from llmjury.loading import LoadCounter, LoadReport
    from llmjury.session.case_sets import case_set, parsed_options

__all__ = ["BoundJury", "Case", "Comparison", "GEvalScore", "JudgeConfig", "Jury", "LoadCounter", "LoadReport",
           "Outcome", "RubricScore", "Score", "Verdict", "case_set", "parametrize", "parsed_options", "pipeline"]

#: Where each public name lives, imported on first use.
_HOMES = {
    "Case": "llmjury.cases", "parametrize": "llmjury.cases",
    "BoundJury": "llmjury.judgement.bound_jury", "Comparison": "llmjury.judgement.bound_jury",
    "GEvalScore": "llmjury.judgement.bound_jury", "Score": "llmjury.judgement.bound_jury",
    "RubricScore": "llmjury.judgement.judges",
    "Jury": "llmjury.judgement.jury", "Outcome": "llmjury.judgement.jury",
    "JudgeConfig": "llmjury.judgement.verdicts", "Verdict": "llmjury.judgement.verdicts",
    "LoadCounter": "llmjury.loading", "LoadReport": "llmjury.loading",
    "case_set": "llmjury.session.case_sets", "parsed_options": "llmjury.session.case_sets",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'llmjury' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])


def pipeline(fn: object) -> pytest.MarkDecorator:
    """Mark a test with the coroutine `async def fn(case, jury) -> Outcome` that judges its case.

    The plugin runs these concurrently for all selected cases before tests start; the test's
    `outcome` fixture then returns the result.
    """
    import pytest

    from llmjury.cases import PIPELINE_MARK

    mark: pytest.MarkDecorator = getattr(pytest.mark, PIPELINE_MARK)
    return mark.with_args(fn)
