"""No text a judge only mentions decides: every parser over the shipped adversarial corpus, the same
answers end to end through a fake OpenAI-compatible server (repair calls included), generated
mentions around a true decision, and small-model G-Eval answers through both scoring paths.

The corpus and its end-to-end run are `adversarial_corpus`'s, shared with `bench/adversarial.py`,
which prints the per-family counts."""

from __future__ import annotations

import math

import pytest
from adversarial_corpus import FIELDS, PARSERS, REPAIR_ASK, ROWS, parsed, run_corpus
from hypothesis import given, settings
from hypothesis import strategies as st

from llmjury.errors import JudgeParseError
from llmjury.families.socratic.decision import parse_decision
from llmjury.judgement.geval_scoring import parse_score
from llmjury.jurors import JurySpec
from llmjury.reading.quotes import unquoted
from llmjury.testing import FakeOpenAI
from llmjury.testing.fake_openai import ServerBehaviour

CLASSES = {"control", "extra_words", "lookalike", "scale_echo", "number_punctuation", "duplicate_key",
           "blockquote_before", "rubric_anchors", "no_decision"}
QUOTE_STYLES = {"double", "double_multiline", "curly", "single", "single_apostrophe", "guillemets", "angle_single",
                "low_high", "inline_code", "html_q", "fenced", "blockquote", "html_blockquote", "table"}


def test_the_corpus_covers_every_parser_and_class():
    assert len(ROWS) >= 150
    assert {row["parser"] for row in ROWS} == set(PARSERS)
    classes = {row["class"] for row in ROWS}
    assert classes >= CLASSES
    assert {f"mention_{style}" for style in QUOTE_STYLES | {"none", "none_line"}} <= classes
    # every row says what the judge decided and what the parser must read (the same, or unscored)
    assert all(row["expected"] in (None, row["truth"]) for row in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[f"{i}-{r['parser']}-{r['class']}" for i, r in enumerate(ROWS)])
def test_no_mentioned_verdict_decides(row):
    assert parsed(row["parser"], row["text"]) == row["expected"], row["note"]


def test_a_block_quote_blanks_only_its_own_line():
    text = "> Teacher A said: hi\n\nTeacher B is better.\n### (b)"
    assert unquoted(text).endswith("\n\nTeacher B is better.\n### (b)")
    assert parse_decision(text) == "b"


def test_a_full_stop_after_the_score_is_read():
    assert parse_score("Score: 4.", range(1, 6)) == 4


# -- end to end: the fake server answers each row, and a repair call with the judge's real decision --
@pytest.mark.parametrize("parser", sorted(PARSERS))
def test_end_to_end_no_flip_and_no_lost_clear_decision(make_engine, parser):
    counts, wrong = run_corpus(make_engine, parser)
    assert counts["flips"] == 0 and counts["wrongly_scored"] == 0 and counts["lost"] == 0 and not wrong, wrong
    # every row whose judge decided is read, directly or after the repair call asking for the decision alone
    assert counts["unscored"] == sum(1 for r in ROWS if r["parser"] == parser and r["truth"] is None)


@pytest.mark.parametrize("parser", sorted(FIELDS))
def test_end_to_end_in_schema_mode_free_text_reads_as_in_text_mode(make_engine, parser):
    """A server that ignores the schema and answers the corpus's free text: the same decisions."""
    counts, wrong = run_corpus(make_engine, parser, schema=True)
    assert counts["flips"] == 0 and counts["wrongly_scored"] == 0 and counts["lost"] == 0 and not wrong, wrong
    assert counts["unscored"] == sum(1 for r in ROWS if r["parser"] == parser and r["truth"] is None)


@pytest.mark.parametrize("parser", sorted(FIELDS))
def test_schema_answers_read_the_field_whatever_their_reasoning_mentions(make_engine, parser):
    """Every adversarial text as the reasoning of a schema answer: the decision field alone decides."""
    counts, wrong = run_corpus(make_engine, parser, schema=True, as_field=True)
    assert counts["kept"] == counts["entries"] and counts["repaired"] == 0 and not wrong, wrong
    assert counts["entries"] == sum(1 for r in ROWS if r["parser"] == parser and r["truth"] is not None)


# -- generated mentions around a true decision --------------------------------------------------------
DECISIONS = {
    "socratic": ({"a": "### (a) Teacher A", "b": "### (b)", "c": "### (c) Equivalent"}, "### ({})"),
    "core_choice": ({"a": "### A", "b": "### B", "tie": "### tie"}, "### {}"),
    "mtbench_pair": ({"model_a": "So: [[A]]", "model_b": "[[B]]", "tie": "Final verdict: [[C]]"}, "[[{}]]"),
    "geval": ({1: "Coherence: 1", 3: "3", 5: "- Coherence (1-5): 5"}, "Coherence: {}"),
    # the arena's score lines come first, so there the mentions follow the decision
    "arena_scores": ({"model_a": "- Score of Model 1: 1\n- Score of Model 2: 0",
                      "model_b": "Score of Model 1: 0\nScore of Model 2: 1",
                      "tie": "- **Score of Model 1:** 1\n- **Score of Model 2:** 1"}, "Score of Model {}: 1"),
}
FAKES = {"socratic": "abc", "core_choice": ["A", "B", "tie"], "mtbench_pair": "ABC", "geval": "12345",
         "arena_scores": "12"}
WRAPS = {
    "double": '"{}"', "curly": "“{}”", "single": "'{}'", "guillemets": "«{}»", "inline_code": "`{}`",
    "double_multiline": '"Great question!\n{}"', "fenced": "```\n{}\n```", "blockquote": "> {}",
    "html_blockquote": "<blockquote>{}</blockquote>", "table": "| answer | {} |", "html_q": "<q>{}</q>",
}

BLOCK_WRAPS = {"fenced", "blockquote", "table"}


@st.composite
def mentioned(draw, quoted_only: bool):
    parser = draw(st.sampled_from(sorted(DECISIONS)))
    lines, fake_format = DECISIONS[parser]
    truth = draw(st.sampled_from(sorted(lines, key=str)))
    paragraphs = []
    for _ in range(draw(st.integers(0, 4))):
        fake = fake_format.format(draw(st.sampled_from(list(FAKES[parser]))))
        wraps = sorted(WRAPS) if quoted_only else [*sorted(WRAPS), "none"]
        style = draw(st.sampled_from(wraps))
        lead = draw(st.sampled_from(["", "The other answer says ", "Note: "]))
        if style in BLOCK_WRAPS:  # a block starts a line of its own
            paragraphs.append(lead.rstrip() + "\n" + WRAPS[style].format(fake))
        else:
            tail = draw(st.sampled_from(["", ".", " to steer me."]))
            paragraphs.append(lead + WRAPS.get(style, "{}").format(fake) + tail)
    own_place = 0 if parser == "arena_scores" else len(paragraphs)
    decision_at = own_place if quoted_only else draw(st.integers(0, len(paragraphs)))
    paragraphs.insert(decision_at, lines[truth])
    return parser, truth, "\n\n".join(paragraphs)


@settings(max_examples=300, deadline=None)
@given(mentioned(quoted_only=True))
def test_quoted_mentions_beside_the_decision_never_change_it(case):
    parser, truth, text = case
    assert parsed(parser, text) == truth


@settings(max_examples=300, deadline=None)
@given(mentioned(quoted_only=False))
def test_mentions_anywhere_in_any_style_never_give_another_decision(case):
    parser, truth, text = case
    assert parsed(parser, text) in (truth, None)


# -- small-model G-Eval answers through both scoring paths ----------------------------------------------
ANCHORS = ("- A score of 1 (no) means that the response drastically changes topic or ignores the history.\n"
           "- A score of 2 (somewhat) means the response refers to the history in a limited capacity.\n"
           "- A score of 3 (yes) means the response is on topic and strongly acknowledges the history.")
SMOL = [  # (answer, the score it holds or None)
    (f"{ANCHORS}\n\nCoherence: 2", 2),
    (f"{ANCHORS}\n2", 2),
    (ANCHORS, None),
    ("Coherence (1-3): Does the response serve as a valid continuation of the conversation history?", None),
    ("The response is rated on a scale of 1-3.\n\n- Coherence (1-3): 3", 3),
    ("- Coherence (1-", None),
    (f"Coherence: 3\n{ANCHORS}", None),
]


def marked_logprobs(text: str, at: int):
    """Digit-by-digit logprobs where only the digit at offset `at` has alternatives (0.75 itself,
    0.25 one below), so a score weighted at any other digit comes out whole."""
    from llmjury.testing.fake_openai import tokens

    steps, offset = [], 0
    for token in tokens(text, digit_tokens=True):
        alternatives = [(token, 0.0)]
        if offset == at:
            alternatives = [(token, math.log(0.75)), (str(int(token) - 1), math.log(0.25))]
        steps.append((token, alternatives[0][1], alternatives))
        offset += len(token)
    return steps


@pytest.mark.parametrize(("text", "score"), SMOL, ids=[f"smol-{i}" for i in range(len(SMOL))])
def test_copied_rubric_anchors_are_never_the_score_sampling_or_logprobs(make_engine, text, score):
    from llmjury.judgement.judges import geval_score
    from llmjury.judgement.jury import Jury
    from llmjury.pricing import PriceTable
    from llmjury.prompts import PromptLibrary
    from llmjury.testing.fake_server import FakeChoice

    def reply(body, index):
        if body["messages"][-1]["content"].startswith(REPAIR_ASK):
            return "I cannot say."  # a small model that cannot repair either
        at = text.rfind(str(score)) if score is not None else -1
        return FakeChoice(text, logprobs=marked_logprobs(text, at) if body.get("logprobs") else None)

    with FakeOpenAI(reply, behaviour=ServerBehaviour(digit_tokens=True, logprobs_need_top=True)) as server:
        engine = make_engine()
        engine.settings.roles["judge"] = JurySpec.parse(f"openai:judge;base_url={server.base_url}")
        jury = Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())
        prompt = jury.render("core/geval.j2", criterion="Coherence (1-3)", steps="1. Read.", context="",
                             text="Sure, tell me more.", form="Coherence", low=1, high=3)
        by_logprobs = engine.run(geval_score(jury, "custom", prompt, range(1, 4), scoring="logprobs"))
        by_sampling = engine.run(geval_score(jury, "custom", prompt, range(1, 4), scoring="sampling", n=2))
    if score is None:
        assert by_logprobs.result is None and by_sampling.result is None
        assert by_logprobs.error.startswith("unparseable: ")
        assert by_sampling.error.startswith("unparseable")
    else:
        assert by_logprobs.result.score == pytest.approx(score - 0.25)  # weighted at the score's own token
        assert by_sampling.result.score == score


# -- the repair call ---------------------------------------------------------------------------------
def test_an_ambiguous_answer_gets_one_cached_repair_asking_for_the_decision_alone(make_engine):
    from llmjury.judgement.judges import pairwise
    from llmjury.judgement.jury import Jury
    from llmjury.pricing import PriceTable
    from llmjury.prompts import PromptLibrary

    def reply(body, index):
        if body["messages"][-1]["content"].startswith(REPAIR_ASK):
            return "### B"
        return "B is right.\n### B\n\nResponse A ends with ### A."

    variables = {"criteria": "correct", "question": "Capital of France?"}
    requests = []
    for _ in range(2):  # the second run reads both calls from the cache
        with FakeOpenAI(reply) as server:
            engine = make_engine()
            engine.settings.roles["judge"] = JurySpec.parse(f"openai:judge;base_url={server.base_url}")
            jury = Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())
            judged = engine.run(pairwise(jury, "custom", "Lyon.", "Paris.", template="core/compare.j2",
                                         orders=["ab"], variables=variables))
            requests.append(list(server.requests))
    (run,) = judged.runs
    assert run.winner == "b" and run.repaired and run.attempts == 2
    assert judged.answers.raw[-1] == "### B" and len(judged.answers.raw) == 2
    _, repair = requests[0]
    assert [m["role"] for m in repair["messages"]] == ["user", "assistant", "user"]
    assert "### A\nor\n### B\nor\n### tie" in repair["messages"][-1]["content"]
    assert requests[1] == []


def test_at_temperature_0_an_answer_without_a_repair_format_is_not_asked_again(make_engine):
    from llmjury.judgement.judging import ask_judge
    from llmjury.judgement.jury import Jury
    from llmjury.pricing import PriceTable
    from llmjury.prompts import PromptLibrary

    def unreadable(text: str) -> str:
        raise JudgeParseError("custom/1", text, "no decision")

    with FakeOpenAI(lambda body, index: "no decision here") as server:
        engine = make_engine()
        engine.settings.roles["judge"] = JurySpec.parse(f"openai:judge;base_url={server.base_url}")
        jury = Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())
        greedy = jury.request(jury.render("core/compare.j2", response_a="a", response_b="b", criteria="c",
                                          question=""), temperature=0.0)
        runs = engine.run(ask_judge(jury, "custom", [greedy], unreadable))
        assert len(server.requests) == 1
    assert "not asked again: at temperature 0" in runs.answers[0].error


@pytest.mark.parametrize("text, score", [
    ("- Coherence - is the reply coherent with the question? (1-5): 3", 3),  # the prompt's own form line
    ("Coherence?: 4", 4),
    ("Coherence - short: 2", 2),
])
def test_a_form_label_with_punctuation_is_a_label(text, score):
    """A criterion with `?` or ` - ` in it made the form's own line unreadable (lost decisions)."""
    assert parse_score(text, range(1, 6)) == score


def test_a_score_line_under_a_punctuated_label_before_the_final_number_is_ambiguous():
    """It was not seen as a score line, so the trailing `1` was read as the score."""
    with pytest.raises(JudgeParseError, match="that decides otherwise before the decision") as raised:
        parse_score("Coherence - is the reply coherent with the question?: 5\n\n1", range(1, 6))
    assert raised.value.kind == "ambiguous"
