"""SemEval-2016 Task 3 subtask A: community answers with human Good / PotentiallyUseful / Bad labels,
graded by the same rubric judge so its grades and scores can be checked against people.

Each comment becomes a one-answer Q&A pair (subject and body as the question). Reported: the rank
correlation of the judge's average score with the label (Bad 0 < PotentiallyUseful 1 < Good 2),
the confusion of grades against labels, and how well `remove` finds Bad answers (precision,
recall).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from llmjury.cases import slug
from llmjury.datasets.files import read_jsonl
from llmjury.errors import DatasetError
from llmjury.families.qa_quality.cases import QACase
from llmjury.stats import metric, proportion

SHIPPED = Path(__file__).resolve().parents[4] / "fixtures" / "semeval_cqa" / "sample.jsonl"
LABEL_RANK = {"Bad": 0, "PotentiallyUseful": 1, "Good": 2}


class LabelledQACase(QACase):
    label: str

    def marks(self) -> list[str]:
        return ["qa_quality", "semeval"]


def semeval_cases(path: Path | None = None) -> list[LabelledQACase]:
    source = path or SHIPPED
    cases = []
    for number, row in read_jsonl(source):
        try:
            question = f"{row['question_subject']}\n{row['question_body']}".strip()
            pair = {"question": {"text": question, "timestamp": row["comment_id"]},
                    "answers": [{"text": row["comment_text"]}]}
            label = row["label"]
        except (KeyError, TypeError) as exc:
            raise DatasetError(str(source), number, f"not a SemEval question-comment pair ({exc})") from exc
        if label not in LABEL_RANK:
            raise DatasetError(str(source), number, f"unknown label {label!r}")
        cases.append(LabelledQACase(id=f"semeval-{slug(row['comment_id'])}", course="semeval2016",
                                    source_file=source.name, generation="", date="", pair=pair, label=label))
    return cases


def agreement_with_labels(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Rank correlation of average score with the label, grade x label counts, remove vs Bad."""
    graded = [r for r in records if r["valid"] and r["attributes"].get("human_label")]
    if not graded:
        return {}
    scores = np.array([r["result"]["avg_score"] for r in graded])
    labels = np.array([LABEL_RANK[r["attributes"]["human_label"]] for r in graded])
    rho = stats.spearmanr(scores, labels)
    tau = stats.kendalltau(scores, labels)
    rng = np.random.default_rng(0)
    draws = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a resample can be constant; its NaN is dropped below
        for _ in range(500):
            i = rng.integers(0, len(scores), len(scores))
            draws.append(stats.spearmanr(scores[i], labels[i]).statistic)
    draws = np.array(draws)[np.isfinite(draws)]
    confusion: dict[str, dict[str, int]] = {}
    for r in graded:
        row = confusion.setdefault(r["result"]["grade"], dict.fromkeys(LABEL_RANK, 0))
        row[r["attributes"]["human_label"]] += 1
    removed = [r for r in graded if r["result"]["grade"] == "remove"]
    bad = [r for r in graded if r["attributes"]["human_label"] == "Bad"]
    return {
        "dataset": "SemEval-2016 Task 3 subtask A (Qatar Living), human Good / PotentiallyUseful / Bad",
        "spearman_avg_score_vs_label": metric(rho.statistic, np.percentile(draws, 2.5) if len(draws) else None,
                                              np.percentile(draws, 97.5) if len(draws) else None, len(graded),
                                              "spearman, item bootstrap"),
        "kendall_avg_score_vs_label": metric(tau.statistic, None, None, len(graded), "kendall tau-b"),
        "grade_by_label": confusion,
        "remove_precision_for_bad": proportion(sum(r["attributes"]["human_label"] == "Bad" for r in removed),
                                               len(removed)),
        "remove_recall_of_bad": proportion(sum(r["result"]["grade"] == "remove" for r in bad), len(bad)),
    }
