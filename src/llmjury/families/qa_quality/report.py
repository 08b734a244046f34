"""Q&A grading aggregates: grades per course, average scores, what the rules and the judge
removed, and seed 001's section 9 files (scored pairs; removed pairs listed separately)."""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from typing import Any

import numpy as np

from llmjury.families.qa_quality.evaluation import DIMENSIONS
from llmjury.families.qa_quality.semeval import agreement_with_labels
from llmjury.stats import metric, proportion

GRADES = ("high", "medium", "low", "remove")
HIDDEN_FROM_TABLES = ("courses", "grade_by_label")


def is_rules(record: dict[str, Any]) -> bool:
    return record["attributes"].get("kind") == "rules"


def mean_metric(values: list[float]) -> dict[str, Any]:
    """A mean with a t interval."""
    if not values:
        return metric(None, None, None, 0, "mean, t interval")
    arr = np.asarray(values, dtype=float)
    if len(arr) < 2 or arr.std() == 0:
        return metric(arr.mean(), arr.mean(), arr.mean(), len(arr), "mean, t interval")
    from scipy import stats

    low, high = stats.t.interval(0.95, len(arr) - 1, loc=arr.mean(), scale=stats.sem(arr))
    return metric(arr.mean(), low, high, len(arr), "mean, t interval")


def summarize_pairs(graded: list[dict[str, Any]]) -> dict[str, Any]:
    grades = Counter(r["result"]["grade"] for r in graded)
    n = len(graded)
    return {
        "grades": {g: grades[g] for g in GRADES},
        "remove_rate": proportion(grades["remove"], n),
        "judge_grade_disagreement_rate": proportion(sum(r["result"]["grade_disagrees"] for r in graded), n),
        "avg_scores": {d: mean_metric([r["result"]["scores"][d] for r in graded]) for d in DIMENSIONS},
    }


def aggregate(records: list[dict[str, Any]]) -> dict[str, Any]:
    labelled = [r for r in records if r["attributes"].get("human_label")]
    records = [r for r in records if not r["attributes"].get("human_label")]
    section = corpus_section(records)
    if labelled:
        section["judge_validity"] = agreement_with_labels(labelled)
    return section


def corpus_section(records: list[dict[str, Any]]) -> dict[str, Any]:
    rules = [r for r in records if is_rules(r)]
    graded = [r for r in records if not is_rules(r) and r["valid"]]
    if not graded and not rules:
        return {}
    raw = sum(r["attributes"]["raw_tokens_est"] for r in records if not is_rules(r))
    compact = sum(r["attributes"]["input_tokens_est"] for r in records if not is_rules(r))
    removed_by_rule: Counter[str] = Counter()
    removed_answers: Counter[str] = Counter()
    for r in rules:
        removed_by_rule.update(r["result"]["removed"])
        removed_answers.update(r["result"]["removed_answers"])
    by_course: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in graded:
        by_course[r["attributes"]["course"]].append(r)
    return {
        **summarize_pairs(graded),
        "rules": {"threads_removed": dict(removed_by_rule), "answers_removed": dict(removed_answers)},
        "token_saving": {"raw_json_tokens_est": raw, "evaluation_input_tokens_est": compact,
                         "saving": round(1 - compact / raw, 3) if raw else None},
        "courses": {course: summarize_pairs(rs) for course, rs in sorted(by_course.items())},
    }


def markdown(section: dict[str, Any]) -> str:
    if "grades" not in section:
        return ""
    g = section["grades"]
    lines = ["| grade | pairs |", "|---|---|"] + [f"| {k} | {g[k]} |" for k in GRADES]
    rules = section["rules"]
    threads = ", ".join(f"{k} {v}" for k, v in rules["threads_removed"].items()) or "none"
    answers = ", ".join(f"{k} {v}" for k, v in rules["answers_removed"].items()) or "none"
    lines += ["", f"Removed before judging: threads {threads}; answers {answers}."]
    saving = section["token_saving"]
    if saving["saving"] is not None:
        lines.append(f"Evaluation input vs raw export: about {saving['evaluation_input_tokens_est']} vs "
                     f"{saving['raw_json_tokens_est']} tokens ({saving['saving']:.0%} saved).")
    return "\n".join(lines)


def files(section: dict[str, Any], records: list[dict[str, Any]]) -> dict[str, str]:
    """Per course, seed 001's section 9 JSON of kept pairs, and the pairs graded `remove`."""
    out: dict[str, str] = {}
    graded = [r for r in records if not is_rules(r) and r["valid"] and not r["attributes"].get("human_label")]
    by_course: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in graded:
        by_course[r["attributes"]["course"]].append(r)
    for course, rs in sorted(by_course.items()):
        kept = [r for r in rs if r["result"]["grade"] != "remove"]
        removed = [r for r in rs if r["result"]["grade"] == "remove"]
        grades = Counter(r["result"]["grade"] for r in rs)
        document = {
            "course": course,
            "metadata": {
                "total_qa_pairs": len(kept),
                "quality_filtered": True,
                "evaluation_model": rs[0]["judge"]["provider"].partition(":")[2] or rs[0]["judge"]["provider"],
                "evaluation_date": time.strftime("%Y-%m-%d"),
                "quality_stats": {"high": grades["high"], "medium": grades["medium"], "low": grades["low"],
                                  "removed": grades["remove"]},
                "avg_scores": {d: round(float(np.mean([r["result"]["scores"][d] for r in rs])), 2)
                               for d in DIMENSIONS},
            },
            "qa_pairs": [_scored(r) for r in kept],
        }
        out[f"qa_quality/{course}.json"] = json.dumps(document, ensure_ascii=False, indent=2)
        out[f"qa_quality/{course}_removed.json"] = json.dumps([_scored(r) for r in removed], ensure_ascii=False,
                                                              indent=2)
    return out


def _scored(record: dict[str, Any]) -> dict[str, Any]:
    evaluation = record["result"]["evaluation"]
    quality = {d: evaluation[d] for d in DIMENSIONS}
    quality |= {"overall_quality": record["result"]["grade"], "avg_score": record["result"]["avg_score"]}
    if record["result"]["grade_disagrees"]:
        quality["judge_overall_quality"] = record["result"]["judge_grade"]
    if evaluation.get("improvement_suggestion"):
        quality["improvement_suggestion"] = evaluation["improvement_suggestion"]
    return {**record["attributes"]["pair"], "quality_score": quality}
