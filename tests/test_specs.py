"""Specs are values: a role's spec is parsed once, when settings are resolved, and travels parsed."""

from __future__ import annotations

import pytest

from llmjury.chat import chat
from llmjury.errors import ConfigError
from llmjury.families.arena.options import ArenaOptions
from llmjury.families.socratic.cases import simulated_cases
from llmjury.families.socratic.options import SocraticOptions
from llmjury.families.socratic.pipeline import compare
from llmjury.judgement.bound_jury import BoundJury
from llmjury.judgement.jury import Jury
from llmjury.jurors import JurySpec
from llmjury.pricing import PriceTable
from llmjury.prompts import PromptLibrary
from llmjury.providers.base import ProviderSpec
from llmjury.running.settings import OptionLine, checked_options


def refuse_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on any parse of a spec's text fails the test."""

    def parse(_cls: type, text: str) -> None:
        raise AssertionError(f"spec {text!r} parsed after start-up")

    monkeypatch.setattr(ProviderSpec, "parse", classmethod(parse))
    monkeypatch.setattr(JurySpec, "parse", classmethod(parse))


def test_no_spec_is_parsed_after_start_up(make_engine, monkeypatch, openai_server):
    openai_server.reply = lambda body, i: "### A"
    engine = make_engine(judge=f"openai:judge;base_url={openai_server.base_url}*2",
                         roles={"socratic.judge": "offline+offline", "candidate": "offline"})
    jury = Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())
    refuse_parsing(monkeypatch)
    case = simulated_cases(SocraticOptions(), seed=0)[0]
    assert engine.run(compare(case, jury)).verdict.valid  # a jury of two: the case asks each juror
    bound = BoundJury(jury, lambda verdict: None, case_id="c1", name="compare", test="t")
    comparison = engine.run(bound.compare("Lyon.", "Paris.", criteria="correct"))
    assert comparison.verdict.judge.provider == "jury(openai:judge#1, openai:judge#2)"
    assert engine.run(jury.complete("candidate", "socratic", chat(("user", "hi"))))


def test_a_role_asked_for_one_answer_names_one_provider_not_a_jury(make_engine):
    engine = make_engine(roles={"candidate": "offline*2"})
    jury = Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())
    with pytest.raises(ConfigError, match=r"role 'candidate' is jury\(offline:heuristic#1, offline:heuristic#2\)"):
        engine.run(jury.complete("candidate", "socratic", chat(("user", "hi"))))


def test_equal_specs_are_one_provider_to_the_engine(make_engine):
    one, two = ProviderSpec.parse("openai:m;timeout=5;base_url=http://x"), ProviderSpec.parse(
        "openai:m;base_url=http://x;timeout=5.0")
    assert one == two and hash(one) == hash(two)
    assert ProviderSpec.parse("openai:m;version=1") != ProviderSpec.parse("openai:m;version=2")
    engine = make_engine()
    assert engine.provider(one) is engine.provider(two)


def test_a_jury_spec_keeps_its_text_for_the_record_and_labels_its_jurors():
    spec = JurySpec.parse("openai:gpt-4o;api_key=sk-secret*2")
    assert spec.text == "openai:gpt-4o;api_key=sk-secret*2"
    assert spec.label == "jury(openai:gpt-4o#1, openai:gpt-4o#2)"
    assert [juror.spec.text_option("api_key") for juror in spec.jurors] == ["sk-secret", "sk-secret"]


def test_a_misspelt_live_contestant_is_a_start_up_error_naming_its_line():
    line = OptionLine("models", "opnai:gpt-4o,vicuna-13b-v1.3", "--llm-option",
                      "arena.models=opnai:gpt-4o,vicuna-13b-v1.3")
    with pytest.raises(ConfigError, match=r"--llm-option arena.models=opnai:gpt-4o.*unknown kind 'opnai' "
                                          r"\(did you mean 'openai'\?\)"):
        checked_options("arena", ArenaOptions, [line])
    options = ArenaOptions(models="openai:gpt-4o;timeout=9,vicuna-13b-v1.3")
    assert options.model_list() == ["gpt-4o", "vicuna-13b-v1.3"]  # named as the user named it, no provider prefix
    assert options.live("gpt-4o") == ProviderSpec.parse("openai:gpt-4o;timeout=9")
    assert options.live("vicuna-13b-v1.3") is None
