"""What the workflow's compare step makes of a run (llmjury.step_outcome): never silently green
when nothing was compared, one setting deciding, the baseline's origin at the top of the summary."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from summaries import summary_of

from llmjury.baseline_lookup import BaselineLookup, read_lookup, write_lookup
from llmjury.step_outcome import NOT_COMPARED, decide


def not_compared(reason: str, why: str) -> dict[str, object]:
    return {"comparison": {"compared": False, "not_compared": reason, "why_not": why, "families": {},
                           "judges_differ": []}}


@pytest.mark.parametrize(("reason", "policy", "status", "level"), [
    ("first", "auto", 0, "notice"), ("absent", "auto", 0, "notice"), ("expired", "auto", NOT_COMPARED, "error"),
    ("unavailable", "auto", NOT_COMPARED, "error"), ("judges_differ", "auto", NOT_COMPARED, "error"),
    ("expired", "pass", 0, "notice"), ("first", "fail", NOT_COMPARED, "error")])
def test_a_run_not_compared_passes_with_a_notice_only_when_there_was_no_baseline_to_miss(reason, policy, status, level):
    summary = summary_of(not_compared(reason, "the reason in words"))
    found = decide(NOT_COMPARED, summary, None, not_compared=policy)
    assert (found.status, found.level) == (status, level)
    assert found.message.startswith("not compared with a baseline: the reason in words")
    assert any(f"**Not compared** ({reason})" in line for line in found.lead)


def test_a_judge_without_a_key_is_its_own_outcome_not_the_judges_differ():
    stderr = "ERROR: no key for openai: OPENAI_API_KEY is not set (a fork pull request gets no secrets); set it\n"
    found = decide(4, None, BaselineLookup(found=True), stderr)
    assert found.status == NOT_COMPARED and "no key for openai" in found.message and "judges" not in found.message


def test_a_usage_error_of_another_kind_stays_a_failed_run():
    assert decide(4, None, None, "ERROR: --llm-runs 'x': not a number").status == 4


def test_a_failed_gate_is_red_and_an_inconclusive_one_a_warning_unless_asked():
    assert (decide(10, None, None).status, decide(10, None, None).level) == (10, "error")
    assert (decide(11, None, None).status, decide(11, None, None).level) == (0, "warning")
    assert decide(11, None, None, inconclusive="fail").status == 11


def test_the_summary_names_the_baselines_commit_run_and_age(tmp_path):
    lookup = BaselineLookup(found=True, run_id=42, run_url="https://github.com/o/r/actions/runs/42", commit="a" * 40,
                            created_at="2026-11-26T12:00:00Z", branch="main", at_merge_base=True)
    assert lookup.age(datetime(2026, 11, 28, 13, 0, tzinfo=UTC)) == "2 days"
    write_lookup(tmp_path, lookup)
    assert read_lookup(tmp_path) == lookup
    found = decide(0, summary_of({}), lookup)
    assert found.status == 0 and found.lead[0].startswith(
        "**Baseline**: commit aaaaaaaaaaaa (the merge base), run 42 <https://github.com/o/r/actions/runs/42>, ")
