"""A team's own eval: a chatbot behind an HTTP service (`--llm-role candidate=http:URL`) answers
arithmetic questions; each answer is checked against the reference."""

import re

import llmjury
from llmjury import Case


class Question(Case):
    question: str
    reference: str


CASES = [Question(id=f"q{i:02d}", family="chatbot", question=f"What is {i} + {i}?", reference=str(2 * i))
         for i in range(20)]


@llmjury.parametrize(CASES)
async def test_answer(case, jury):
    answer = await jury.ask("candidate", case.question)
    assert case.reference in re.findall(r"-?\d+", answer), f"expected {case.reference}, got {answer!r}"
