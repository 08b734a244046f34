"""Roles under test are asked afresh each run; fixed instruments replay; a declared version replays."""

from __future__ import annotations

import pytest

from llmjury.chat import chat
from llmjury.providers.base import ProviderSpec
from llmjury.running.cache import CacheMode
from llmjury.running.freshness import UNDER_TEST, replay_policy
from llmjury.running.ledger import usage_by_role


def spec(server, *options: str) -> ProviderSpec:
    return ProviderSpec.parse(";".join([f"openai:my-bot;base_url={server.base_url}", *options]))


def ask(engine, provider: ProviderSpec, role: str | None, text: str = "q"):
    return engine.run(engine.complete(provider, chat(("user", text)), role=role))


def test_a_candidate_is_asked_afresh_in_each_run_while_the_judge_replays(openai_server, make_engine, tmp_path):
    cache = tmp_path / "c.sqlite"
    main = make_engine(cache=cache, run_id="main")
    assert ask(main, spec(openai_server), "candidate").cached == [False]
    assert ask(main, spec(openai_server), "judge", "judge this").cached == [False]
    pr = make_engine(cache=cache, run_id="pr")
    assert ask(pr, spec(openai_server), "candidate").cached == [False]  # asked again: the PR's system
    assert ask(pr, spec(openai_server), "judge", "judge this").cached == [True]  # same request, replayed
    assert len(openai_server.requests) == 3


def test_workers_of_one_run_share_the_fresh_answer(openai_server, make_engine, tmp_path):
    cache = tmp_path / "c.sqlite"
    ask(make_engine(cache=cache, run_id="main"), spec(openai_server), "candidate")
    one, two = make_engine(cache=cache, run_id="pr"), make_engine(cache=cache, run_id="pr")
    assert ask(one, spec(openai_server), "candidate").cached == [False]
    assert ask(two, spec(openai_server), "candidate").cached == [True]
    assert len(openai_server.requests) == 2


def test_a_versioned_candidate_replays_its_version_and_is_asked_again_for_a_new_one(openai_server, make_engine,
                                                                                       tmp_path):
    cache = tmp_path / "c.sqlite"
    ask(make_engine(cache=cache, run_id="a"), spec(openai_server, "version=1"), "candidate")
    assert ask(make_engine(cache=cache, run_id="b"), spec(openai_server, "version=1"), "candidate").cached == [True]
    assert ask(make_engine(cache=cache, run_id="c"), spec(openai_server, "version=2"), "candidate").cached == [False]
    assert len(openai_server.requests) == 2


def test_marked_roles_are_under_test_and_the_opt_in_replays_them(openai_server, make_engine, tmp_path):
    cache = tmp_path / "c.sqlite"
    ask(make_engine(cache=cache, run_id="a"), spec(openai_server), "rag")
    assert ask(make_engine(cache=cache, run_id="b"), spec(openai_server), "rag").cached == [True]
    marked = make_engine(cache=cache, run_id="c", under_test=UNDER_TEST | {"rag"})
    assert ask(marked, spec(openai_server), "rag").cached == [False]
    opted = make_engine(cache=cache, run_id="d", replay_under_test=True)
    assert ask(opted, spec(openai_server), "candidate").cached == [True]


def test_the_engine_tallies_each_role_with_the_reason(openai_server, make_engine, tmp_path):
    cache = tmp_path / "c.sqlite"
    ask(make_engine(cache=cache, run_id="a"), spec(openai_server), "judge", "judge this")
    engine = make_engine(cache=cache, run_id="b")
    ask(engine, spec(openai_server), "candidate")
    ask(engine, spec(openai_server), "judge", "judge this")
    roles = usage_by_role(engine.roles)
    assert roles["candidate"]["openai:my-bot"] == {
        "policy": "under test: asked afresh (add ;version=... to the spec to replay)",
        "fresh_samples": 1, "replayed_samples": 0}
    assert roles["judge"]["openai:my-bot"]["replayed_samples"] == 1
    assert roles["judge"]["openai:my-bot"]["policy"].startswith("fixed instrument")


@pytest.mark.parametrize(("role", "spec_text", "mode", "fresh", "why"), [
    ("candidate", "openai:m", CacheMode.RECORD, True, "under test: asked afresh"),
    ("contestant", "openai:m", CacheMode.RECORD, False, "fixed instrument"),
    ("candidate", "openai:m;version=7", CacheMode.RECORD, False, "under test, version 7"),
    ("candidate", "openai:m", CacheMode.REPLAY, False, "under test, --llm-cache replay"),
    ("judge", "openai:m", CacheMode.RECORD, False, "fixed instrument"),
    ("baseline", "openai:m", CacheMode.RECORD, False, "fixed instrument"),
    (None, "openai:m", CacheMode.RECORD, False, "fixed instrument"),
    ("judge", "openai:m", CacheMode.REFRESH, True, "--llm-cache refresh"),
])
def test_replay_policy(role, spec_text, mode, fresh, why):
    policy = replay_policy(role, ProviderSpec.parse(spec_text), cacheable=True, under_test=UNDER_TEST,
                           replay_under_test=False, cache_mode=mode)
    assert policy.fresh is fresh and policy.why.startswith(why)


def test_a_version_option_is_part_of_the_cache_key(openai_server, make_engine):
    engine = make_engine()
    one, two = engine.provider(spec(openai_server, "version=1")), engine.provider(spec(openai_server))
    assert one.cache_name == "openai:my-bot;version=1" and two.cache_name == "openai:my-bot"


def test_each_sample_a_role_is_given_is_counted_once_where_it_was_paid(openai_server, make_engine, tmp_path):
    """A judge re-asked for a later sample of the same request (after an empty or unreadable answer)
    gets the earlier samples back with it. Before: the role's row counted them as fresh again (30 fresh
    samples where the provider paid 28); replayed ones stay counted as replayed."""
    from llmjury.running.ledger import usage_by_provider

    cache = tmp_path / "c.sqlite"
    engine = make_engine(cache=cache, run_id="main")
    request = chat(("user", "judge this"))
    engine.run(engine.complete(spec(openai_server), request, role="judge"))
    engine.run(engine.complete(spec(openai_server), request.with_n(3), role="judge"))  # samples 1 and 2 are new
    paid = usage_by_provider(engine.ledger)["openai:my-bot"]["fresh_samples"]
    assert paid == 3 and usage_by_role(engine.roles)["judge"]["openai:my-bot"]["fresh_samples"] == paid
    later = make_engine(cache=cache, run_id="later")
    later.run(later.complete(spec(openai_server), request.with_n(4), role="judge"))  # three replayed, one new
    assert usage_by_role(later.roles)["judge"]["openai:my-bot"] | {"policy": ""} == {
        "policy": "", "fresh_samples": 1, "replayed_samples": 3}


def test_the_usage_section_names_each_roles_policy_as_a_policy_not_as_what_happened():
    """A tester read "why: fixed instrument: cached answers replayed" beside 0 replayed samples as a
    claim that answers had been replayed: the column is the role's policy, worded as one."""
    from summaries import summary_of

    from llmjury.reporting.reports import markdown

    why = replay_policy("judge", ProviderSpec.parse("openai:m"), cacheable=True, under_test=UNDER_TEST,
                        replay_under_test=False, cache_mode=CacheMode.RECORD).why
    usage = {"roles": {"judge": {"openai:m": {"policy": why, "fresh_samples": 28, "replayed_samples": 0}}}}
    text = markdown(summary_of({"usage": usage}), [], {})
    assert "| role | provider | fresh samples | replayed samples | policy |" in text
    assert "| judge | `openai:m` | 28 | 0 | fixed instrument: a cached answer is replayed |" in text


@pytest.mark.parametrize("role", ["candidate", "judge"])
def test_an_answer_another_process_of_the_run_paid_for_is_not_counted_as_replayed(openai_server, make_engine,
                                                                                  tmp_path, role):
    """Two xdist workers of one run: the one that reads an answer the other paid for got it from this
    run, not from an earlier one. Before, the usage table said 18 fresh and 11 replayed for a
    candidate asked afresh under -n 2, and 18 and 0 under -n 0 (a user trial)."""
    cache = tmp_path / "c.sqlite"
    ask(make_engine(cache=cache, run_id="run"), spec(openai_server), role, "the same question")
    other_worker = make_engine(cache=cache, run_id="run")
    assert ask(other_worker, spec(openai_server), role, "the same question").cached == [True]
    assert len(openai_server.requests) == 1
    counts = usage_by_role(other_worker.roles)[role]["openai:my-bot"]
    assert (counts["fresh_samples"], counts["replayed_samples"]) == (0, 0)
