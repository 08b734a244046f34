"""A repair call can work: it asks in the asking template's language (its declaration's, else its
own text's) for the missing decision in the template's format, and says why in that language; an
answer to it cut off by its token limit is asked again once with twice the room, as a first answer
is, else unscored as `truncated`. Against FakeOpenAI, through the real SDK, asserting on the
prompt the server received."""

from __future__ import annotations

import re

import pytest

from llmjury.judgement.judges import pairwise, structured
from llmjury.judgement.jury import Jury
from llmjury.jurors import JurySpec
from llmjury.pricing import PriceTable
from llmjury.prompts import PromptLibrary
from llmjury.testing import FakeChoice, FakeOpenAI

#: Words of the English repair prompt and of the readers' English causes that are not Italian words too.
ENGLISH = {"your", "answer", "above", "has", "no", "decision", "that", "can", "be", "read", "where", "belongs",
           "reply", "with", "alone", "exactly", "this", "format", "and", "nothing", "else", "or", "prompt", "prompt's",
           "the", "line", "also", "names", "is", "of", "one", "object", "fields", "whose", "score", "whole",
           "number", "from", "to", "look", "alike", "characters", "on", "states", "more", "than", "which", "final",
           "not", "scale", "asked", "for", "missing", "json", "verdict"}
#: Korean and Italian compare prompts, each with its declaration beside it.
PROMPTS = {
    "ko": ("""두 응답을 비교하세요.
[응답 가]
{{ response_a }}
[응답 나]
{{ response_b }}
간단히 설명한 뒤 "###" 다음에 가, 나 또는 무승부로 최종 결정을 쓰세요.""",
           """["core/compare.j2"]
language = "ko"
format = ["### 가", "### 나", "### 무승부"]
[ "core/compare.j2".labels ]
a = ["응답 가", "가"]
b = ["응답 나", "나"]
tie = ["무승부"]
"""),
    "it": ("""Confronta le due risposte.
[Risposta A]
{{ response_a }}
[Risposta B]
{{ response_b }}
Spiega in breve, poi scrivi la decisione finale dopo "###": A, B oppure pareggio.""",
           """["core/compare.j2"]
language = "it"
[ "core/compare.j2".labels ]
tie = ["pareggio"]
"""),
}
#: The option labels each prompt's format names (the only words a repair may share with English).
LABELS = {"ko": set(), "it": {"A", "B", "tie"}}
#: A word the repair prompt says the cause with, per language and cause.
CAUSE_WORDS = {("ko", "no_decision"): "결정이 없습니다", ("ko", "ambiguous"): "서로 다른 결정",
               ("it", "no_decision"): "nessuna decisione", ("it", "ambiguous"): "decisioni diverse"}
#: An answer holding no decision, and one holding two.
UNREAD = {"no_decision": "Both have merits.", "ambiguous": "### A\n\n### B"}


def library(tmp_path, language: str) -> PromptLibrary:
    template, declaration = PROMPTS[language]
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "compare.j2").write_text(template, encoding="utf-8")
    (tmp_path / "reading.toml").write_text(declaration, encoding="utf-8")
    return PromptLibrary([tmp_path])


def make_jury(make_engine, server, prompts: PromptLibrary, **settings) -> Jury:
    engine = make_engine(judge_output="text", **settings)
    engine.settings.roles["judge"] = JurySpec.parse(f"openai:judge;base_url={server.base_url}")
    return Jury(engine, engine.settings, prompts, PriceTable.load())


def compare(make_engine, server, prompts: PromptLibrary, **settings):
    jury = make_jury(make_engine, server, prompts, **settings)
    return jury.engine.run(pairwise(jury, "custom", "Lione", "Parigi", template="core/compare.j2", orders=["ab"]))


def english_words(text: str, labels: set[str]) -> set[str]:
    return {w for w in re.findall(r"[A-Za-z][A-Za-z']*", text) if w.lower() in ENGLISH and w not in labels}


@pytest.mark.parametrize("cause", ["no_decision", "ambiguous"])
@pytest.mark.parametrize("language", ["ko", "it"])
def test_a_repair_asks_in_the_templates_language_with_no_english_beyond_the_option_labels(
        make_engine, tmp_path, language, cause):
    def reply(body, index):
        return "### B" if len(body["messages"]) > 1 else UNREAD[cause]

    with FakeOpenAI(reply) as server:
        judged = compare(make_engine, server, library(tmp_path, language))
    (run,) = judged.runs
    assert run.winner == "b" and run.repaired
    ask = server.requests[-1]["messages"][-1]["content"]
    assert english_words(ask, LABELS[language]) == set(), ask
    assert CAUSE_WORDS[language, cause] in ask, ask


def test_the_format_of_a_template_that_declares_none_is_joined_in_its_language(make_engine, tmp_path):
    with FakeOpenAI(lambda body, i: "### B" if len(body["messages"]) > 1 else "Hmm.") as server:
        compare(make_engine, server, library(tmp_path, "it"))
    assert "### A\noppure\n### B\noppure\n### tie" in server.requests[-1]["messages"][-1]["content"]


def test_a_korean_template_asks_its_json_repair_in_korean_without_a_declaration(make_engine):
    """qa_quality's bundled judge prompt is Korean: its repair is too, whatever the answer's language."""
    from llmjury.families.qa_quality.evaluation import QualityEvaluation

    with FakeOpenAI(lambda body, i: "I would rate it well overall.") as server:
        jury = make_jury(make_engine, server, PromptLibrary())
        prompt = jury.render("qa_quality/judge.j2", qa="Q: 비밀번호는?\nA: 링크를 누르세요.")
        runs = jury.engine.run(structured(jury, "qa_quality", prompt, QualityEvaluation, retries=1))
    (answer,) = runs.answers
    assert answer.repaired and answer.cause == "no_decision"
    ask = server.requests[-1]["messages"][-1]["content"]
    fields = set(QualityEvaluation.model_fields) | {"JSON"}
    assert re.search(r"[\uac00-\ud7a3]", ask) and english_words(ask, fields) == set(), ask
    # the whole object is asked again, so it gets the asking request's room, not a repair's 60 tokens
    assert server.requests[-1]["max_tokens"] == server.requests[0]["max_tokens"] == 600


@pytest.mark.parametrize(("text", "language"), [
    ("Compare the two responses. A Korean user may write 선생님 or 답변.", "en"),
    ("두 응답을 비교하세요. JSON으로 답하세요.", "ko"),
    ("Confronta le due risposte e scegli la migliore: non è difficile.", "it"),
])
def test_a_templates_language_is_told_from_its_own_text(tmp_path, text, language):
    (tmp_path / "t.j2").write_text(text, encoding="utf-8")
    assert PromptLibrary([tmp_path]).language("t.j2") == language


def test_a_declared_language_wins_over_the_templates_text(tmp_path):
    (tmp_path / "t.j2").write_text("Compare the two responses.", encoding="utf-8")
    (tmp_path / "reading.toml").write_text('["t.j2"]\nlanguage = "it"', encoding="utf-8")
    assert PromptLibrary([tmp_path]).language("t.j2") == "it"


def test_an_english_template_asks_its_repair_in_english_whatever_the_answer_says(make_engine):
    def reply(body, index):
        return "### B" if len(body["messages"]) > 1 else "둘 다 장점이 있습니다."

    with FakeOpenAI(reply) as server:
        jury = make_jury(make_engine, server, PromptLibrary())
        jury.engine.run(pairwise(jury, "custom", "Lyon", "Paris", template="core/compare.j2", orders=["ab"],
                                 variables={"criteria": "correct", "question": "Capital of France?"}))
    ask = server.requests[-1]["messages"][-1]["content"]
    assert ask.startswith("Your answer above") and "### A\nor\n### B\nor\n### tie" in ask


REPAIR_ROOM = 60  # core/repair.j2's max_tokens (prompts/generation.toml)


def cut_repair(whole_at: int | None):
    """A first answer with no decision; a repair answer cut off below `whole_at` tokens of room."""
    def reply(body, index):
        if len(body["messages"]) == 1:
            return "Both have merits."
        if whole_at is not None and body["max_tokens"] >= whole_at:
            return "### B"
        return FakeChoice("### A\nthough on reflection", finish_reason="length")
    return reply


def compare_in_english(make_engine, server):
    jury = make_jury(make_engine, server, PromptLibrary())
    return jury.engine.run(pairwise(jury, "custom", "Lyon", "Paris", template="core/compare.j2", orders=["ab"],
                                    variables={"criteria": "correct", "question": "Capital of France?"}))


def test_a_cut_off_repair_answer_is_asked_again_once_with_twice_the_room_and_read(make_engine):
    with FakeOpenAI(cut_repair(whole_at=2 * REPAIR_ROOM)) as server:
        judged = compare_in_english(make_engine, server)
    assert [len(b["messages"]) for b in server.requests] == [1, 3, 3]
    assert [b["max_tokens"] for b in server.requests[1:]] == [REPAIR_ROOM, 2 * REPAIR_ROOM]
    (run,) = judged.runs
    assert run.winner == "b" and run.repaired  # never the interim "### A" of the cut repair answer
    assert any("though on reflection" in text for text in judged.answers.raw)  # the cut answer is kept


def test_a_repair_answer_cut_off_again_is_unscored_truncated(make_engine):
    with FakeOpenAI(cut_repair(whole_at=None)) as server:
        judged = compare_in_english(make_engine, server)
    assert [b["max_tokens"] for b in server.requests[1:]] == [REPAIR_ROOM, 2 * REPAIR_ROOM]
    (run,) = judged.runs
    assert run.winner is None and run.repaired and run.cause == "truncated"
    assert "cut off" in run.error
    assert judged.answers.repair_failed == 1


def test_a_declared_format_is_the_one_a_readers_cause_names():
    from llmjury.asked import Asked
    from llmjury.errors import JudgeParseError
    from llmjury.judgement.judges import CHOICE
    from llmjury.reading.declaration import Declaration

    reader = CHOICE.declared(Declaration(asked=Asked(alternatives=("### 가", "### 나"))))
    with pytest.raises(JudgeParseError, match=r"no decision in the prompt's format \(### 가 \.\.\.\)"):
        reader.read("Both have merits.")


def test_a_templates_language_is_read_once_however_many_repairs_ask_it(tmp_path, monkeypatch):
    (tmp_path / "t.j2").write_text("두 응답을 비교하세요.", encoding="utf-8")
    library = PromptLibrary([tmp_path])
    reads = []
    source = library.source
    monkeypatch.setattr(library, "source", lambda name: reads.append(name) or source(name))
    assert [library.language("t.j2") for _ in range(3)] == ["ko"] * 3 and reads == ["t.j2"]
    assert library.language("missing.j2") is None and library.language("missing.j2") is None
