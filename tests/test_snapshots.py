"""Rendered prompts and report layouts, snapshotted so any change shows up in review."""

from __future__ import annotations

import json

from llmjury.families.socratic.data import personas
from llmjury.model import RunSummary
from llmjury.prompts import PromptLibrary
from llmjury.reporting.reports import markdown

HISTORY = ("[Student]: Why is quicksort slow sometimes?\n[Teacher]: What happens with a sorted input?\n"
           "[Student]: It picks bad pivots?")


def test_socratic_judge_prompt(snapshot):
    rendered = PromptLibrary().render("socratic/judge.j2", dialogue_history=HISTORY,
                                      teacher_a_response="Why might a bad pivot matter?",
                                      teacher_b_response="Yes. Use random pivots.")
    assert rendered.text == snapshot


def test_socratic_student_prompt(snapshot):
    rendered = PromptLibrary().render("socratic/student.j2", persona=personas()[13].describe(), history_str=HISTORY)
    assert rendered.text == snapshot


def test_socratic_teacher_prompt(snapshot):
    assert PromptLibrary().render("socratic/teacher_baseline.j2", dialogue_history=HISTORY).text == snapshot


def test_summary_markdown_layout(snapshot):
    from llmjury.families import discover
    from llmjury.pricing import PriceTable
    from llmjury.results.aggregate import summarize

    records = []
    for i, (winner, conf) in enumerate([("ours", "unanimous"), ("ours", "majority"), ("baseline", "majority"),
                                        ("tie", "no_consensus")]):
        runs = [{"ours_position": p, "decision": "a", "preferred": winner if winner != "tie" else "tie",
                 "juror": "openai:gpt-4o-mini", "error": None, "attempts": 1} for p in "ABA"]
        records.append({"case_id": f"sim-{i}", "family": "socratic", "kind": "pairwise",
                        "judge": {"provider": "openai:gpt-4o-mini", "prompt": "socratic/judge.j2@x", "runs": 3},
                        "result": {"winner": winner, "confidence": conf, "counted_runs": 3, "runs": runs,
                                   "source": "simulated", "dataset": "simulated", "subject": "operating_systems",
                                   "ours_chars": 100 + i, "baseline_chars": 120},
                        "valid": True, "error": None, "raw": [], "attributes": {}})
    run = {"id": "fixed-run", "judge": "openai:gpt-4o-mini", "cache_mode": "replay", "seed": 0, "workers": 2}
    summary = summarize(records, run, {"openai:gpt-4o-mini": {"calls": 12, "prompt_tokens": 12000,
                                                              "completion_tokens": 3000}}, PriceTable.load(),
                        discover())
    tree = summary.tree()
    tree["socratic"]["seed003"]["summary"]["evaluation_completed"] = "fixed"
    assert markdown(RunSummary.model_validate(tree), [], discover()) == snapshot


def test_summary_markdown_head_leads_with_the_decision(snapshot):
    """The head of summary.md as a pull request shows it: banners, gates and why, headline metrics
    with the change against a baseline; everything before the folded details."""
    from llmjury.families import discover
    from llmjury.pricing import PriceTable
    from llmjury.results.aggregate import summarize
    from llmjury.results.gates import Gate

    records = []
    for i in range(12):
        winner = ("ours", "ours", "baseline", "tie")[i % 4]
        runs = [{"ours_position": p, "decision": "a", "preferred": winner, "juror": "openai:gpt-4o-mini",
                 "error": None, "attempts": 1} for p in "ABA"]
        records.append({"case_id": f"sim-{i:02d}", "family": "socratic", "kind": "pairwise",
                        "judge": {"provider": "openai:gpt-4o-mini", "prompt": "socratic/judge.j2@x", "runs": 3},
                        "result": {"winner": winner, "confidence": "majority", "counted_runs": 3, "runs": runs,
                                   "source": "simulated", "dataset": "simulated", "subject": "operating_systems",
                                   "ours_chars": 100 + i, "baseline_chars": 120},
                        "valid": True, "error": None, "raw": [], "attributes": {}})
    run = {"id": "fixed-run", "judge": "openai:gpt-4o-mini", "cache_mode": "replay", "seed": 0, "workers": 2,
           "stopped": {"by": "SIGTERM", "tests_finished": 12, "tests_collected": 30}}
    comparison = {
        "baseline": "reports/main", "judges_differ": [], "compared": True,
        "families": {"socratic": {"win_rate": {
            "current": 0.5, "baseline": 0.55, "shared_cases": 10, "only_current": 2, "only_baseline": 1,
            "delta": {"value": -0.05, "low": -0.2, "high": 0.1, "n": 10, "method": "paired bootstrap"}}}}}
    summary = summarize(records, run, {}, PriceTable.load(), discover(), complete=False).model_copy(
        update={"comparison": comparison})
    gates = [Gate.parse(text).check(summary) for text in
             ("socratic.win_rate>=0.3", "socratic.win_rate>=0.9", "socratic.win_rate>=0.5", "socratic.nope>=1")]
    assert markdown(summary, gates, discover()).split("## Details")[0] == snapshot


def test_frozen_offline_geval_steps(snapshot):
    """The frozen evaluation steps the suite ships: regenerating them must show up in review."""
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "fixtures" / "geval" / "steps" / "offline_heuristic"
    frozen = {path.name: path.read_text(encoding="utf-8") for path in sorted(folder.glob("*.txt"))}
    assert len(frozen) == 6
    assert frozen == snapshot


def test_geval_report_layout_with_a_judge_beside_the_human_ceiling(snapshot, tmp_path):
    """Replayed rated items: the meta-evaluation table and the ceiling on the same items (references cut)."""
    from llmjury.families.geval import FAMILY
    from llmjury.families.geval.options import GEvalOptions

    rows = [{"id": f"t{i}", "context": f"A: question {i // 3}", "response": f"answer {i}", "system": f"bot{i % 4}",
             "judge": "my-judge", "judge_overall": 1 + (i * 7) % 5, "overall": [1 + (i + k) % 5 for k in range(3)]}
            for i in range(12)]
    path = tmp_path / "support.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    section = FAMILY.aggregate(FAMILY.replay(path, GEvalOptions(items_name="support_bot")).verdicts)
    assert FAMILY.markdown(section).split("**Reference figures**")[0] == snapshot


def test_geval_cot_prompt_for_overall_is_the_seeds(snapshot):
    rendered = PromptLibrary().render("geval/cot.j2", task="dialogue", criterion="overall", part="line")
    assert rendered.text == snapshot


def _battle(i, a, b, winner):
    return {"case_id": f"q{i:03d}-{a}-vs-{b}", "family": "arena", "kind": "battle",
            "judge": {"provider": "openai:gpt-4o"},
            "result": {"winner": winner, "consistent": True, "counted_runs": 2}, "valid": True, "error": None,
            "raw": [], "attributes": {"dataset": "mtbench", "question": f"q{i}", "question_index": i, "model_a": a,
                                      "model_b": b, "round": 0, "answer_a": "x" * (10 + i % 7),
                                      "answer_b": "y" * (12 + i % 5), "experiment": "default"}}


def test_arena_markdown_layout(snapshot):
    from llmjury.families.arena import FAMILY
    from llmjury.families.arena.report import aggregate, markdown

    outcomes = ["model_a", "model_b", "tie", "model_a", "model_a"]
    records = [_battle(i, a, b, outcomes[(i + k) % 5]) for i in range(20)
               for k, (a, b) in enumerate([("alpha", "beta"), ("alpha", "gamma"), ("beta", "gamma")])]
    assert markdown(aggregate([FAMILY.typed(r) for r in records])) == snapshot


def test_qa_quality_markdown_and_section_9_layout(snapshot):
    from llmjury.families.qa_quality import FAMILY
    from llmjury.families.qa_quality.report import aggregate, files, markdown

    def pair(i, scores, grade):
        evaluation = {d: {"score": s, "reasoning": "r"} for d, s in
                      zip(("completeness", "context_independence", "technical_accuracy"), scores, strict=True)}
        return {"case_id": f"qa-{i}", "family": "qa_quality", "kind": "grade",
                "judge": {"provider": "openai:gpt-4o-mini"}, "valid": True, "error": None, "raw": [],
                "result": {"scores": dict(zip(evaluation, scores, strict=True)), "grade": grade, "judge_grade": grade,
                           "grade_disagrees": False, "avg_score": sum(scores) / 3,
                           "evaluation": evaluation | {"overall_quality": grade}},
                "attributes": {"dataset": "slack_export", "course": "level2_nlp", "raw_tokens_est": 300,
                               "input_tokens_est": 90,
                               "pair": {"generation": "7", "date": "2024-10-15", "question": {"text": f"q{i}"},
                                        "answers": [{"text": "a"}]}}}

    records = [pair(1, [5, 4, 4], "high"), pair(2, [3, 3, 3], "medium"), pair(3, [1, 1, 4], "remove"),
               {"case_id": "rules-level2_nlp", "family": "qa_quality", "kind": "rules", "judge": {"provider": "rules"},
                "valid": True, "error": None, "raw": [],
                "result": {"removed": {"announcement_or_recruiting": 2}, "removed_answers": {"filler": 1}, "kept": 3},
                "attributes": {"dataset": "slack_export", "course": "level2_nlp"}}]
    verdicts = [FAMILY.typed(r) for r in records]
    section = aggregate(verdicts)
    written = files(section, verdicts)
    scored = json.loads(written["qa_quality/level2_nlp.json"])
    scored["metadata"]["evaluation_date"] = "fixed"
    assert markdown(section) == snapshot
    assert scored == snapshot
