"""Q&A grading aggregates: grades per course and dataset, average scores, what the rules and the
judge removed, the judge against people per labelled dataset, and seed 001's section 9 files
(scored pairs; removed pairs listed separately)."""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from llmjury.families.qa_quality.agreement import agreement_with_labels
from llmjury.families.qa_quality.evaluation import DIMENSIONS, Grade
from llmjury.families.qa_quality.results import (
    DimensionMetrics,
    GradeCounts,
    GradeResult,
    LabelledGrade,
    PairFigures,
    QASection,
    RuleCounts,
    RulesResult,
    TokenSaving,
)
from llmjury.judgement.verdicts import Verdict
from llmjury.model import Metric
from llmjury.results.repairs import repairs_by_judge, with_counts
from llmjury.stats import mean_metric as stats_mean_metric
from llmjury.stats import proportion

GRADES: tuple[Grade, ...] = ("high", "medium", "low", "remove")


def mean_metric(values: list[float]) -> Metric:
    """A mean with its t interval (`llmjury.stats.mean_metric`: none from too few values)."""
    return Metric(**stats_mean_metric(values))


def summarize_pairs(graded: Sequence[GradeResult]) -> PairFigures:
    grades = Counter(g.grade for g in graded)
    n = len(graded)
    return PairFigures(
        grades=GradeCounts(**{g: grades[g] for g in GRADES}),
        remove_rate=Metric(**proportion(grades["remove"], n)),
        judge_grade_disagreement_rate=Metric(**proportion(sum(g.grade_disagrees for g in graded), n)),
        avg_scores=DimensionMetrics(**{d: mean_metric([getattr(g.scores, d) for g in graded]) for d in DIMENSIONS}),
    )


def corpus(verdicts: Sequence[Verdict]) -> list[tuple[Verdict, GradeResult]]:
    """Scored corpus pairs (kind `grade`) with their results."""
    return [(v, v.result) for v in verdicts if v.kind == "grade" and v.valid and isinstance(v.result, GradeResult)]


def aggregate(verdicts: Sequence[Verdict]) -> QASection:
    section = corpus_section(verdicts)
    labelled: dict[str, list[LabelledGrade]] = defaultdict(list)
    for v in verdicts:
        if v.kind == "human_label" and v.valid and isinstance(v.result, LabelledGrade):
            labelled[v.attributes.get("dataset", "")].append(v.result)
    validity = {name: agreement_with_labels(name, graded) for name, graded in sorted(labelled.items())}
    found = {name: figures for name, figures in validity.items() if figures is not None}
    return section.model_copy(update={"judge_validity": found or None, "repairs": repairs_by_judge(verdicts)})


def corpus_section(verdicts: Sequence[Verdict]) -> QASection:
    rules = [v.result for v in verdicts if v.kind == "rules" and isinstance(v.result, RulesResult)]
    graded = corpus(verdicts)
    if not graded and not rules:
        return QASection()
    asked = [v for v in verdicts if v.kind == "grade"]
    raw = sum(v.attributes["raw_tokens_est"] for v in asked)
    compact = sum(v.attributes["input_tokens_est"] for v in asked)
    removed_by_rule: Counter[str] = Counter()
    removed_answers: Counter[str] = Counter()
    for r in rules:
        removed_by_rule.update(r.removed)
        removed_answers.update(r.removed_answers)
    by_course: dict[str, list[GradeResult]] = defaultdict(list)
    by_dataset: dict[str, list[GradeResult]] = defaultdict(list)
    for v, g in graded:
        by_course[course_of(v)].append(g)
        by_dataset[v.attributes.get("dataset", "")].append(g)
    overall = summarize_pairs([g for _, g in graded])
    return QASection(
        remove_rate=overall.remove_rate, grades=overall.grades,
        judge_grade_disagreement_rate=overall.judge_grade_disagreement_rate, avg_scores=overall.avg_scores,
        rules=RuleCounts(threads_removed=dict(removed_by_rule), answers_removed=dict(removed_answers)),
        token_saving=TokenSaving(raw_json_tokens_est=raw, evaluation_input_tokens_est=compact,
                                 saving=round(1 - compact / raw, 3) if raw else None),
        courses={course: summarize_pairs(gs) for course, gs in sorted(by_course.items())},
        datasets={name: summarize_pairs(gs) for name, gs in sorted(by_dataset.items())},
    )


def course_of(verdict: Verdict) -> str:
    """The course a pair is filed under: its own, else its dataset's name (a pairs file without courses)."""
    for key in ("course", "dataset"):
        name = verdict.attributes.get(key)
        if isinstance(name, str) and name:
            return name
    return ""


def markdown(section: QASection) -> str:
    if section.grades is None or section.rules is None or section.token_saving is None:
        return with_counts("", section.repairs)
    g = section.grades
    lines = ["| grade | pairs |", "|---|---|"] + [f"| {k} | {getattr(g, k)} |" for k in GRADES]
    if section.datasets and len(section.datasets) > 1:
        lines += ["", "| dataset | high | medium | low | remove |", "|---|---|---|---|---|"]
        lines += [f"| {name} | " + " | ".join(str(getattr(f.grades, k)) for k in GRADES) + " |"
                  for name, f in section.datasets.items()]
    rules = section.rules
    threads = ", ".join(f"{k} {v}" for k, v in rules.threads_removed.items()) or "none"
    answers = ", ".join(f"{k} {v}" for k, v in rules.answers_removed.items()) or "none"
    lines += ["", f"Removed before judging: threads {threads}; answers {answers}."]
    saving = section.token_saving
    if saving.saving is not None:
        lines.append(f"Evaluation input vs raw export: about {saving.evaluation_input_tokens_est} vs "
                     f"{saving.raw_json_tokens_est} tokens ({saving.saving:.0%} saved).")
    return with_counts("\n".join(lines), section.repairs)


def files(section: QASection, verdicts: Sequence[Verdict]) -> dict[str, str]:
    """Per course, seed 001's section 9 JSON of kept pairs, and the pairs graded `remove`."""
    out: dict[str, str] = {}
    by_course: dict[str, list[tuple[Verdict, GradeResult]]] = defaultdict(list)
    for v, g in corpus(verdicts):
        by_course[course_of(v)].append((v, g))
    for course, pairs in sorted(by_course.items()):
        kept = [p for p in pairs if p[1].grade != "remove"]
        removed = [p for p in pairs if p[1].grade == "remove"]
        grades = Counter(g.grade for _, g in pairs)
        provider = pairs[0][0].judge.provider
        document = {
            "course": course,
            "metadata": {
                "total_qa_pairs": len(kept),
                "quality_filtered": True,
                "evaluation_model": provider.partition(":")[2] or provider,
                "evaluation_date": time.strftime("%Y-%m-%d"),
                "quality_stats": {"high": grades["high"], "medium": grades["medium"], "low": grades["low"],
                                  "removed": grades["remove"]},
                "avg_scores": {d: round(float(np.mean([getattr(g.scores, d) for _, g in pairs])), 2)
                               for d in DIMENSIONS},
            },
            "qa_pairs": [_scored(v, g) for v, g in kept],
        }
        out[f"qa_quality/{course}.json"] = json.dumps(document, ensure_ascii=False, indent=2)
        out[f"qa_quality/{course}_removed.json"] = json.dumps([_scored(v, g) for v, g in removed],
                                                              ensure_ascii=False, indent=2)
    return out


def _scored(verdict: Verdict, result: GradeResult) -> dict[str, object]:
    evaluation = result.evaluation.model_dump(mode="json")
    quality = {d: evaluation[d] for d in DIMENSIONS}
    quality |= {"overall_quality": result.grade, "avg_score": result.avg_score}
    if result.grade_disagrees:
        quality["judge_overall_quality"] = result.judge_grade
    if result.evaluation.improvement_suggestion:
        quality["improvement_suggestion"] = result.evaluation.improvement_suggestion
    return {**verdict.attributes["pair"], "quality_score": quality}
