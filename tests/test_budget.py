"""`--llm-budget`: once the run's estimated spend reaches it, no new paid call starts on any worker,
the cases left end unscored with the cause `budget`, and the reports say so."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from priced_toy import CALL_USD, CASES, OWN_EVAL, scoring_reply, write_toy

from llmjury.errors import ConfigError, PermanentProviderError
from llmjury.pricing import Price, PriceTable
from llmjury.running.budget import Budget, BudgetExhaustedError, budget_facts, refused_by_budget
from llmjury.running.settings import positive_number
from llmjury.session.progress import Board, Meter
from llmjury.store.location import StoreLocation

BUDGET_USD = 10.0  # reached by the third call
CALLS_TO_REACH = math.ceil(BUDGET_USD / CALL_USD)


def board_at(folder: Path) -> Board:
    """A run board in a SQLite store of its own."""
    return Board(StoreLocation("sqlite", folder / "board.sqlite"), "run")


@pytest.fixture
def toy(pytester: pytest.Pytester) -> pytest.Pytester:
    return write_toy(pytester)


def summary(pytester: pytest.Pytester) -> dict:
    return json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())


@pytest.mark.parametrize(("workers", "concurrency"),
                         [("0", "1"), ("0", "3"), pytest.param("2", "2", marks=pytest.mark.e2e)])
def test_no_call_starts_once_the_budget_is_spent_on_any_worker(toy, openai_server, workers, concurrency):
    """The bound: a call starts only while the run's published spend is below the budget, and each
    call publishes its cost before freeing its slot, so at most the calls that reach the budget plus
    the ones in flight then are made: CALLS_TO_REACH + (run-wide slots - 1)."""
    slots = int(concurrency)  # --llm-concurrency is run-wide, split across workers (1 each at -n 2)
    result = toy.runpytest_inprocess(
        "-n", workers, "--llm-judge", f"openai:priced;base_url={openai_server.base_url}",
        "--llm-budget", str(BUDGET_USD), "--llm-concurrency", concurrency, "--llm-progress", "off")
    result.assert_outcomes(passed=CASES)
    calls = len(openai_server.requests)
    assert CALLS_TO_REACH <= calls <= CALLS_TO_REACH + slots - 1
    facts = summary(toy)["budget"]
    assert facts["stopped"] is True
    assert facts["spent_usd"] == pytest.approx(calls * CALL_USD)
    assert facts["refused_calls"] == CASES - calls
    assert facts["unscored_cases"] == facts["unscored_verdicts"] == CASES - calls
    section = summary(toy)["toy"]
    assert section["unscored"] == CASES - calls
    assert section["unscored_causes"] == section["unscored_reasons"] == {"budget": CASES - calls}
    result.stdout.fnmatch_lines([f"*budget ($10) stopped the run*{CASES - calls} case(s) left unscored*"])
    markdown = (toy.path / "reports" / "latest" / "summary.md").read_text()
    assert f"> **{facts['note']}**" in markdown.split("## ")[0]  # above the first section


@pytest.mark.parametrize(("workers", "concurrency", "items"),
                         [("0", "1", "fail"), pytest.param("2", "2", "fail", marks=pytest.mark.e2e),
                          pytest.param("2", "2", "record", marks=pytest.mark.e2e)])
def test_own_evals_the_budget_stopped_are_unscored_not_failed(toy, openai_server, workers, concurrency, items):
    """The docs' own eval under a budget: a refused `jury.ask` raised, a refused `jury.score`
    tripped the test's assertion, and both were failures no report counted. Now each such test is
    a skip naming the budget, with an unscored verdict whose cause is `budget`: pytest's count, the
    family's and the budget note's agree, and the run exits 0 (it has no gates). With
    `--llm-item-failures record` too: a refused case is not an item that failed its assertion."""
    toy.makepyfile(test_toy=OWN_EVAL)
    openai_server.reply = scoring_reply
    spec = f"openai:priced;base_url={openai_server.base_url}"
    # $1 a token: an answer costs $6 and a judgement about $65, so the budget admits a few answers and
    # then refuses the others' asks (the test raised) and the admitted ones' judgements (it asserted).
    result = toy.runpytest_inprocess("-n", workers, "--llm-judge", spec, "--llm-role", f"candidate={spec}",
                                      "--llm-budget", "30", "--llm-concurrency", concurrency,
                                      "--llm-item-failures", items, "--llm-progress", "off", "-rs")
    assert result.ret == 0, result.stdout.str()
    outcomes = result.parseoutcomes()
    skipped = outcomes.get("skipped", 0)
    assert outcomes.get("passed", 0) + skipped == CASES and skipped > 0
    assert not {"failed", "error", "errors", "xfailed"} & set(outcomes)
    reasons = [line for line in result.outlines if line.startswith("SKIPPED")]
    assert reasons and all("budget: the run's budget of $30 is spent" in line for line in reasons)
    facts, section = summary(toy)["budget"], summary(toy)["custom"]
    assert facts["unscored_cases"] == skipped == section["unscored_reasons"]["budget"]
    assert len(section["unscored_cases"]) == skipped and section["cases"] == CASES
    result.stdout.fnmatch_lines([f"*budget ($30) stopped the run*{skipped} case(s) left unscored (cause: budget)*"])


def test_refused_calls_are_not_cached_so_a_bigger_budget_finishes_the_run(toy, openai_server):
    judge = f"openai:priced;base_url={openai_server.base_url}"
    first = toy.runpytest_inprocess("--llm-judge", judge, "--llm-budget", "10", "--llm-concurrency", "1")
    first.assert_outcomes(passed=CASES)
    assert len(openai_server.requests) == CALLS_TO_REACH
    again = toy.runpytest_inprocess("--llm-judge", judge, "--llm-budget", "1000")
    again.assert_outcomes(passed=CASES)
    # The answers paid for first came from the cache (free); only the refused cases were asked now.
    assert len(openai_server.requests) == CASES
    facts = summary(toy)["budget"]
    assert (facts["stopped"], facts["spent_usd"]) == (False, (CASES - CALLS_TO_REACH) * CALL_USD)
    assert summary(toy)["toy"]["unscored"] == 0


def test_an_unpriced_model_stops_the_run_at_start_up_naming_model_and_option(toy, openai_server):
    result = toy.runpytest_inprocess("--llm-judge", f"openai:mystery;base_url={openai_server.base_url}",
                                      "--llm-budget", "5")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--llm-budget 5: no price for model 'mystery' (openai:mystery)*"
                                 "--llm-budget-unknown allow*"])
    assert openai_server.requests == []


def test_an_unpriced_model_runs_when_told_to_count_it_as_free(toy, openai_server):
    result = toy.runpytest_inprocess("--llm-judge", f"openai:mystery;base_url={openai_server.base_url}",
                                      "--llm-budget", "5", "--llm-budget-unknown", "allow")
    result.assert_outcomes(passed=CASES)
    facts = summary(toy)["budget"]
    assert (facts["stopped"], facts["spent_usd"], facts["unpriced"]) == (False, 0, ["openai:mystery"])


def test_offline_runs_are_free_whatever_the_budget(toy):
    toy.runpytest_inprocess("--llm-budget", "0.000001").assert_outcomes(passed=CASES)
    facts = summary(toy)["budget"]
    assert (facts["stopped"], facts["spent_usd"], facts["refused_calls"]) == (False, 0, 0)


@pytest.mark.parametrize(("args", "message"), [
    (["--llm-budget", "lots"], "*--llm-budget 'lots': not a number of US dollars*"),
    (["--llm-budget", "0"], "*--llm-budget '0': must be a positive number of US dollars*"),
    (["-o", "llm_budget=-3"], "*ini llm_budget '-3': must be a positive number*"),
    (["--llm-budget", "1", "-o", "llm_budget_unknown=maybe"], "*ini llm_budget_unknown 'maybe': use one of*"),
])
def test_a_bad_budget_option_is_a_usage_error_naming_it(toy, args, message):
    result = toy.runpytest_inprocess(*args)
    assert result.ret == 4
    result.stderr.fnmatch_lines([message])


# -- the pieces, without pytest ---------------------------------------------------------------------
PRICED = PriceTable({"priced": Price(input=1_000_000, output=1_000_000), "free": Price(input=0, output=0)})


def test_the_budget_refuses_paid_calls_only_once_spent():
    budget = Budget(10.0, PRICED)
    assert budget.refusal("openai:priced", 9.99) is None
    refusal = budget.refusal("openai:priced", 10.0)
    assert isinstance(refusal, PermanentProviderError)  # never retried
    assert refused_by_budget(f"call failed: {refusal}")
    assert budget.refusal("offline", 1e9) is None
    assert budget.refusal("openai:free", 1e9) is None


def test_a_meter_sees_the_other_workers_spend_on_the_board(tmp_path):
    board = board_at(tmp_path)
    budget = Budget(10.0, PRICED)
    first, second = Meter("gw0", board, budget=budget), Meter("gw1", board, budget=budget)
    from llmjury.chat import Sample, Usage

    paid = [Sample(text="x", usage=Usage(prompt_tokens=3, completion_tokens=3))]
    first.admit("openai:priced")
    first.paid("openai:priced", paid)  # $6
    second.admit("openai:priced")
    second.paid("openai:priced", paid)  # $12 in all
    with pytest.raises(BudgetExhaustedError, match=r"budget: the run's budget of \$10 is spent"):
        first.admit("openai:priced")
    assert [t.refused_calls for t in board.read()] == [1, 0]


def test_budget_facts_count_the_cases_the_budget_left_unscored():
    refusal = Budget(1.0, PRICED).refusal("openai:priced", 2.0)
    records = [{"family": "toy", "case_id": "a", "valid": False, "error": f"call failed: {refusal}"},
               {"family": "toy", "case_id": "a", "valid": False, "error": f"call failed: {refusal}"},
               {"family": "toy", "case_id": "b", "valid": False, "error": "unparseable: no verdict"},
               {"family": "toy", "case_id": "c", "valid": True, "error": None}]
    facts = budget_facts(Budget(1.0, PRICED), 2.0, 2, [], records)
    assert (facts["stopped"], facts["unscored_verdicts"], facts["unscored_cases"]) == (True, 2, 1)
    assert "1 case(s) left unscored (cause: budget)" in facts["note"]


@pytest.mark.parametrize("raw", ["nan", "inf", "-1", "0", ""])
def test_a_budget_must_be_a_positive_amount(raw):
    with pytest.raises(ConfigError, match="--llm-budget"):
        positive_number(raw, "--llm-budget", "US dollars")


def test_under_a_budget_only_paid_calls_write_the_board_at_once(tmp_path, monkeypatch):
    """A free call (offline, priced at 0) costs the budget nothing: it waits for the throttled write."""
    import llmjury.session.progress
    from llmjury.chat import Sample, Usage

    monkeypatch.setattr(llmjury.session.progress, "PUBLISH_EVERY_S", float("inf"))
    board = board_at(tmp_path)
    meter = Meter("gw0", board, budget=Budget(10.0, PRICED))
    answer = [Sample(text="x", usage=Usage(prompt_tokens=1, completion_tokens=1))]
    meter.paid("offline", answer)
    meter.paid("openai:free", answer)
    assert board.read() == []
    meter.paid("openai:priced", answer)
    (tally,) = board.read()
    assert (tally.calls, tally.cost_usd) == (3, 2.0)
    meter.close()


def test_a_throttle_longer_than_a_thread_can_wait_schedules_a_write_that_can_wait(tmp_path, monkeypatch):
    """The throttled write's timer waits at most threading.TIMEOUT_MAX: an infinite throttle once
    started a Timer whose thread died with OverflowError (timestamp out of range)."""
    import threading

    import llmjury.session.progress
    from llmjury.chat import Sample, Usage

    monkeypatch.setattr(llmjury.session.progress, "PUBLISH_EVERY_S", float("inf"))
    meter = Meter("gw0", board_at(tmp_path))
    meter.paid("offline", [Sample(text="x", usage=Usage(prompt_tokens=1, completion_tokens=1))])
    try:
        assert meter._flush is not None and meter._flush.interval <= threading.TIMEOUT_MAX
    finally:
        meter.close()


def test_the_refusal_behind_a_failure_is_found_raised_handed_on_or_recorded():
    from llmjury.session.refusals import refusal_of

    refusal = Budget(1.0, PRICED).refusal("openai:priced", 2.0)
    text = str(refusal)
    assert refusal_of(refusal, []) == text  # jury.ask raised it
    try:
        try:
            raise refusal
        except BudgetExhaustedError as exc:
            raise RuntimeError("the pipeline gave up") from exc
    except RuntimeError as wrapped:
        assert refusal_of(wrapped, []) == text
    handed = AssertionError(f"llmjury.running.budget.BudgetExhaustedError: {text}\n(run by the worker that planned it)")
    assert refusal_of(handed, []) == text  # another worker ran the body: its text
    unscored = [{"valid": False, "error": f"call failed: {text}"}]
    assert refusal_of(AssertionError("assert None >= 3"), unscored) == text  # asserted on a refused judgement
    assert refusal_of(AssertionError("assert 2 >= 3"), [{"valid": False, "error": "unparseable: no score"}]) is None
