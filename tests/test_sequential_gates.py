"""Gates read on confidence sequences over per-case figures in seeded order: which gates can be
looked at, a decision only when the whole sequence settles it, deltas paired with the baseline, a
figure outside its scale named, and the run's end read like Gate.check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from llmjury.errors import ConfigError
from llmjury.judgement.verdicts import JudgeConfig, Verdict
from llmjury.model import GateResult
from llmjury.results.gates import Gate
from llmjury.results.sequential_gates import SequentialGates

PROJECT = Path(__file__).parent / "projects" / "polite"


@pytest.fixture
def polite(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(PROJECT))
    import polite

    return polite


def records(polite: Any, oks: list[bool], length: int = 10) -> list[dict[str, Any]]:
    judge = JudgeConfig(provider="offline:heuristic", prompt="polite/judge@1", temperature=0.7, parser="yes-no/1")
    return [Verdict(case_id=f"q{i:03d}", family="polite", kind="polite", judge=judge,
                    result=polite.Polite(polite=ok, length=length)).record() for i, ok in enumerate(oks)]


def gates(polite: Any, *texts: str, baseline: list[dict[str, Any]] | None = None, **kwargs: Any) -> SequentialGates:
    return SequentialGates([Gate.parse(t) for t in texts], {"polite": polite.FAMILY}, seed=0, confidence=0.95,
                           baseline=baseline, **kwargs)


def test_a_rate_far_above_its_threshold_is_decided_pass_and_one_near_it_is_not(polite):
    sure = gates(polite, "polite.polite_rate>=0.5").look(records(polite, [True] * 60))[0]
    assert (sure.n, sure.value, sure.outcome) == (60, 1.0, "pass") and sure.low > 0.5
    near = gates(polite, "polite.polite_rate>=0.5").look(records(polite, [True, False] * 30))[0]
    assert near.outcome is None and near.low < 0.5 < near.high


def test_a_delta_is_paired_on_the_shared_cases_and_fails_once_wholly_below_the_threshold(polite):
    main = records(polite, [True] * 40)
    now = records(polite, [False] * 40)
    sequence = gates(polite, "polite.polite_rate.delta.high>=0", baseline=main)
    look = sequence.look(now)[0]
    assert (look.n, look.value, look.outcome) == (40, -1.0, "fail")
    assert sequence.all_decided(now).startswith("decided: every gate was decided after 40 cases")
    unchanged = sequence.look(main)[0]
    assert unchanged.outcome is None and unchanged.low < 0 < unchanged.high  # never passed early


def test_gates_that_are_no_mean_of_per_case_figures_are_never_decided_early(polite):
    sequence = gates(polite, "polite.polite_rate>=polite.longest_reply", "polite.polite_rate.delta>=0")
    looks = sequence.look(records(polite, [True] * 30))
    assert [g.not_sequential for g in looks] == ["its threshold names another metric",
                                                 "it needs a baseline (--llm-baseline)"]
    assert sequence.all_decided(records(polite, [True] * 30)) is None


def test_a_figure_outside_its_scale_names_the_gate_the_case_and_the_ini_line(polite):
    sequence = gates(polite, "polite.longest_reply<=100")
    with pytest.raises(ConfigError, match=r"case 'q\d+' has polite.longest_reply = 10, outside the scale \[0, 1\].*"
                                          r"llm_sequential_scales as polite.longest_reply=LOW:HIGH"):
        sequence.look(records(polite, [True] * 5))
    scaled = gates(polite, "polite.longest_reply<=100", scales={"polite.longest_reply": (0.0, 200.0)})
    assert scaled.look(records(polite, [True] * 5))[0].value == 10


def test_at_the_end_a_bound_gate_reads_its_named_bound_on_the_sequence(polite):
    main = records(polite, [True] * 40)
    sequence = gates(polite, "polite.polite_rate.delta.high>=0", "polite.polite_rate.delta>=0", baseline=main)
    fixed = [GateResult(g, "pass", 0.0, 0.0, (0.0, 0.0), "") for g in ("a", "b")]
    bound, value = sequence.results(main, fixed)
    assert (bound.status, bound.decided_by) == ("pass", "high")
    assert value.status == "inconclusive" and "confidence sequence" in value.reason
    passed = sequence.results(main, fixed, uncertain="pass")[1]
    assert (passed.status, passed.decided_by) == ("pass", "value") and "decided on the point estimate" in passed.reason
