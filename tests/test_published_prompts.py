"""The judge prompts whose answers the decision parsers read, rendered and snapshotted whole, so a
change to a published prompt (a seed's, MT-Bench's, G-Eval's) or to llmjury's own judge prompts
shows up in review: reading a decision strictly must not have changed what the judge was asked."""

from __future__ import annotations

import pytest

from llmjury.asked import Asked
from llmjury.prompts import PromptLibrary

HISTORY = "[Student]: Why is quicksort slow sometimes?\n[Teacher]: What happens with a sorted input?"
STEPS = "1. Read the dialogue.\n2. Rate the response."
JUDGE_PROMPTS = {
    "arena/judge.j2": dict(question="What is 2+2?", answer_a="4", answer_b="Five."),
    "arena/mtbench_pair_v2.j2": dict(question="What is 2+2?", answer_a="4", answer_b="Five."),
    "arena/mtbench_pair_v2_system.j2": {},
    "socratic/judge_aspect.j2": dict(dialogue_history=HISTORY, teacher_a_response="Why might a pivot matter?",
                                     teacher_b_response="Use random pivots.", aspect="Understanding"),
    "geval/dialogue.j2": dict(task="dialogue", criterion="coherence", steps=STEPS,
                              dialogue="A: hi\nB: hello", form="Coherence"),
    "geval/response.j2": dict(task="response", criterion="groundedness", steps=STEPS, dialogue="A: hi",
                              response="hello", fact="Greetings are polite.", form="Groundedness (0-1)"),
    "qa_quality/judge.j2": dict(qa="Q: How do I reset my password?\nA: Use the link on the login page."),
    "core/compare.j2": dict(criteria="correct", question="What is 2+2?", response_a="4", response_b="Five."),
    "core/score.j2": dict(response="4", rubric="correct", question="What is 2+2?", low=1, high=5,
                          fields="- reasoning: string\n- score: integer"),
    "core/geval.j2": dict(criterion="Coherence", steps=STEPS, context="", text="hello", form="Coherence", low=1,
                          high=5),
    "core/repair.j2": dict(kind="no_decision", cause="no final decision",
                           asked=Asked(alternatives=("### A", "### B", "### tie"))),
}


@pytest.mark.parametrize("template", sorted(JUDGE_PROMPTS))
def test_a_judge_prompt_renders_as_published(template, snapshot):
    rendered = PromptLibrary().render(template, **JUDGE_PROMPTS[template])
    assert rendered.text == snapshot
