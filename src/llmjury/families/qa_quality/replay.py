"""Seed 001's section 9 files back into verdicts, for `llmjury replay qa_quality PATH`: a graded
corpus (`<course>.json`: metadata and the kept `qa_pairs`, each with its `quality_score`) and the
pairs graded `remove` (`<course>_removed.json`, as this family writes them) re-aggregated into a
report with no model call. PATH is one such file or a folder of them (a run's `qa_quality/`).

Grades are recomputed from the scores by section 4, as a live run does; the file's
`overall_quality` (or `judge_overall_quality`, where it disagreed) is kept as the judge's grade.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from llmjury.cases import slug
from llmjury.datasets.files import read_json
from llmjury.errors import DatasetError, validation_cause
from llmjury.families.qa_quality.cases import FAMILY
from llmjury.families.qa_quality.evaluation import (
    DIMENSIONS,
    QualityEvaluation,
    extract_for_evaluation,
    grade,
    token_saving,
)
from llmjury.families.qa_quality.options import QAOptions
from llmjury.families.qa_quality.pipeline import PARSER_VERSION
from llmjury.families.qa_quality.results import GradeResult, Scores
from llmjury.judgement.verdicts import JudgeConfig, Verdict

REMOVED = "_removed"


def replay(path: Path, options: QAOptions) -> list[Verdict]:
    """Every pair of the section 9 files at `path` as a `grade` verdict of dataset `pairs_name` (or the stem)."""
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    if not files:
        raise DatasetError(str(path), None, "no section 9 JSON files (<course>.json, <course>_removed.json)")
    dataset = slug(options.pairs_name or path.stem)
    documents = {file: read_json(file) for file in files}
    graded = {file: doc for file, doc in documents.items() if isinstance(doc, dict)}
    removed = {file: doc for file, doc in documents.items() if isinstance(doc, list)}
    if len(graded) + len(removed) < len(documents):
        odd = next(file for file in documents if file not in graded and file not in removed)
        raise DatasetError(str(odd), None, "neither a graded course (an object with qa_pairs) nor a list of "
                                           "removed pairs")
    models: dict[str, str] = {}
    verdicts: list[Verdict] = []
    for file, doc in graded.items():
        course = str(doc.get("course") or file.stem)
        metadata = doc.get("metadata") or {}
        models[course] = str(metadata.get("evaluation_model") or "unknown")
        pairs = doc.get("qa_pairs")
        if not isinstance(pairs, list):
            raise DatasetError(str(file), None, "no 'qa_pairs' list")
        expected = int((metadata.get("quality_stats") or {}).get("removed") or 0)
        listed = sum(len(d) for f, d in removed.items() if f.stem.removesuffix(REMOVED) == file.stem)
        if expected > listed:
            raise DatasetError(str(file), None, f"its metadata counts {expected} removed pairs but "
                                                f"{file.stem}{REMOVED}.json beside it lists {listed}: without them "
                                                "the remove rate would read too low; put that file beside it")
        verdicts += [verdict(file, n, pair, course, dataset, models[course]) for n, pair in enumerate(pairs)]
    for file, pairs in removed.items():
        course = file.stem.removesuffix(REMOVED)
        verdicts += [verdict(file, n, pair, course, dataset, models.get(course, "unknown"))
                     for n, pair in enumerate(pairs)]
    ids = [v.case_id for v in verdicts]
    if len(set(ids)) < len(ids):
        twice = next(i for i in ids if ids.count(i) > 1)
        raise DatasetError(str(path), None, f"pair {twice!r} is graded twice; replay one run's files")
    return verdicts


def verdict(file: Path, number: int, pair: Any, course: str, dataset: str, model: str) -> Verdict:
    """One scored pair as the verdict a live run would have recorded."""
    try:
        quality = pair["quality_score"]
        scores = Scores(**{d: quality[d]["score"] for d in DIMENSIONS})
        judge_grade = quality.get("judge_overall_quality", quality["overall_quality"])
        evaluation = QualityEvaluation(**{d: quality[d] for d in DIMENSIONS}, overall_quality=judge_grade,
                                       improvement_suggestion=quality.get("improvement_suggestion"))
        thread = {k: v for k, v in pair.items() if k != "quality_score"}
        evaluation_input = extract_for_evaluation(thread, file.name)
    except (KeyError, TypeError) as exc:
        raise DatasetError(str(file), number, f"not a scored Q&A pair (no {exc} field)") from None
    except ValidationError as exc:
        raise DatasetError(str(file), number, validation_cause(exc)) from None
    values = [getattr(scores, d) for d in DIMENSIONS]
    computed = grade(values)
    result = GradeResult(scores=scores, grade=computed, judge_grade=judge_grade,
                         grade_disagrees=computed != judge_grade, avg_score=round(sum(values) / len(values), 3),
                         evaluation=evaluation)
    raw_tokens, input_tokens = token_saving(thread, evaluation_input)
    generation = str(thread.get("generation", ""))
    case_id = f"qa-{slug(course)}-g{slug(generation)}-{slug(evaluation_input.original_id)}"
    return Verdict(case_id=case_id, family=FAMILY, kind="grade", result=result,
                   judge=JudgeConfig(provider=f"recorded:{model}", parser=PARSER_VERSION, scoring="rubric"),
                   attributes={"dataset": dataset, "course": course, "generation": generation,
                               "date": str(thread.get("date", "")), "source_file": file.name,
                               "original_id": evaluation_input.original_id, "raw_tokens_est": raw_tokens,
                               "input_tokens_est": input_tokens, "pair": thread, "human_label": None})
