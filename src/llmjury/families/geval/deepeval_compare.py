"""deepeval's GEval on the same items and provider, so both judges can be set beside the humans.

Same criterion text (our criterion template), same evaluation steps (ours, frozen, so deepeval does
not generate its own per case), same judge provider through `JuryModel`.
"""

from __future__ import annotations

from llmjury.families.geval.cases import GEvalCase
from llmjury.families.geval.criteria import CRITERIA
from llmjury.families.geval.datasets import FAMILY
from llmjury.families.geval.options import GEvalOptions
from llmjury.families.geval.pipeline import evaluation_steps
from llmjury.families.geval.results import DeepevalResult
from llmjury.judgement.jury import Jury, Outcome


async def deepeval_geval(case: GEvalCase, jury: Jury) -> Outcome:
    # The bridge first: it switches deepeval's telemetry and file writes off before deepeval loads.
    from llmjury.judgement.deepeval_bridge import JuryModel, a_metric_verdict  # isort: skip
    from deepeval.metrics import GEval
    from deepeval.test_case import LLMTestCase, SingleTurnParams

    opts = jury.options(FAMILY, GEvalOptions)
    item, criterion = case.item, CRITERIA[case.criterion]
    steps, _ = await evaluation_steps(jury, opts, case.task, case.criterion)
    definition = jury.render(f"geval/criteria/{criterion.name}.j2", part="line", task=case.task).text
    metric = GEval(name=criterion.label, criteria=definition, evaluation_steps=[s for s in steps.split(". ") if s],
                   evaluation_params=[SingleTurnParams.INPUT, SingleTurnParams.ACTUAL_OUTPUT],
                   model=JuryModel(jury.engine, jury.spec("judge", FAMILY).provider("judge")), async_mode=True)
    history = "\n".join(f"{speaker}: {text}" for speaker, text in item.turns)
    attributes = {"dataset": item.dataset, "item": item.id, "context_id": item.context_id,
                  "system_id": item.system_id, "task": case.task, "criterion": case.criterion,
                  "human": item.human.get(case.criterion)}
    verdict = await a_metric_verdict(metric, LLMTestCase(input=history, actual_output=item.response),
                                     case_id=case.id, family=FAMILY, attributes=attributes, kind="deepeval",
                                     result=DeepevalResult)
    return Outcome([verdict])
