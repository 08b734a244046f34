"""How well a judge agrees with people's labels of Q&A pairs.

Reported per labelled dataset: the rank correlation of the judge's average score with the label, the
grade x label counts, and how well `remove` finds the lowest label (precision, recall). Imported only
when a report is built, with the statistics it needs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from llmjury.correlation import MIN_CORRELATION_N, bootstrap_spearman, correlations
from llmjury.families.qa_quality.labels import describe, vocabulary
from llmjury.families.qa_quality.results import JudgeValidity, LabelledGrade
from llmjury.model import Metric
from llmjury.stats import metric, proportion

#: Item bootstrap resamples of the Spearman interval (seed 0).
BOOTSTRAP = 500


def agreement_with_labels(dataset: str, graded: Sequence[LabelledGrade]) -> JudgeValidity | None:
    """The judge's average score and grade against one dataset's labels (scored verdicts only)."""
    if not graded:
        return None
    labels = vocabulary(graded[0].label)
    rank = {label: i for i, label in enumerate(labels)}
    scores = np.array([g.avg_score for g in graded])
    ranks = np.array([rank[g.label] for g in graded])
    point = correlations(scores, ranks)  # NaN for a tiny or constant sample, reported as no value
    rng = np.random.default_rng(0)
    finite = bootstrap_spearman(scores, ranks, np.stack([rng.integers(0, len(scores), len(scores))
                                                          for _ in range(BOOTSTRAP)]))
    finite = finite[np.isfinite(finite)]
    confusion: dict[str, dict[str, int]] = {}
    for g in graded:
        row = confusion.setdefault(g.grade, dict.fromkeys(labels, 0))
        row[g.label] += 1
    worst = labels[0]
    removed = [g for g in graded if g.grade == "remove"]
    bad = [g for g in graded if g.label == worst]
    return JudgeValidity(
        dataset=describe(dataset, labels),
        spearman_avg_score_vs_label=Metric(**metric(point["spearman"],
                                                    np.percentile(finite, 2.5) if len(finite) else None,
                                                    np.percentile(finite, 97.5) if len(finite) else None,
                                                    len(graded), "spearman, item bootstrap",
                                                    minimum=MIN_CORRELATION_N)),
        kendall_avg_score_vs_label=Metric(**metric(point["kendall"], None, None, len(graded), "kendall tau-b")),
        grade_by_label=confusion,
        remove_precision_for_bad=Metric(**proportion(sum(g.label == worst for g in removed), len(removed))),
        remove_recall_of_bad=Metric(**proportion(sum(g.grade == "remove" for g in bad), len(bad))),
    )
