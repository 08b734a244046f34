"""A template declares its own labels, language and decision format (`reading.toml` beside it): a
Korean compare prompt's own option names are read as the English ones are, and the repair call asks
in Korean for the decision in the template's own format."""

from __future__ import annotations

import pytest

from llmjury.errors import ConfigError
from llmjury.jurors import JurySpec
from llmjury.prompts import PromptLibrary
from llmjury.testing import FakeOpenAI

KOREAN_COMPARE = """두 응답을 비교하세요.
[응답 가]
{{ response_a }}
[응답 나]
{{ response_b }}
기준: {{ criteria }} {{ question }}
간단히 설명한 뒤 "###" 다음에 가, 나 또는 무승부로 최종 결정을 쓰세요."""
DECLARATION = """["core/compare.j2"]
language = "ko"
format = "### 가\\n또는\\n### 나\\n또는\\n### 무승부"
[ "core/compare.j2".labels ]
a = ["응답 가", "가"]
b = ["응답 나", "나"]
"""


@pytest.fixture
def korean_prompts(tmp_path):
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "compare.j2").write_text(KOREAN_COMPARE, encoding="utf-8")
    (tmp_path / "reading.toml").write_text(DECLARATION, encoding="utf-8")
    return PromptLibrary([tmp_path])


def judge(make_engine, prompts, reply):
    from llmjury.judgement.judges import pairwise
    from llmjury.judgement.jury import Jury
    from llmjury.pricing import PriceTable

    with FakeOpenAI(reply) as server:
        engine = make_engine()
        engine.settings.roles["judge"] = JurySpec.parse(f"openai:judge;base_url={server.base_url}")
        jury = Jury(engine, engine.settings, prompts, PriceTable.load())
        judged = engine.run(pairwise(jury, "custom", "리옹", "파리", template="core/compare.j2", orders=["ab"],
                                     variables={"criteria": "정확성", "question": "프랑스의 수도?"}))
        return judged, list(server.requests)


def test_a_templates_own_labels_are_read(make_engine, korean_prompts):
    judged, _ = judge(make_engine, korean_prompts, lambda body, i: "응답 나가 수도를 맞혔습니다.\n\n### 최종 결정: 나")
    (run,) = judged.runs
    assert run.winner == "b" and not run.repaired


def test_the_repair_asks_in_the_templates_language_and_format(make_engine, korean_prompts):
    def reply(body, index):
        return "### 나" if len(body["messages"]) > 1 else "둘 다 나름의 장점이 있습니다."

    judged, requests = judge(make_engine, korean_prompts, reply)
    (run,) = judged.runs
    assert run.winner == "b" and run.repaired
    ask = requests[-1]["messages"][-1]["content"]
    assert ask.startswith("위 답변에는") and "### 가\n또는\n### 나\n또는\n### 무승부" in ask


@pytest.mark.parametrize(("toml", "fault"), [
    ('["core/compare.j2"]\nlanguages = "ko"', "unknown keys ['languages']"),
    ('["core/compare.j2"]\nlanguage = "de"', "language 'de' is none of en, ko, it"),
    ('["core/compare.j2".labels]\na = "가"', "labels must map each option to a list of names"),
])
def test_a_faulty_declaration_stops_the_run_at_start_up_naming_it(tmp_path, toml, fault):
    (tmp_path / "reading.toml").write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"reading\.toml \[core/compare\.j2\]") as raised:
        PromptLibrary([tmp_path])
    assert fault in str(raised.value)


def test_a_label_for_an_option_the_prompt_does_not_have_is_named(make_engine, tmp_path):
    (tmp_path / "reading.toml").write_text('["core/compare.j2".labels]\nd = ["라"]', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"reading\.toml \[core/compare\.j2\]: no option d in core-choice/5"):
        judge(make_engine, PromptLibrary([tmp_path]), lambda body, i: "### A")
