"""Logprobs forced (`geval.scoring=logprobs`) on a server whose answers carry none: the first answer
stops the run with one error naming the server and the `auto` setting; the cases still queued are
not paid for, and the run's report is written, marked incomplete, with that cause."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from llmjury.testing import FakeOpenAI
from llmjury.testing.fake_openai import ServerBehaviour

EVAL = Path(__file__).resolve().parents[3] / "evals" / "test_geval.py"
INI = """
[pytest]
addopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider -p no:randomly --strict-markers
"""
ITEMS = 12


def rated_items() -> str:
    rows = [{"id": f"c{i}", "context": f"A: what should I cook tonight?\nB: something with {i} eggs?",
             "response": "an omelette" if i % 2 else "no idea", "system": f"bot{i % 3}",
             "annotator": who, "overall": 1 + (i + k) % 5} for i in range(ITEMS) for k, who in enumerate("xyz")]
    return "".join(json.dumps(row) + "\n" for row in rows)


def serve(body: dict, index: int) -> str:
    return "Read it. Check it." if body["messages"][-1]["content"].startswith("Evaluate") else "4"


# Two xdist workers are processes of their own: e2e. Each worker stops at its own first answer, or at
# the first case the other worker planned and stopped on.
@pytest.mark.parametrize("workers", ["0", pytest.param("2", marks=pytest.mark.e2e)])
def test_forced_logprobs_without_them_stop_the_run_at_the_first_answer(pytester, monkeypatch, workers):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    pytester.makeini(INI)
    shutil.copy(EVAL, pytester.path / "test_geval_suite.py")
    (pytester.path / "support_rated.jsonl").write_text(rated_items(), encoding="utf-8")
    with FakeOpenAI(serve, behaviour=ServerBehaviour(logprobs=False)) as server:
        result = pytester.runpytest_inprocess(
            "-n", workers, "--llm-option", "geval.items=support_rated.jsonl", "--llm-option", "geval.deepeval_items=0",
            "--llm-option", "geval.scoring=logprobs", "--llm-concurrency", "1",
            "--llm-judge", f"openai:local-7b;base_url={server.base_url}")
        scoring = [r for r in server.requests if r.get("logprobs")]
    out = result.stdout.str()
    cause = (f"no logprobs: openai:local-7b at {server.base_url} answered without logprobs, and "
             "geval.scoring=logprobs forces them; set geval.scoring=auto")
    assert result.ret == pytest.ExitCode.INTERRUPTED, out
    outcomes = result.parseoutcomes()
    # One error, then the run stops (each worker stops at its first).
    assert 1 <= outcomes["errors"] <= max(1, int(workers)) and "passed" not in outcomes and "failed" not in outcomes
    assert f"NoLogprobsError: {cause}" in out and "unparseable" not in out
    assert not re.search(r"llmjury/\w+/\w+\.py:\d+", out)  # the cause, not a traceback through the planner
    assert len(scoring) < ITEMS  # the cases still queued were refused, not paid for
    (found,) = [json.loads(path.read_text()) for path in (pytester.path / "reports").glob("*/summary.json")
                if path.parent.name != "latest"]
    assert found["complete"] is False
    assert found["run"]["stopped"]["by"].startswith(f"llmjury.errors.NoLogprobsError: {cause}")
    assert len(found["geval"]["meta"]) > 0  # the annotators' verdicts, computed before the stop, are kept
