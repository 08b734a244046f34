"""Grading one Q&A pair: the seed's evaluation input, the rubric judge with structured output
(validated by pydantic, invalid output asked again), and the grade from the section 4 rules."""

from __future__ import annotations

from typing import Any

from llmjury.families.qa_quality.cases import FAMILY, CourseRules, QACase
from llmjury.families.qa_quality.evaluation import (
    DIMENSIONS,
    QualityEvaluation,
    extract_for_evaluation,
    grade,
    token_saving,
)
from llmjury.families.qa_quality.options import QAOptions
from llmjury.families.qa_quality.results import GradeResult, LabelledGrade, RulesResult, Scores
from llmjury.judgement.judges import structured
from llmjury.judgement.jury import Jury, Outcome
from llmjury.judgement.verdicts import JudgeConfig, Verdict

PARSER_VERSION = "qa-quality-evaluation/2"


def options(jury: Jury) -> QAOptions:
    return jury.options(FAMILY, QAOptions)


async def grade_pair(case: QACase, jury: Jury) -> Outcome:
    """Grade one pair; a labelled pair's verdict (kind `human_label`) carries the person's label too."""
    opts = options(jury)
    evaluation_input = extract_for_evaluation(case.pair, case.source_file)
    raw_tokens, input_tokens = token_saving(case.pair, evaluation_input)
    attributes: dict[str, Any] = {"dataset": case.dataset, "course": case.course, "generation": case.generation,
                                  "date": case.date, "source_file": case.source_file,
                                  "original_id": evaluation_input.original_id, "raw_tokens_est": raw_tokens,
                                  "input_tokens_est": input_tokens, "pair": case.pair, "human_label": case.label}
    prompt = jury.render("qa_quality/judge.j2", qa=evaluation_input.to_prompt_format())
    runs = await structured(jury, FAMILY, prompt, QualityEvaluation, retries=opts.max_retries - 1,
                            parser=PARSER_VERSION)
    (answer,) = runs.answers
    config = JudgeConfig(provider=runs.provider, prompt=prompt.task, parser=PARSER_VERSION, scoring="rubric",
                         **runs.sampling)
    kind = "grade" if case.label is None else "human_label"
    common: dict[str, Any] = dict(case_id=case.id, family=FAMILY, kind=kind, judge=config, attributes=attributes,
                                  **runs.verdict_fields(jury))
    if not answer.scored:
        return Outcome([Verdict(valid=False, error=answer.error, cause=answer.cause, **common)])
    evaluation = answer.parsed
    if not isinstance(evaluation, QualityEvaluation):  # structured() validates every scored answer as one
        raise TypeError(f"{case.id}: a scored answer read as {type(evaluation).__name__}, not QualityEvaluation")
    scores = Scores(**{d: getattr(evaluation, d).score for d in DIMENSIONS})
    values = [getattr(scores, d) for d in DIMENSIONS]
    computed = grade(values)
    fields: dict[str, Any] = dict(scores=scores, grade=computed, judge_grade=evaluation.overall_quality,
                                  grade_disagrees=computed != evaluation.overall_quality,
                                  avg_score=round(sum(values) / len(values), 3), evaluation=evaluation,
                                  attempts=answer.attempts)
    result = GradeResult(**fields) if case.label is None else LabelledGrade(**fields, label=case.label)
    # `on_remove` rides along so the eval test fails or xfails a removed pair as the run asked.
    return Outcome([Verdict(result=result, **common)],
                   details={"input": evaluation_input.to_prompt_format(), "on_remove": opts.on_remove})


async def course_rules(case: CourseRules, jury: Jury) -> Outcome:
    """No model call: the course's filter counts, as a verdict so they reach the report."""
    result = RulesResult(removed=case.removed, removed_answers=case.removed_answers, kept=case.kept)
    verdict = Verdict(case_id=case.id, family=FAMILY, kind="rules", result=result,
                      judge=JudgeConfig(provider="rules:seed-001-filters"),
                      attributes={"dataset": case.dataset, "course": case.course})
    return Outcome([verdict])
