"""The report on typed verdicts: judge validity per labelled dataset, corpus figures per dataset,
results that keep the contract, and the dry-run estimate on the same files as the suite."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from llmjury.cli import main
from llmjury.errors import ConfigError
from llmjury.families.qa_quality import FAMILY
from llmjury.families.qa_quality.agreement import agreement_with_labels
from llmjury.families.qa_quality.report import aggregate, markdown
from llmjury.families.qa_quality.results import GradeResult, LabelledGrade, QASection

DIMENSIONS = ("completeness", "context_independence", "technical_accuracy")


def result(score: float, grade: str) -> dict:
    s = round(score)
    evaluation = {d: {"score": s, "reasoning": "r"} for d in DIMENSIONS} | {"overall_quality": grade}
    return {"scores": dict.fromkeys(DIMENSIONS, s), "grade": grade, "judge_grade": grade, "grade_disagrees": False,
            "avg_score": score, "evaluation": evaluation}


def record(case_id: str, kind: str, dataset: str, score: float, grade: str, label: str | None = None) -> dict:
    res = result(score, grade) | ({"label": label} if label else {})
    return {"case_id": case_id, "family": "qa_quality", "kind": kind, "judge": {"provider": "openai:gpt-4o-mini"},
            "result": res, "attributes": {"dataset": dataset, "course": "", "raw_tokens_est": 100,
                                          "input_tokens_est": 50, "pair": {"question": {"text": "q"}}}}


def labelled(score: float, grade: str, label: str) -> LabelledGrade:
    return LabelledGrade.model_validate(result(score, grade) | {"label": label})


def test_agreement_counts_remove_against_the_lowest_label():
    graded = [labelled(4.5, "high", "Good"), labelled(3.0, "medium", "PotentiallyUseful"),
              labelled(1.5, "remove", "Bad"), labelled(1.7, "remove", "Good"), labelled(2.5, "low", "Bad")]
    out = agreement_with_labels("semeval", graded)
    assert out is not None
    assert out.remove_precision_for_bad.value == 0.5 and out.remove_recall_of_bad.value == 0.5
    assert out.spearman_avg_score_vs_label.value > 0
    assert out.grade_by_label["remove"] == {"Bad": 1, "PotentiallyUseful": 0, "Good": 1}
    assert out.dataset.startswith("SemEval-2016 Task 3")


def test_the_label_correlations_and_their_interval_are_scipys_on_the_seeded_resamples():
    import numpy as np
    from scipy import stats

    rng = np.random.default_rng(4)
    labels = ("Bad", "PotentiallyUseful", "Good")
    graded = [labelled(float(rng.integers(10, 50)) / 10, "medium", labels[int(rng.integers(0, 3))]) for _ in range(60)]
    out = agreement_with_labels("semeval", graded)
    scores = np.array([g.avg_score for g in graded])
    ranks = np.array([labels.index(g.label) for g in graded])
    draws = np.random.default_rng(0)
    rows = [draws.integers(0, 60, 60) for _ in range(500)]
    spread = [stats.spearmanr(scores[i], ranks[i]).statistic for i in rows]
    assert out is not None
    rho = out.spearman_avg_score_vs_label
    assert rho.value == pytest.approx(stats.spearmanr(scores, ranks).statistic, abs=1e-12)
    assert (rho.low, rho.high) == pytest.approx((np.percentile(spread, 2.5), np.percentile(spread, 97.5)), abs=1e-12)
    assert out.kendall_avg_score_vs_label.value == pytest.approx(stats.kendalltau(scores, ranks).statistic, abs=1e-12)


def test_mean_scores_have_scipys_t_interval():
    from scipy import stats

    from llmjury.families.qa_quality.report import mean_metric

    values = [4.0, 3.0, 5.0, 4.0, 2.0, 5.0]
    mean = sum(values) / len(values)
    low, high = stats.t.interval(0.95, len(values) - 1, loc=mean, scale=stats.sem(values))
    found = mean_metric(values)
    assert (found.value, found.n) == (mean, 6)
    assert (found.low, found.high) == pytest.approx((low, high), abs=1e-12)


def test_grade_labels_rank_remove_lowest():
    out = agreement_with_labels("graded_wiki", [labelled(4.7, "high", "high"), labelled(1.3, "remove", "remove"),
                                                labelled(3.0, "medium", "low")])
    assert out is not None and out.dataset == "graded_wiki, human high / medium / low / remove"
    assert out.remove_recall_of_bad.value == 1.0 and out.spearman_avg_score_vs_label.value == 1.0


def test_each_labelled_dataset_is_measured_on_its_own_and_corpus_datasets_are_broken_down():
    records = [record("semeval-1", "human_label", "semeval", 4.0, "high", "Good"),
               record("semeval-2", "human_label", "semeval", 1.0, "remove", "Bad"),
               record("mine-1", "human_label", "mine", 4.0, "high", "remove"),
               record("mine-2", "human_label", "mine", 2.0, "low", "high"),
               record("qa-a", "grade", "slack_export", 4.0, "high"), record("wiki-1", "grade", "wiki", 1.0, "remove")]
    section = aggregate([FAMILY.typed(r) for r in records])
    assert section.judge_validity is not None and set(section.judge_validity) == {"mine", "semeval"}
    assert section.judge_validity["semeval"].spearman_avg_score_vs_label.n == 2
    assert section.judge_validity["mine"].grade_by_label == {"high": {"remove": 1, "low": 0, "medium": 0, "high": 0},
                                                             "low": {"remove": 0, "low": 0, "medium": 0, "high": 1}}
    assert section.datasets is not None and {k: v.grades.remove for k, v in section.datasets.items()} == \
        {"slack_export": 0, "wiki": 1}
    assert section.remove_rate is not None and section.remove_rate.n == 2
    assert "| wiki | 0 | 0 | 0 | 1 |" in markdown(section)


def test_a_metric_without_data_survives_the_summary_round_trip():
    records = [record("semeval-1", "human_label", "semeval", 4.0, "high", "Good")]
    section = aggregate([FAMILY.typed(r) for r in records])
    # as the core writes summary.json: absent top-level figures left out, a metric's None value kept
    dumped = {k: v for k, v in section.model_dump(mode="json").items() if v is not None}
    assert dumped["judge_validity"]["semeval"]["remove_precision_for_bad"]["value"] is None
    assert QASection.model_validate(dumped) == section


def test_results_keep_the_contract():
    assert FAMILY.result_model("grade") is GradeResult and FAMILY.result_model("human_label") is LabelledGrade
    bad = record("qa-a", "grade", "d", 4.0, "high")
    bad["result"]["surprise"] = 1
    with pytest.raises(ValidationError, match="surprise"):
        FAMILY.typed(bad)
    with pytest.raises(ConfigError, match="no verdict kind ''"):
        FAMILY.typed({**record("qa-a", "grade", "d", 4.0, "high"), "kind": ""})


def test_dry_run_reads_your_pairs_file(tmp_path, capsys):
    rows = [{"id": i, "question": "What is a tensor?", "answer": "An array."} for i in range(3)]
    path = tmp_path / "wiki.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["qa-estimate", "--pairs", str(path), "--name", "team wiki", "--model", "gpt-4o-mini"]) == 0
    out = capsys.readouterr().out
    assert "qa_quality dataset team_wiki" in out and "3 pairs to grade (0 with a human label)" in out


def test_dry_run_without_files_says_which_to_give(tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["qa-estimate"])
    assert stopped.value.code == 2  # a usage error, as for an option it does not know
    err = capsys.readouterr().err
    assert err.startswith("usage: llmjury qa-estimate")
    assert "llmjury qa-estimate: error: give --export DIR, --pairs FILE or --semeval FILE" in err
    (tmp_path / "empty.csv").write_text("", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"empty\.csv: empty file"):
        main(["qa-estimate", "--pairs", str(tmp_path / "empty.csv")])
