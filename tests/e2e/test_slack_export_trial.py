"""Seed 001's flow on a raw Slack export, with no glue: the export folder as Slack writes it goes to
`qa_quality.export`, a judge behind an OpenAI-compatible server grades what the rules keep, and the
server's log shows the judge saw only real Q&A threads, with people's names and no Slack markup."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from kit import summary, user_project
from slack_kit import KEPT, write_export

from llmjury.testing import FakeOpenAI

pytestmark = pytest.mark.e2e


def grade(body: dict, index: int) -> str:
    """A judge that finds every thread worth keeping."""
    dimension = {"score": 4, "reasoning": "clear and correct"}
    return json.dumps({"completeness": dimension, "context_independence": dimension, "technical_accuracy": dimension,
                       "overall_quality": "high"})


@pytest.mark.parametrize("given", ["acme-slack", "acme-slack.zip"])
def test_a_raw_slack_export_is_graded_as_slack_wrote_it(pytester, monkeypatch, given):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    project = user_project(pytester, "test_qa_quality.py")
    export = write_export(project.path / "acme-slack")
    if given.endswith(".zip"):  # as Slack hands it out
        shutil.make_archive(str(export), "zip", export)
        shutil.rmtree(export)
    with FakeOpenAI(grade) as judge:
        result = project.runpytest_inprocess("--llm-option", f"qa_quality.export={given}", "-m", "qa_acme-slack",
                                             "-rs", "--llm-judge", f"openai:gpt-4o-mini;base_url={judge.base_url}")
    kept = sum(len(threads) for threads in KEPT.values())
    # A test per kept thread and per channel's rules; #social has nothing left to grade, which is a skip.
    result.assert_outcomes(passed=kept + len(KEPT), skipped=1)
    result.stdout.fnmatch_lines(["*SKIPPED*no Q&A thread left after the rules (1 bot_message, 1 system_message)*"])
    result.stdout.fnmatch_lines([f"*qa_quality dataset acme-slack (*{given}): {kept} items; left out * "
                                 "(*2 empty channel, 1 empty file*)*"])
    prompts = [request["messages"][-1]["content"] for request in judge.requests]
    assert len(prompts) == kept  # filler-only, announcement, bot and system threads never reach the judge
    seen = "\n".join(prompts)
    assert ("the csv docs (https://docs.python.org/3/library/csv.html) offline, @mina (TA)? Asking in #general too "
            "& <nothing> came up") in seen
    assert "Also `help(csv)` in a REPL" in seen and seen.count("Also `help(csv)`") == 1  # the broadcast, once
    assert "@here" in seen and "`pip install pkg==1.2`" in seen  # a thread joined across day files
    assert not re.search(r"<https?:|<@U|<#C|<!|&lt;|&amp;|:\+1:|:pray:|감사합니다|Build #412|has joined", seen)
    section = summary(project)["qa_quality"]
    assert {r["dataset"]: r["kept"] for r in section["loading"]} == {"acme-slack": kept}
    # Every channel's rule counts reach the report, the skipped #social's too (its bot's post).
    assert section["rules"]["threads_removed"]["bot_message"] == 1
    assert section["rules"]["answers_removed"] == {"filler": 3, "short_thanks": 2, "bot_message": 1}
    dropped = section["loading"][0]["dropped"]
    assert dropped["empty channel"] == 2 and dropped["empty file"] == 1
