"""A call is paid once across a run's processes, answered or not: another process waiting on its
claim reads the answer, the refusal or the failure instead of asking again."""

from __future__ import annotations

import pytest

from llmjury.chat import Sample, chat
from llmjury.errors import PermanentProviderError
from llmjury.providers.base import ProviderSpec
from llmjury.running.cache import Claimed
from llmjury.testing import FakeChoice, Fault


def spec(server) -> ProviderSpec:
    return ProviderSpec.parse(f"openai:m;base_url={server.base_url}")


def two_workers(make_engine, tmp_path):
    cache = tmp_path / "c.sqlite"
    return make_engine(cache=cache, run_id="run"), make_engine(cache=cache, run_id="run")


def test_a_failure_is_read_by_the_other_process_not_paid_again(openai_server, make_engine, tmp_path):
    one, two = two_workers(make_engine, tmp_path)
    openai_server.faults.append(Fault(status=400, message="bad request: context too long"))
    with pytest.raises(PermanentProviderError, match="context too long"):
        one.run(one.complete(spec(openai_server), chat(("user", "q"))))
    with pytest.raises(PermanentProviderError, match=r"context too long.*another process of this run"):
        two.run(two.complete(spec(openai_server), chat(("user", "q"))))
    assert len(openai_server.requests) == 1
    later = make_engine(cache=tmp_path / "c.sqlite", run_id="next-run")  # a later run asks again
    assert later.run(later.complete(spec(openai_server), chat(("user", "q")))).text
    assert len(openai_server.requests) == 2


def test_a_refusal_is_shared_with_the_run_and_never_cached(openai_server, make_engine, tmp_path):
    one, two = two_workers(make_engine, tmp_path)
    openai_server.reply = lambda body, i: FakeChoice(text="", refusal="I cannot judge this")
    first = one.run(one.complete(spec(openai_server), chat(("user", "q"))))
    second = two.run(two.complete(spec(openai_server), chat(("user", "q"))))
    assert first.problem == second.problem == "refused: I cannot judge this"
    assert len(openai_server.requests) == 1
    assert two.store.get(chat(("user", "q")).sample_key("openai:m", 0)) is None


def test_a_waiter_whose_claim_ends_between_its_two_reads_takes_the_committed_answer(openai_server, make_engine,
                                                                                      tmp_path):
    one, two = two_workers(make_engine, tmp_path)
    answered = one.run(one.complete(spec(openai_server), chat(("user", "q"))))
    store, real_rows = two.store, two.store.rows
    reads = []

    def rows_late(keys):
        # The lookup before claiming and the waiter's first read miss: the holder commits the answer,
        # and ends its claim, just after the second.
        reads.append(keys)
        return {} if len(reads) <= 2 else real_rows(keys)

    store.rows = rows_late
    store.claim = lambda keys, owner, **kw: _done(Claimed({keys[0]: "run:other"}))  # held by another process
    result = two.run(two.complete(spec(openai_server), chat(("user", "q"))))
    assert result.text == answered.text and len(openai_server.requests) == 1


def _done(value):
    from concurrent.futures import Future

    future: Future = Future()
    future.set_result(value)
    return future


def test_a_judge_waiting_on_a_claim_takes_an_earlier_runs_answer_after_fetching_its_own(openai_server, make_engine,
                                                                                       tmp_path):
    # Two samples: this process fetches the first while another process of the run holds the second.
    # Before that other process ends, a concurrent run commits the second sample. A judge replays
    # earlier answers, so the waiter takes it; fetching the first must not make the waiter "fresh".
    engine = make_engine(cache=tmp_path / "c.sqlite", run_id="run")
    request = chat(("user", "q"), n=2)
    second = request.sample_key("openai:m", 1)
    engine.store.claim = lambda keys, owner, **kw: _done(Claimed({second: "run:other"}))
    default = openai_server.reply

    def reply(body, i):
        engine.store.put(second, "openai", "", "{}", Sample(text="from another run"), "other-run").result()
        return default(body, i)

    openai_server.reply = reply
    result = engine.run(engine.complete(spec(openai_server), request, role="judge"))
    assert [s.text for s in result.samples][1] == "from another run"
    assert result.cached == [False, True] and len(openai_server.requests) == 1


def test_an_answer_committed_between_the_lookup_and_the_claim_is_not_paid_again(openai_server, make_engine,
                                                                                 tmp_path):
    """The other process answered, committed and ended its claim after this one looked the key up
    and before it claimed it: the claim finds the run's answer instead of a free key to fetch."""
    one, two = two_workers(make_engine, tmp_path)
    answered = one.run(one.complete(spec(openai_server), chat(("user", "q"))))
    one.close()  # committed
    real_rows, reads = two.store.rows, []

    def rows_late(keys):
        reads.append(keys)  # the first read, before the claim, was made before the commit
        return {} if len(reads) == 1 else real_rows(keys)

    two.store.rows = rows_late
    result = two.run(two.complete(spec(openai_server), chat(("user", "q"))))
    assert result.text == answered.text and len(openai_server.requests) == 1


def test_a_failure_settled_between_the_check_and_the_claim_is_not_paid_again(openai_server, make_engine, tmp_path):
    one, two = two_workers(make_engine, tmp_path)
    openai_server.faults.append(Fault(status=400, message="bad request: context too long"))
    with pytest.raises(PermanentProviderError):
        one.run(one.complete(spec(openai_server), chat(("user", "q"))))
    one.close()  # settled
    real_unanswered, reads = two.store.unanswered, []

    def unanswered_late(key, run_id):
        reads.append(key)
        return None if len(reads) == 1 else real_unanswered(key, run_id)

    two.store.unanswered = unanswered_late
    with pytest.raises(PermanentProviderError, match=r"context too long.*another process of this run"):
        two.run(two.complete(spec(openai_server), chat(("user", "q"))))
    assert len(openai_server.requests) == 1
