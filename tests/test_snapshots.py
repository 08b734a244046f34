"""Rendered prompts and report layouts, snapshotted so any change shows up in review."""

from __future__ import annotations

import json

from llmjury.families.socratic.data import personas
from llmjury.prompts import PromptLibrary
from llmjury.reports import markdown

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
    from llmjury.aggregate import summarize
    from llmjury.pricing import PriceTable

    records = []
    for i, (winner, conf) in enumerate([("ours", "unanimous"), ("ours", "majority"), ("baseline", "majority"),
                                        ("tie", "no_consensus")]):
        runs = [{"ours_position": p, "decision": "a", "preferred": winner if winner != "tie" else "tie",
                 "error": None, "attempts": 1} for p in "ABA"]
        records.append({"case_id": f"sim-{i}", "family": "socratic",
                        "judge": {"provider": "openai:gpt-4o-mini", "prompt": "socratic/judge.j2@x", "runs": 3},
                        "result": {"winner": winner, "confidence": conf, "counted_runs": 3, "runs": runs},
                        "valid": True, "error": None, "raw": [],
                        "attributes": {"source": "simulated", "subject": "operating_systems",
                                       "ours_chars": 100 + i, "baseline_chars": 120}})
    run = {"id": "fixed-run", "judge": "openai:gpt-4o-mini", "cache_mode": "replay", "seed": 0, "workers": 2}
    summary = summarize(records, run, {"openai:gpt-4o-mini": {"calls": 12, "prompt_tokens": 12000,
                                                              "completion_tokens": 3000}}, PriceTable.load())
    summary = json.loads(json.dumps(summary))
    summary["socratic"]["seed003"]["summary"]["evaluation_completed"] = "fixed"
    assert markdown(summary, []) == snapshot


def test_frozen_offline_geval_steps(snapshot):
    """The frozen evaluation steps the suite ships: regenerating them must show up in review."""
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "fixtures" / "geval" / "steps" / "offline_heuristic"
    frozen = {path.name: path.read_text(encoding="utf-8") for path in sorted(folder.glob("*.txt"))}
    assert len(frozen) == 6
    assert frozen == snapshot


def test_geval_cot_prompt_for_overall_is_the_seeds(snapshot):
    rendered = PromptLibrary().render("geval/cot.j2", task="dialogue", criterion="overall", part="line",
                                      target="overall quality of the entire dialogue")
    assert rendered.text == snapshot
