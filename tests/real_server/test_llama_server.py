"""The providers against llama.cpp's real server: what it does with n, logprobs, structured output,
seed and temperature, and that the engine adapts to it and records what it learned."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from llmjury.chat import chat
from llmjury.jurors import JurySpec
from llmjury.providers.base import ProviderSpec


class Grade(BaseModel):
    grade: int


@pytest.fixture
def spec(llama_server: str) -> ProviderSpec:
    return ProviderSpec.parse(f"openai:smollm2;base_url={llama_server};timeout=120")


def test_n_samples_come_back_as_single_seeded_calls(make_engine, spec):
    engine = make_engine()
    request = chat(("user", "Name a colour."), seed=11, temperature=0.8, max_tokens=6).with_n(3)
    completion = engine.run(engine.complete(spec, request))
    assert len(completion.samples) == 3 and all(s.text.strip() for s in completion.samples)
    assert engine.adaptations()["openai:smollm2"]["n"] == "asked 3 choices, got 1: one call per sample"
    assert engine.ledger["openai:smollm2"].calls == 3


def test_logprobs_carry_the_top_alternatives(make_engine, spec):
    engine = make_engine()
    request = chat(("user", "Rate from 1 to 5: 'I love dogs too!'. Answer with one digit."), temperature=0.0,
                   max_tokens=3, logprobs=True, top_logprobs=5)
    sample = engine.run(engine.complete(spec, request)).samples[0]
    assert sample.logprobs and len(sample.logprobs[0].top) == 5
    assert sample.logprobs[0].top[0].logprob >= sample.logprobs[0].top[-1].logprob


def test_structured_output_falls_back_to_a_grammar_constrained_json_object(make_engine, spec):
    engine = make_engine()
    request = chat(("user", "Grade this answer from 1 to 5: 'Paris is the capital of France.'"),
                   temperature=0.0, max_tokens=30, json_schema=Grade.model_json_schema(), schema_name="grade")
    text = engine.run(engine.complete(spec, request)).text
    assert isinstance(Grade.model_validate_json(text).grade, int)  # the small model's grade, valid by schema
    learned = engine.adaptations()["openai:smollm2"]["structured_output"]
    assert learned.startswith("json_schema refused (HTTP 500: …('body', 'response_format', 'type'), 'msg': ")
    assert "'input': 'json_schema'" in learned and learned.endswith("; using json_object")


def test_a_seed_and_a_temperature_reproduce_an_answer(make_engine, spec, tmp_path):
    request = chat(("user", "Say something about the sea."), seed=5, temperature=0.9, max_tokens=12)
    first = make_engine(run_id="a", cache=tmp_path / "a.sqlite")
    second = make_engine(run_id="b", cache=tmp_path / "b.sqlite")  # its own cache: a second real call
    answers = [engine.run(engine.complete(spec, request)) for engine in (first, second)]
    assert answers[0].cached == answers[1].cached == [False]
    assert answers[0].text == answers[1].text


def test_a_verdict_judge_refused_json_schema_asks_the_published_prompt_in_text(make_engine, llama_server):
    from llmjury.judgement.judges import CHOICE_FIELD, pairwise
    from llmjury.judgement.jury import Jury
    from llmjury.pricing import PriceTable
    from llmjury.prompts import PromptLibrary

    engine = make_engine()
    engine.settings.roles["judge"] = JurySpec.parse(f"openai:smollm2;base_url={llama_server};timeout=120")
    jury = Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())
    judged = engine.run(pairwise(jury, "custom", "Lyon.", "Paris.", template="core/compare.j2", orders=["ab"],
                                 variables={"criteria": "correct", "question": "Capital of France?"},
                                 decisions=CHOICE_FIELD))
    (run,) = judged.runs
    assert run.read in ("text", None)  # read as text, or unscored by the small model's text: never a field
    assert engine.adaptations()["openai:smollm2"]["structured_output"].startswith("json_schema refused (HTTP 500")
    assert run.error is None or "call failed" not in run.error


def test_a_real_answer_cut_off_by_its_token_limit_is_asked_again_then_unscored_truncated(make_engine, llama_server,
                                                                                          tmp_path):
    from llmjury.judgement.judges import parse_choice
    from llmjury.judgement.judging import ask_judge
    from llmjury.judgement.jury import Jury
    from llmjury.pricing import PriceTable
    from llmjury.prompts import PromptLibrary
    from real_server.answers import record

    engine = make_engine()
    engine.settings.roles["judge"] = JurySpec.parse(f"openai:smollm2;base_url={llama_server};timeout=120")
    jury = Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())
    prompt = jury.render("core/compare.j2", criteria="correct", question="Capital of France?",
                         response_a="Lyon.", response_b="Paris.")
    request = jury.request(prompt).model_copy(update={"max_tokens": 4, "temperature": 0.0})
    runs = engine.run(ask_judge(jury, "custom", [request], parse_choice, retries=1))
    (answer,) = runs.answers
    asked = [engine.run(engine.complete(jury.spec("judge", "custom").jurors[0].spec, request.model_copy(
        update={"max_tokens": room}))).samples[0] for room in (4, 8)]  # both from the cache: no new call
    assert [s.finish_reason for s in asked] == ["length", "length"]  # the server's own word for a cut-off
    assert not answer.scored and answer.cause == "truncated" and answer.attempts == 2
    assert answer.error.startswith("truncated") and "max_tokens 8" in answer.error
    lines = [{"shape": "choice", "text": s.text, "finish_reason": s.finish_reason, "prompt": "core/compare.j2",
              "outcome": f"unscored: {answer.cause}"} for s in asked]
    path = record(lines, tmp_path / "answers-truncated.jsonl")
    for line in lines:
        print(f"[{line['finish_reason']}] {line['outcome']}: {line['text']!r}")
    print(f"recorded in {path}")
