"""The README's own eval and the gates it suggests, run as the workflow's steps run them on a team's
project of 72 questions (the README's test body, its case list grown): main's baseline, then an
unchanged pull request (every gate green) and one that breaks 15% of the answers (every gate red,
each on its own). The system under test is an HTTP service and the judge an OpenAI-speaking fake
that knows the right sums; both on 127.0.0.1."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from doc_examples import blocks

from llmjury.results.exit_status import GATE_FAILED_EXIT
from llmjury.testing import FakeOpenAI, FakeServer

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / ".github" / "scripts" / "evals.sh"
PAIRS = [(a, b) for a in range(8) for b in range(9)]  # 72 questions
CASES = ('CASES = [Question(id=f"sum-{a}-{b}", family="answers", question=f"What is {a} plus {b}?", '
         'reference=str(a + b))\n         for a in range(8) for b in range(9)]\n')

pytestmark = pytest.mark.e2e  # the workflow's bash script and three pytest runs of their own


class Bot(FakeServer):
    """The team's system: answers `What is a plus b?`, one off for the questions in `wrong`."""

    def __init__(self) -> None:
        super().__init__()
        self.wrong: set[tuple[int, int]] = set()

    def route(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        a, b = (int(x) for x in re.findall(r"\d+", body["messages"][-1]["content"])[:2])
        return 200, {"reply": f"It is {a + b + ((a, b) in self.wrong)}."}


def judge(body: dict[str, Any], index: int) -> str:
    """A judge that knows arithmetic: the answer ties its reference when it holds it, else loses;
    a score is 5 for the right sum, 1 otherwise."""
    prompt = body["messages"][-1]["content"]
    responses = dict(re.findall(r"\[Response (A|B)\]\n(.*?)\n\[End of response \1\]", prompt, re.DOTALL))
    if responses:  # the reference is the bare number, in whichever order it is shown
        reference, answer = sorted(responses.values(), key=len)
        if reference.strip() in re.findall(r"-?\d+", answer):
            return "Both give the same number.\n### tie"
        return f"The reference is right.\n### {'A' if responses['A'] == reference else 'B'}"
    question = re.search(r"What is (\d+) plus (\d+)\?", prompt)
    answered = re.search(r"\[Response\]\n(.*?)\n\[End of response\]", prompt, re.DOTALL)
    right = question is not None and answered is not None and \
        str(int(question[1]) + int(question[2])) in re.findall(r"-?\d+", answered[1])
    return json.dumps({"reasoning": "checked the sum", "score": 5 if right else 1})


def test_the_readme_gates_fail_a_15_percent_regression_and_stay_green_when_nothing_changed(tmp_path):
    (code,) = blocks("own-eval", "python")
    grown = re.sub(r"CASES = \[.*?\]\n", CASES, code, count=1, flags=re.DOTALL)
    assert grown != code and "Judge first, assert last" in grown
    gates = yaml.safe_load(blocks("own-eval-gates", "yaml")[0])["env"]["LLMJURY_GATES"]
    assert len(gates.split()) == 3
    project = tmp_path / "rag"
    project.mkdir()
    (project / "test_answers.py").write_text(grown)
    (project / "pytest.ini").write_text("[pytest]\naddopts = -p no:deepeval -p no:asyncio -p no:cacheprovider "
                                        "--strict-markers\n")
    with Bot() as bot, FakeOpenAI(judge) as server:
        env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
               "LLMJURY_EVALS": ".", "LLMJURY_GATES": gates,
               "LLMJURY_ARGS": f"-n 2 --llm-role candidate=http:{bot.origin}/chat "
                               f"--llm-judge openai:judge;api_key=x;base_url={server.base_url}"}

        def step(mode: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
            done = subprocess.run(["bash", str(SCRIPT), mode], cwd=project, env=env, capture_output=True, text=True,
                                  check=False)
            return done, json.loads((project / "reports/latest/summary.json").read_text())

        bot.wrong = set(PAIRS[::18])  # main is wrong on 4 of 72
        main, _ = step("baseline")
        assert main.returncode == 0, main.stdout + main.stderr
        unchanged, same = step("compare")
        bot.wrong |= set(PAIRS[1::6][:11])  # the pull request breaks 11 more: 15% of the questions
        worse, regressed = step("compare")
    assert unchanged.returncode == 0, unchanged.stdout + unchanged.stderr
    assert [g["status"] for g in same["gates"]] == ["pass"] * 3
    assert worse.returncode == GATE_FAILED_EXIT, worse.stdout + worse.stderr
    assert [g["status"] for g in regressed["gates"]] == ["fail"] * 3, regressed["gates"]
    compared = regressed["comparison"]["families"]["custom"]
    mean = compared["score.test_answer.mean"]
    assert mean["delta"]["n"] == 72 and mean["delta"]["value"] == pytest.approx(-4 * 11 / 72)
    assert compared["compare.test_answer.loss_rate"]["delta"]["value"] == pytest.approx(11 / 72)
