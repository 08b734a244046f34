"""`FAMILY.replay`: recorded judge scores into typed verdicts and a report, with no model call."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from llmjury.cli import main
from llmjury.errors import DatasetError
from llmjury.families.geval import FAMILY
from llmjury.families.geval.options import GEvalOptions
from llmjury.families.geval.report import references
from llmjury.families.geval.results import GEvalSection, ScoreResult

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"


def rated_with_judge(path: Path) -> Path:
    """Twelve rated items: three annotators each, and a judge's recorded overall score."""
    rows = []
    for i in range(12):
        human = [1 + (i + k) % 5 for k in range(3)]
        rows.append({"id": f"t{i}", "context": f"A: question {i // 3}", "response": f"answer {i}",
                     "system": f"bot{i % 4}", "judge": "my-judge", "judge_overall": (sum(human) / 3) + (i % 2) * 0.5,
                     "ratings": {"Overall": human}})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_rated_items_with_recorded_scores_replay_beside_the_ceiling_on_the_same_items(tmp_path):
    replayed = FAMILY.replay(rated_with_judge(tmp_path / "support.jsonl"), GEvalOptions(items_name="support_bot"))
    verdicts = replayed.verdicts
    kinds = {v.kind for v in verdicts}
    assert kinds == {"recorded", "annotator"} and all(isinstance(v.result, ScoreResult) for v in verdicts)
    assert sum(v.kind == "recorded" for v in verdicts) == 12 and sum(v.kind == "annotator" for v in verdicts) == 36
    section = FAMILY.aggregate(verdicts)
    assert isinstance(section, GEvalSection) and section.human_ceiling is not None
    judged = section.meta["recorded:my-judge/support_bot/response/overall"]
    assert judged.items == 12 and judged.pooled is not None and judged.per_context is not None
    validity = section.judge_validity["recorded:my-judge/support_bot/response/overall"]
    ceiling = section.human_ceiling["support_bot/response/overall"]
    assert ceiling.items == 12 and validity.human_ceiling_items == 12
    assert ceiling.pooled is not None and validity.human_ceiling_spearman == ceiling.pooled.spearman
    assert "`recorded:my-judge/support_bot/response/overall` | 12 |" in FAMILY.markdown(section)


def test_unieval_predictions_replay_to_the_published_table():
    path = FIXTURES / "topical_chat_usr" / "unieval_predictions.json"
    verdicts = FAMILY.replay(path, GEvalOptions()).verdicts
    section = FAMILY.aggregate(verdicts)
    published = references()["unieval"].rows
    for dimension, (pearson, spearman, kendall) in published.items():
        pooled = section.meta[f"recorded:unieval/topical_chat/response/{dimension}"].pooled
        assert pooled is not None
        assert [pooled.pearson.value, pooled.spearman.value, pooled.kendall.value] == \
            pytest.approx([pearson, spearman, kendall], abs=1e-6)


def test_chiang_and_lee_answers_replay_with_both_parsers():
    path = FIXTURES / "closer_look_sample" / "gpt3.5_nat_geval.json"
    verdicts = FAMILY.replay(path, GEvalOptions()).verdicts
    providers = {v.judge.provider for v in verdicts}
    assert providers == {"recorded:gpt-3.5-geval(paper parser)", "recorded:gpt-3.5-geval(ours parser)"}
    assert {v.attributes["criterion"] for v in verdicts} == {"naturalness"} and len(verdicts) == 120
    assert all(v.judge.n == 20 for v in verdicts)


def test_a_run_verdicts_file_replays_to_the_same_figures(tmp_path):
    first = FAMILY.replay(rated_with_judge(tmp_path / "support.jsonl"), GEvalOptions()).verdicts
    saved = tmp_path / "verdicts.jsonl"
    saved.write_text("".join(json.dumps(v.record()) + "\n" for v in first)
                     + json.dumps({"case_id": "x", "family": "arena", "judge": {"provider": "p"}}) + "\n",
                     encoding="utf-8")
    again = FAMILY.replay(saved, GEvalOptions()).verdicts
    assert [v.record() for v in again] == [v.record() for v in first]
    assert FAMILY.aggregate(again) == FAMILY.aggregate(first)


def test_a_rated_items_file_without_recorded_scores_says_what_to_add(tmp_path):
    path = tmp_path / "plain.jsonl"
    path.write_text(json.dumps({"context": "hi", "response": "hello", "overall": 4}) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"plain\.jsonl: no recorded judge scores to replay: give each item "
                                           r"judge_<dimension> fields"):
        FAMILY.replay(path, GEvalOptions())


def test_a_recorded_answers_file_of_an_unknown_dimension_is_named(tmp_path):
    path = tmp_path / "gpt3.5_flu_geval.json"
    path.write_text((FIXTURES / "closer_look_sample" / "gpt3.5_nat_geval.json").read_text(), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"gpt3\.5_flu_geval\.json: cannot tell the dimension"):
        FAMILY.replay(path, GEvalOptions())


def test_llmjury_replay_geval_writes_a_report_without_a_model(tmp_path, capsys):
    path = rated_with_judge(tmp_path / "support.jsonl")
    status = main(["replay", "geval", str(path), "--option", "items_name=support_bot", "--name", "r1",
                   "--out", str(tmp_path / "reports")])
    assert status == 0
    summary = json.loads((tmp_path / "reports" / "r1" / "summary.json").read_text(encoding="utf-8"))
    assert "recorded:my-judge/support_bot/response/overall" in summary["geval"]["judge_validity"]
    assert "support_bot/response/overall" in summary["geval"]["human_ceiling"]
    assert "**Human ceiling**" in (tmp_path / "reports" / "r1" / "summary.md").read_text(encoding="utf-8")


def test_a_folder_of_published_outputs_replays_as_its_files_do(tmp_path, capsys):
    folder = tmp_path / "closer_look"
    shutil.copytree(FIXTURES / "closer_look_sample", folder)  # four gpt3.5_<dim>_geval.json files and a NOTICE.md
    shutil.copy(FIXTURES / "dep" / "fed_dep_step2_eval.csv", folder)
    status = main(["replay", "geval", str(folder), "--name", "published", "--out", str(tmp_path / "reports")])
    assert status == 0, capsys.readouterr()
    validity = json.loads((tmp_path / "reports" / "published" / "summary.json").read_text())["geval"]["judge_validity"]
    one_file = FAMILY.aggregate(FAMILY.replay(folder / "gpt3.5_coh_geval.json", GEvalOptions()).verdicts)
    key = "recorded:gpt-3.5-geval(paper parser)/topical_chat/response/coherence"
    assert validity[key]["pearson"]["value"] == pytest.approx(one_file.judge_validity[key].pearson.value)
    assert {k.split("/")[0] for k in validity} >= {"recorded:dep-text", "recorded:gpt-3.5-geval(ours parser)"}
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "README.md").write_text("nothing to replay")
    assert main(["replay", "geval", str(tmp_path / "notes"), "--out", str(tmp_path / "reports")]) == 4
    assert "no published outputs in this folder" in capsys.readouterr().err
