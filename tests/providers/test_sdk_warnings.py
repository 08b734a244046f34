"""A project that turns warnings into errors still reaches Gemini: google-genai's own DeprecationWarning
(aiohttp warns against its ClientSession subclass, at a process's first call) failed every call."""

from __future__ import annotations

import pytest

from llmjury.testing import FakeGemini

ASKING = """
import llmjury
from llmjury import Case


class Question(Case):
    text: str


@llmjury.parametrize([Question(id=f"q{i}", family="asked", text=f"question {i}") for i in range(3)])
async def test_asked(case, jury):
    assert await jury.ask("judge", case.text) == "an answer"
"""


@pytest.mark.parametrize("where", ["ini", "pyproject"])
def test_gemini_calls_pass_in_a_project_whose_warnings_are_errors(pytester: pytest.Pytester, where: str):
    settings = "filterwarnings = error\naddopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:randomly\n"
    if where == "ini":
        pytester.makeini("[pytest]\n" + settings)
    else:
        pytester.makepyprojecttoml('[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n'
                                   'addopts = "-p no:deepeval -p no:asyncio -p no:benchmark -p no:randomly"\n')
    pytester.makepyfile(test_asking=ASKING)
    with FakeGemini(lambda body, index: "an answer") as server:
        result = pytester.runpytest_inprocess("--llm-judge", f"gemini:m;base_url={server.origin}", "--llm-cache", "off")
    result.assert_outcomes(passed=3)
    assert server.chat_calls == 3
