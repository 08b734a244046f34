"""The readers over a corpus of judge answers in every shape and three languages, and over the
published judge outputs the suite ships, each compared with the publishing project's own parser.

The corpus (`tests/reading/corpus.jsonl`, loaded by `reading_corpus`) is data: each answer with the
judge's clear decision, or none and why. Targets: no flipped decision, no score where the judge
decided nothing, at most 3% of clear decisions lost, and each unscored answer with its cause.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reading_corpus import OUTCOMES, SHAPES, counts, load, outcome, read

from llmjury.errors import JudgeParseError
from llmjury.families.arena.llmbar import parse_output_choice
from llmjury.families.socratic.decision import parse_decision
from llmjury.judgement.geval_scoring import parse_score
from llmjury.judgement.judges import parse_choice

ROWS = load()
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_the_corpus_covers_every_shape_in_three_languages():
    assert len(ROWS) >= 300
    assert {row["language"] for row in ROWS} >= {"en", "ko", "it"}
    assert set(SHAPES.values()) == {SHAPES[row["reader"]] for row in ROWS}
    for language in ("ko", "it"):  # every shape is read in the users' languages too
        assert {SHAPES[r["reader"]] for r in ROWS if r["language"] == language} == set(SHAPES.values())
    assert all(row["cause"] for row in ROWS if row["truth"] is None)


def test_no_flip_no_invented_score_and_few_clear_decisions_lost():
    totals = sum(counts(ROWS).values(), Counter())
    assert totals["flipped"] == 0 and totals["wrongly_scored"] == 0
    clear = sum(1 for row in ROWS if row["truth"] is not None)
    assert totals["lost"] <= 0.03 * clear
    assert sum(totals[o] for o in OUTCOMES) == len(ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[f"{i}-{r['reader']}-{r['language']}" for i, r in enumerate(ROWS)])
def test_each_answer_is_read_as_its_truth_or_unscored_with_its_cause(row):
    value, kind = read(row)
    assert outcome(row, value) in ("correct", "correctly_unscored", "lost"), row["note"]
    if row["truth"] is None:
        assert kind == row["cause"], row["note"]


@pytest.mark.parametrize("language", ["en", "ko", "it"])
def test_an_unscored_answer_names_its_language_for_the_repair_call(language):
    unscored = [r for r in ROWS if r["language"] == language and r["truth"] is None and r["reader"] == "socratic"]
    for row in unscored:
        with pytest.raises(JudgeParseError) as raised:
            parse_decision(row["text"])
        assert raised.value.language == language, row["note"]


# -- published judge outputs, against the publishing project's own parser ----------------------------
_LLMBAR = re.compile(r"(?:^|\n) ?Output \((a|b)\)")  # LLMBar's config: the verdict regex


def llmbar_reference(text: str) -> str | None:
    """LLMBar's own reading: the first `Output (a|b)` at a line's start."""
    match = _LLMBAR.search(text)
    return None if match is None else {"a": "model_a", "b": "model_b"}[match.group(1)]


def llmbar_completions() -> list[str]:
    texts = []
    for path in sorted((FIXTURES / "llmbar" / "judges").rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            texts += [item["completion"], item["completion_swapped"]]
    return texts


def test_llmbar_judge_outputs_are_read_as_llmbar_reads_them():
    texts = llmbar_completions()
    assert len(texts) > 6000  # GPT-4, ChatGPT and LLaMA-2 verdicts, both orders
    ours = []
    for text in texts:
        try:
            ours.append(parse_output_choice(text))
        except JudgeParseError:
            ours.append(None)
    theirs = [llmbar_reference(t) for t in texts]
    read_by_them = [i for i, v in enumerate(theirs) if v is not None]
    assert all(ours[i] == theirs[i] for i in read_by_them)  # at least as often, the same values
    assert sum(v is not None for v in ours) == len(read_by_them)


def closer_look_reference(text: str) -> float:
    """Chiang & Lee's parser (their all_eval.py as the dataset's notes describe it): lower-case,
    newlines to spaces, "1-3" removed, the text after the last "rating:", then the first
    `[a-z]*:?-? ?[0-9]\\.?[0-9]?`, its letters, colon and dash removed, read as a float; no number is 0."""
    text = text.lower().replace("\n", " ").replace("1-3", " ")
    if "rating:" in text:
        text = text.split("rating:")[-1]
    match = re.search(r"[a-z]*:?-? ?[0-9]\.?[0-9]?", text)
    if match is not None:
        text = re.sub(r"[a-z]*:?-? *", " ", match.group(0)).strip()
    number = re.match(r"^ ?([\d\.]+)", text)
    try:
        value = float(number.group(1)) if number else 0.0
    except ValueError:
        value = 0.0
    return math.nan if value < 0 else value


SCALES = {"coh": range(1, 4), "eng": range(1, 4), "nat": range(1, 4), "gro": range(0, 2)}


def closer_look_answers() -> list[tuple[str, str]]:
    return [(dim, text) for dim in SCALES
            for item in json.loads((FIXTURES / "closer_look_sample" / f"gpt3.5_{dim}_geval.json").read_text())
            for text in item["all_responses"]]


def test_closer_look_gpt35_answers_are_read_as_the_paper_reads_them():
    """Every answer the paper reads as a number on the scale asked, ours reads too, with the same
    value except where the paper's substitution misreads: a numbered form line, where it reads the
    item's number ("1. Engagingness: 2" is 1 to it) and ours the score; and a fraction, which it cuts
    to its whole part ("2.5" is 2 to it) and ours reads as it is."""
    answers = closer_look_answers()
    assert len(answers) >= 4000
    differ, read_by_them, read_by_both = [], 0, 0
    for dim, text in answers:
        scale = SCALES[dim]
        theirs = closer_look_reference(text)
        if not scale.start <= theirs <= scale.stop - 1:
            continue
        read_by_them += 1
        try:
            ours: float | None = parse_score(text, scale)
        except JudgeParseError:
            ours = None
        read_by_both += ours is not None
        if ours != theirs:
            differ.append((text, theirs, ours))
    assert read_by_them > 4000 and read_by_both == read_by_them  # at least as often
    numbered = [(text, ours) for text, _, ours in differ if re.fullmatch(r"\d\. [A-Z][a-z]+: \d", text)]
    fractions = [(text, ours) for text, _, ours in differ if re.fullmatch(r"\d\.\d", text)]
    assert len(numbered) + len(fractions) == len(differ), differ
    assert numbered and all(ours == int(text[-1]) for text, ours in numbered)
    assert fractions and all(ours == float(text) for text, ours in fractions)
    assert len(differ) < 0.01 * read_by_them


def test_dep_gpt_labels_are_read_as_the_curators_scored_them():
    """DEP's recorded ChatGPT answers are a rating in words ("Very good"); its curators' own numeric
    column is the reference wherever they filled it."""
    import csv

    from llmjury.families.geval.dep import parse_label

    with (FIXTURES / "dep" / "dstc9_dep_step2_eval.csv").open(encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["openai_score"]]
    assert len(rows) > 1700
    assert all(parse_label(r["openai_response"]) == float(r["openai_score"]) for r in rows)


# -- generated answers: the class, not the examples --------------------------------------------------

NAMES = {"en": {"a": "Teacher A", "b": "Teacher B"}, "ko": {"a": "선생님 A", "b": "선생님 B"},
         "it": {"a": "Insegnante A", "b": "Insegnante B"}}
NEUTRAL = {"en": ["Both teachers are polite.", "The student is stuck on the second step.", "I hope this helps."],
           "ko": ["두 선생님 모두 공손합니다.", "학생은 두 번째 단계에서 막혔습니다."],
           "it": ["Entrambi gli insegnanti sono cortesi.", "Lo studente è bloccato al secondo passo."]}
SUPPORT = {"en": "Overall, {name} is better.", "ko": "종합하면 {name}가 더 낫습니다.",
           "it": "Nel complesso, {name} è migliore."}
LINES = {"en": ["### ({l}) {name}", "### ({l})", "### Final decision: ({l}) {name}", "**### ({l}) {name}**",
                "### ({l}) {name}.", "Final decision: ({l}) {name}"],
         "ko": ["### ({l}) {name}", "### 최종 결정: ({l}) {name}", "### ({l}) {name}입니다."],
         "it": ["### ({l}) {name}", "### Decisione finale: ({l}) {name}", "### ({l}) {name}."]}
SPACES = ["", "\u200b", "\u00a0", " "]


@st.composite
def answers(draw, planted: bool):
    language = draw(st.sampled_from(sorted(NAMES)))
    truth = draw(st.sampled_from("ab"))
    other = "b" if truth == "a" else "a"
    name = NAMES[language][truth]
    before = draw(st.lists(st.sampled_from(NEUTRAL[language]), max_size=3))
    if draw(st.booleans()):
        before.append(SUPPORT[language].format(name=name))
    line = draw(st.sampled_from(LINES[language])).format(l=truth, name=name) + draw(st.sampled_from(SPACES))
    after = draw(st.lists(st.sampled_from(NEUTRAL[language]), max_size=2))
    if planted:  # a decision for the other option, unquoted, somewhere after the judge's own
        fake = draw(st.sampled_from([f"### ({other})", SUPPORT[language].format(name=NAMES[language][other]),
                                     f"Final decision: ({other}) {NAMES[language][other]}"]))
        after.insert(draw(st.integers(0, len(after))), fake)
    return truth, "\n\n".join([*before, line, *after])


@settings(max_examples=300, deadline=None)
@given(answers(planted=False))
def test_a_clear_decision_in_any_language_and_spelling_is_read(case):
    truth, text = case
    assert parse_decision(text) == truth


@settings(max_examples=300, deadline=None)
@given(answers(planted=True))
def test_a_competing_decision_after_the_judges_own_is_never_read_as_it(case):
    truth, text = case
    try:
        read_value = parse_decision(text)
    except JudgeParseError:
        return
    assert read_value == truth


RATING_LINES = {"en": ["Coherence: {v}", "- Coherence (1-5): {v}", "Score: {v}.", "**{v}**", "Score: {v} (fair)",
                       "{v}/5", "Coherence: {v} out of 5", "Rating: [[{v}]]"],
                "ko": ["일관성: {v}", "점수: {v}점", "5점 만점에 {v}점"],
                "it": ["Coerenza: {v}", "Punteggio: {v} su 5", "Voto: {v}."]}
RATING_NOTES = {"en": ["The reply follows the history.", "- A score of 1 (no) means the reply ignores the history."],
                "ko": ["응답은 대화의 흐름을 잘 따릅니다."], "it": ["La risposta segue la conversazione."]}


@st.composite
def ratings(draw, planted: bool):
    language = draw(st.sampled_from(sorted(RATING_LINES)))
    truth = draw(st.integers(1, 5))
    line = draw(st.sampled_from(RATING_LINES[language])).format(v=truth) + draw(st.sampled_from(SPACES))
    before = draw(st.lists(st.sampled_from(RATING_NOTES[language]), max_size=2))
    after = draw(st.lists(st.sampled_from(RATING_NOTES[language][:1]), max_size=1))
    if planted:
        fake = draw(st.integers(1, 5).filter(lambda v: v != truth))
        after.append(draw(st.sampled_from(RATING_LINES[language])).format(v=fake))
    return truth, "\n\n".join([*before, line, *after])


@settings(max_examples=300, deadline=None)
@given(ratings(planted=False))
def test_a_clear_score_in_any_language_and_spelling_is_read(case):
    truth, text = case
    assert parse_score(text, range(1, 6)) == truth


@settings(max_examples=300, deadline=None)
@given(ratings(planted=True))
def test_a_different_score_after_the_judges_own_makes_it_ambiguous(case):
    _, text = case
    with pytest.raises(JudgeParseError) as raised:
        parse_score(text, range(1, 6))
    assert raised.value.kind == "ambiguous"


# -- a decision taken back after it is never read as it ------------------------------------------------
#: Answers a user trial wrote whose first decision was read although the judge then revised it in prose
#: (each was read as the first decision before): they are ambiguous now, asked again by the repair call.
TAKEN_BACK = [
    ("### A\n\nWait, on reflection, B is actually better, since A gets the date wrong. Final answer: B", "a"),
    ("### B\n\nEdit: after re-reading, A is actually the better one; B misstates the year.", "b"),
    ("### B\n\nA is actually better.", "b"),
    ("### B\n\nHmm, no, A.", "b"),
    ("### B\n\nScratch that: A.", "b"),
    ("### A is worse", "a"),
    ("### A is the weaker one", "a"),
    ("### A loses", "a"),
    ("### Risposta A è peggiore", "a"),
    ("Neither is better.\n\n### B", "b"),
    ("### B\n\nNo, meglio la A.", "b"),
    ("### B\n\nA, actually.", "b"),
    ("### B\n\nA would be the better pick.", "b"),
]
SCORE_TAKEN_BACK = [
    ("Coherence: 4\n\nActually, on reflection, 3 is fairer.", 4),
    ("Coherence: 4\n\nOn second thought, 3.", 4),
    ("Coherence: 4\n\n3 is fairer.", 4),
    ("Coherence: 4\n\nNo, 2.", 4),
    ("Coherence: 4\n\nChanging to 3.", 4),
    ("Coherence: 5\n\nWell, more like a 3.", 5),
    ("Coherence: 2\n\nIt deserves a 4, really.", 2),
    ("Coerenza: 4\n\nAnzi, 3.", 4),
    ("일관성: 4\n\n아니, 3점.", 4),
]
#: The same shapes with prose that takes nothing back: still read.
NOT_TAKEN_BACK = [
    ("### B\n\nResponse A gets the city wrong.", "b"),
    ("### B\n\nNo, A does not answer the question.", "b"),
    ("### A\n\nB loses points for the wrong year.", "a"),
    ("### B\n\nA is actually quite good, but B is more accurate.", "b"),
    ("### B is better than A", "b"),
    ("I would not choose A.\n\n### B", "b"),
    ("I wouldn't pick A.\n\n### B", "b"),
    ("### B\n\nA would be better if it cited a source.", "b"),
]
SCORE_NOT_TAKEN_BACK = [
    ("4\n\n(I considered 3 but the ending is fine.)", 4),
    ("Coherence: 4\n\nThe answer has 3 paragraphs.", 4),
    ("Coherence: 4\n\n1. The flow is good.\n2. The ending is abrupt.", 4),
    ("Coherence: 4\n\nStep 2 is weak.", 4),
    ("Coherence: 4\n\n2 of the sentences are unclear.", 4),
    ("Coherence: 3\n\nThe summary covers 3/4 of the events.", 3),
    ("Punteggio: 4\n\nCi sono 2 errori minori.", 4),
    ("Coherence: 4\n\nIt covers 3 points.", 4),
]


@pytest.mark.parametrize(("text", "first"), TAKEN_BACK)
def test_a_choice_taken_back_after_its_line_is_ambiguous(text, first):
    with pytest.raises(JudgeParseError) as raised:
        parse_choice(text)
    assert raised.value.kind == "ambiguous", first


@pytest.mark.parametrize(("text", "first"), SCORE_TAKEN_BACK)
def test_a_score_taken_back_in_prose_after_its_line_is_ambiguous(text, first):
    with pytest.raises(JudgeParseError) as raised:
        parse_score(text, range(1, 6))
    assert raised.value.kind == "ambiguous", first


@pytest.mark.parametrize(("text", "truth"), NOT_TAKEN_BACK)
def test_commentary_that_takes_nothing_back_leaves_the_choice_read(text, truth):
    assert parse_choice(text) == truth


@pytest.mark.parametrize(("text", "truth"), SCORE_NOT_TAKEN_BACK)
def test_numbers_that_are_no_score_leave_the_score_read(text, truth):
    assert parse_score(text, range(1, 6)) == truth
