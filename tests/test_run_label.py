"""The run's label says what answered: heuristics, a model, or only a test's own assertions."""

from __future__ import annotations

from llmjury.custom import CheckResult
from llmjury.families import discover
from llmjury.judgement.judges import ScoreResult
from llmjury.judgement.verdicts import ASSERTIONS, JudgeConfig, Verdict
from llmjury.pricing import PriceTable
from llmjury.results.aggregate import summarize


def record(provider: str, kind: str, result) -> dict:
    return Verdict(case_id="c1", family="custom", kind=kind, judge=JudgeConfig(provider=provider), result=result,
                   attributes={"name": "test_x"}).record()


SCORE = ScoreResult(score=3, low=1, high=5, output={"score": 3})
CHECK = CheckResult(passed=True)


def offline(*records: dict) -> bool:
    return summarize(list(records), {"id": "r"}, {}, PriceTable.load(), discover()).run.offline


def test_a_tests_own_assertions_do_not_make_a_heuristic_run_look_judged_by_a_model():
    assert offline(record("offline", "score", SCORE), record(ASSERTIONS, "check", CHECK)) is True
    assert offline(record("openai:gpt-4o", "score", SCORE), record(ASSERTIONS, "check", CHECK)) is False


def test_a_run_with_no_judged_verdict_is_not_called_offline():
    assert offline(record(ASSERTIONS, "check", CHECK)) is False
    assert offline() is False
