"""Every request says how it is sampled: an explicit temperature and max_tokens from the prompt's
generation.toml entry, sent to the server and recorded on the verdict; no server default decides."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from llmjury.errors import ConfigError, PermanentProviderError
from llmjury.prompts import BUNDLED_PROMPTS, PromptLibrary
from llmjury.providers.base import ProviderSpec
from llmjury.runfiles import read_verdicts
from llmjury.testing import FakeChoice, FakeOpenAI

REPO = Path(__file__).resolve().parents[1]
# Rendered as parts of other prompts or as system prompts beside their user prompt.
NOT_REQUESTS = {"arena/mtbench_pair_v2_system.j2"}


def test_every_bundled_prompt_declares_how_it_is_sampled():
    library = PromptLibrary()
    templates = sorted(str(p.relative_to(BUNDLED_PROMPTS)) for p in BUNDLED_PROMPTS.rglob("*.j2")
                       if "criteria" not in p.parts)
    for name in set(templates) - NOT_REQUESTS:
        generation = library.generation(name)
        assert {"temperature", "max_tokens"} <= set(generation), name
        assert 0 <= generation["temperature"] <= 2 and generation["max_tokens"] >= 16, name


def test_a_projects_generation_toml_shadows_the_bundled_entry(tmp_path):
    (tmp_path / "generation.toml").write_text('["arena/judge.j2"]\nmax_tokens = 64\n')
    library = PromptLibrary([tmp_path])
    assert library.generation("arena/judge.j2") == {"temperature": 0.0, "max_tokens": 64}
    (tmp_path / "generation.toml").write_text('["arena/judge.j2"]\nmax_token = 64\n')
    with pytest.raises(ConfigError, match=r"generation.toml \[arena/judge.j2\]: unknown keys \['max_token'\]"):
        PromptLibrary([tmp_path])


@pytest.mark.parametrize(("server", "problem"), [(FakeOpenAI, r"refused: I won't"),
                                                  (FakeOpenAI.llama_cpp, r"empty answer")], ids=["openai", "llama.cpp"])
def test_a_refused_answer_is_never_passed_on_as_a_response(make_engine, server, problem):
    """OpenAI marks a refusal; llama.cpp sends no refusal field, so the refusal is a null, empty answer."""
    from llmjury.chat import chat

    with server(lambda body, i: FakeChoice(text="", refusal="I won't")) as fake:
        engine = make_engine()
        spec = ProviderSpec.parse(f"openai:m;base_url={fake.base_url}")
        completion = engine.run(engine.complete(spec, chat(("user", "q"))))
    with pytest.raises(PermanentProviderError, match=rf"no answer \({problem}"):
        completion.answer()


def plausible(body, index):
    """An answer in the shape each family's prompt asks for."""
    text = body["messages"][-1]["content"]
    if "Your Evaluation" in text:
        return "Teacher B asks a question.\n\n### (b)"
    if "Score of Model 1" in text:
        return "- Score of Model 1: 1\n- Score of Model 2: 0\n- Brief Explanation: fine."
    if "[[A]]" in text:
        return "A is better. [[A]]"
    if "Evaluation Form" in text or "Evaluation Steps" in text:
        return "1. Read.\n2. Rate." if "Evaluation Steps:" in text and text.rstrip().endswith("Evaluation Steps:") \
            else "3"
    if "QualityEvaluation" in json.dumps(body.get("response_format", {})) or "JSON" in text:
        return json.dumps({"completeness": 4, "context_independence": 4, "technical_accuracy": 4,
                           "overall_grade": "high", "reasoning": "ok", "improvement_suggestions": ""})
    return "A short reply. What do you think?"


@pytest.mark.parametrize("tests", [
    "evals/test_socratic.py::test_ours_against_baseline",
    "evals/test_arena.py::test_battle",
    "evals/test_geval.py::test_geval_item",
    "evals/test_qa_quality.py::test_pair_is_worth_keeping",
])
def test_the_families_send_and_record_temperature_and_max_tokens(tests, pytester, tmp_path):
    with FakeOpenAI(plausible) as server:
        spec = f"openai:fake;base_url={server.base_url}"
        # The repository's own configuration and eval module, in this process; importlib import mode,
        # since tests/ has modules of the same basenames (test_arena.py, test_geval.py).
        pytester.runpytest_inprocess(
            "--rootdir", str(REPO), "-c", str(REPO / "pyproject.toml"), "--import-mode=importlib",
            str(REPO / tests), "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
            "--llm-sample", "2", "--llm-judge", spec, "--llm-role", f"candidate={spec}", "--llm-role",
            f"teacher={spec}", "--llm-role", f"student={spec}", "--llm-role", f"baseline={spec}",
            "--llm-cache", "off", "--llm-reports", str(tmp_path / "reports"),
            "--llm-option", "arena.models=openai:a;base_url=" + server.base_url + ",openai:b;base_url="
            + server.base_url, "--llm-option", "geval.frozen_steps=" + str(tmp_path / "steps"))
        requests = list(server.requests)
    assert requests, "no request reached the server"
    for body in requests:
        assert body.get("temperature") is not None and body.get("max_tokens"), body["messages"][-1]["content"][:80]
    verdicts = read_verdicts(tmp_path / "reports" / "latest")
    judged = [v for v in verdicts if v["judge"]["provider"].startswith("openai:")]
    assert judged and all(v["judge"]["max_tokens"] and v["judge"]["temperature"] is not None for v in judged), \
        [re.sub(r"\s+", " ", str(v["judge"]))[:200] for v in judged[:3]]
