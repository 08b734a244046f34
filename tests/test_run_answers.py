"""A paid answer is let go once the store holds it, and read back from the store as this run's payment."""

from __future__ import annotations

import threading
from concurrent.futures import Future

from llmjury.chat import Sample, chat
from llmjury.providers.base import ProviderSpec
from llmjury.running.answers import RunAnswers
from llmjury.running.ledger import usage_by_role
from llmjury.testing import FakeOpenAI


def spy_reads(engine) -> list[str]:
    """The keys the engine reads from its store, in order."""
    read: list[str] = []
    real_rows = engine.store.rows
    engine.store.rows = lambda keys: read.extend(keys) or real_rows(keys)
    return read


def test_an_answer_read_back_from_the_store_is_still_this_runs_payment(openai_server, make_engine):
    provider = ProviderSpec.parse(f"openai:my-bot;base_url={openai_server.base_url}")
    engine = make_engine(run_id="pr")
    first = engine.run(engine.complete(provider, chat(("user", "q")), role="candidate"))
    read = spy_reads(engine)
    # A role under test asks again for more samples: the first is read from the store this run wrote, not paid again.
    again = engine.run(engine.complete(provider, chat(("user", "q"), n=3), role="candidate"))
    key = chat(("user", "q")).sample_key("openai:my-bot", 0)
    assert key in read and again.texts[0] == first.texts[0]
    assert again.cached == [False] * 3 and engine.ledger["openai:my-bot"].cached_samples == 0
    assert [r.get("n", 1) for r in openai_server.requests] == [1, 2]
    # 1, then the 2 new of the 3 (the first, paid once, is not counted twice): as the provider paid them
    assert usage_by_role(engine.roles)["candidate"]["openai:my-bot"]["fresh_samples"] == 3


def test_an_answer_is_held_until_its_write_is_committed():
    answers, sample, write = RunAnswers(), Sample(text="paid"), Future[None]()
    answers.keep_paid({"k": sample})
    answers.stored("k", sample, write)
    assert answers.get("k") is sample  # a lookup before the commit would not find it in the store
    write.set_result(None)
    assert answers.get("k") is None and answers.paid("k")


def test_an_answer_whose_write_failed_or_that_no_store_takes_stays_for_the_run():
    answers, failed, unstored = RunAnswers(), Sample(text="failed write"), Sample(text="offline")
    write = Future[None]()
    answers.keep_paid({"a": failed, "b": unstored})
    answers.stored("a", failed, write)
    write.set_exception(OSError("store gone"))
    assert answers.get("a") is failed and answers.get("b") is unstored
    assert answers.paid("a") and answers.paid("b") and not answers.paid("c")


def test_an_answer_another_process_paid_is_read_back_from_the_store_not_held_for_the_run(make_engine, tmp_path):
    """A process waiting on another's claim reads the answer from the store and does not hold it:
    held for the whole run, a waiting machine's answers would grow with the suite."""
    arrived, release, claimed = threading.Event(), threading.Event(), threading.Event()

    def answer(body, index):
        arrived.set()
        release.wait(30)
        return "the answer"

    with FakeOpenAI(answer) as server:
        spec = ProviderSpec.parse(f"openai:judge;base_url={server.base_url}")
        payer, waiter = (make_engine(cache=tmp_path / "shared.sqlite") for _ in range(2))
        request = chat(("user", "the same question"))
        paying = payer.submit(payer.complete(spec, request))
        assert arrived.wait(30)  # the payer's call is out: its claim holds the key
        real_claim = waiter.store.claim

        def claim(*args, **kwargs):
            done = real_claim(*args, **kwargs)
            done.add_done_callback(lambda _: claimed.set())
            return done

        waiter.store.claim = claim
        waiting = waiter.submit(waiter.complete(spec, request))
        assert claimed.wait(30)  # the waiter found the key held, and waits on it
        release.set()
        assert paying.result(30).cached == [False] and waiting.result(30).cached == [True]
        key = request.sample_key("openai:judge", 0)
        assert waiter._answers.get(key) is None  # the store holds it; nothing more in memory
        again = waiter.run(waiter.complete(spec, request))
    assert again.texts == ["the answer"] and again.cached == [True] and len(server.requests) == 1
