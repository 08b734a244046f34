"""Providers learn what a real server does and adapt, recording it: fewer choices than `n`,
structured output refused."""

from __future__ import annotations

import json

import pytest

from llmjury.chat import chat
from llmjury.providers.base import ProviderSpec
from llmjury.testing import FakeOpenAI, ServerBehaviour

SCHEMA = {"type": "object", "properties": {"grade": {"type": "integer"}}, "required": ["grade"]}


def by_seed(body, index):
    return f"sample seeded {body.get('seed')}"


def test_a_server_that_ignores_n_gets_one_seeded_call_per_missing_sample(make_engine, tmp_path):
    cache = tmp_path / "n.sqlite"
    with FakeOpenAI.llama_cpp(by_seed) as server:
        spec = ProviderSpec.parse(f"openai:small;base_url={server.base_url}")
        engine = make_engine(cache=cache)
        completion = engine.run(engine.complete(spec, chat(("user", "rate it"), seed=7).with_n(3)))
        assert completion.texts == ["sample seeded 7", "sample seeded 8", "sample seeded 9"]
        assert [r.get("n", 1) for r in server.requests] == [3, 1, 1]
        assert engine.adaptations() == {"openai:small": {"n": "asked 3 choices, got 1: one call per sample"}}
        more = engine.run(engine.complete(spec, chat(("user", "again"), seed=7).with_n(2)))
        assert len(more.samples) == 2 and [r.get("n", 1) for r in server.requests[3:]] == [1, 1]
        again = make_engine(cache=cache, run_id="run-2")
        assert again.run(again.complete(spec, chat(("user", "rate it"), seed=7).with_n(3))).cached == [True] * 3
        assert len(server.requests) == 5  # every sample came from the cache


def test_a_refused_json_schema_falls_back_to_json_object_with_the_schema(make_engine):
    with FakeOpenAI.llama_cpp(lambda body, i: '{"grade": 4}') as server:
        spec = ProviderSpec.parse(f"openai:small;base_url={server.base_url}")
        engine = make_engine()
        request = chat(("user", "grade it"), json_schema=SCHEMA, schema_name="grade")
        assert json.loads(engine.run(engine.complete(spec, request)).text) == {"grade": 4}
        formats = [r.get("response_format", {}).get("type") for r in server.requests]
        assert formats == ["json_schema", "json_object"]
        assert server.requests[1]["response_format"]["schema"] == SCHEMA
        engine.run(engine.complete(spec, chat(("user", "another"), json_schema=SCHEMA)))
        assert server.requests[2]["response_format"]["type"] == "json_object"  # learned once
        learned = engine.adaptations()["openai:small"]["structured_output"]
        assert learned.startswith("json_schema refused (HTTP 500: …('body', 'response_format', 'type'), 'msg': ")
        assert "'input': 'json_schema'" in learned and learned.endswith("; using json_object")


def test_a_server_without_structured_output_gets_the_schema_in_the_prompt(make_engine):
    behaviour = ServerBehaviour(structured="none")
    with FakeOpenAI(lambda body, i: '{"grade": 2}', behaviour=behaviour) as server:
        spec = ProviderSpec.parse(f"openai:plain;base_url={server.base_url}")
        engine = make_engine()
        text = engine.run(engine.complete(spec, chat(("user", "grade it"), json_schema=SCHEMA))).text
        assert json.loads(text) == {"grade": 2}
        last = server.requests[-1]
        assert "response_format" not in last
        assert last["messages"][-1]["content"].startswith("grade it\n\nAnswer with one JSON object")
        assert json.dumps(SCHEMA) in last["messages"][-1]["content"]


ADAPTING = """
import llmjury
from llmjury import Case, JudgeConfig, Outcome, Verdict
from llmjury.chat import chat


async def judge(case, jury):
    completion = await jury.complete("judge", "toy", chat(("user", case.id), seed=1).with_n(3))
    return Outcome([Verdict(case_id=case.id, family="toy", judge=JudgeConfig(provider=completion.provider),
                            raw=completion.texts)])


@llmjury.pipeline(judge)
@llmjury.parametrize([Case(id=f"c{i}", family="toy") for i in range(4)])
def test_toy(outcome):
    assert len(outcome.verdict.raw) == 3
"""


@pytest.mark.parametrize("workers", ["0", pytest.param("2", marks=pytest.mark.e2e)])
def test_what_providers_learned_is_in_the_run_report(pytester, workers):
    pytester.makeini("[pytest]\naddopts = -p no:deepeval -p no:asyncio -p no:benchmark\n")
    pytester.makepyfile(test_toy=ADAPTING)
    with FakeOpenAI.llama_cpp(by_seed) as server:
        result = pytester.runpytest_inprocess("-n", workers, "--llm-judge", f"openai:small;base_url={server.base_url}")
    result.assert_outcomes(passed=4)
    run = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())["run"]
    assert run["adaptations"] == {"openai:small": {"n": "asked 3 choices, got 1: one call per sample"}}
    assert "`openai:small` adapted to its server: n: asked 3 choices" in \
        (pytester.path / "reports" / "latest" / "summary.md").read_text()
