"""A call is paid once across two workers, run after run: 30 runs at `-n 2`, each with a fresh
cache, of a suite whose cases on both workers ask overlapping prompts (answered ones and ones the
server refuses with a 400), against one server that counts the requests for every prompt."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from typing import Any

import pytest

from llmjury.testing import FakeOpenAI

RUNS = 30
#: Prompt k is refused with a 400 when k % 3 == 0 (a permanent failure), answered otherwise.
PROMPTS = 8
SUITE = f'''
import llmjury
from llmjury import Case, JudgeConfig, Outcome, Verdict
from llmjury.chat import chat
from llmjury.errors import ProviderError

PROMPTS = [f"{{'bad' if k % 3 == 0 else 'ok'}} {{k}}" for k in range({PROMPTS})]


async def judge(case, jury):
    """Three prompts a case, shared with other cases (of either worker's share)."""
    i = int(case.id[-2:])
    verdicts = []
    for prompt in (PROMPTS[i % {PROMPTS}], PROMPTS[(i + 3) % {PROMPTS}], PROMPTS[(i + 5) % {PROMPTS}]):
        try:
            completion = await jury.complete("judge", "toy", chat(("user", prompt)))
            verdicts.append(Verdict(case_id=case.id, family="toy", judge=JudgeConfig(provider=completion.provider)))
        except ProviderError as exc:
            verdicts.append(Verdict(case_id=case.id, family="toy", judge=JudgeConfig(provider="openai:m"),
                                    valid=False, error=f"call failed: {{exc}}"))
    return Outcome(verdicts)


@llmjury.pipeline(judge)
@llmjury.parametrize([Case(id=f"item-{{i:02d}}", family="toy") for i in range(12)])
def test_overlap(outcome):
    assert len(outcome.verdicts) == 3
'''
INI = "[pytest]\naddopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider -p no:randomly\n"


class RefusingServer(FakeOpenAI):
    """Answers "ok" prompts; a "bad" prompt gets a 400, as a request a provider will never accept."""

    def route(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if body["messages"][-1]["content"].startswith("bad"):
            return 400, {"error": {"message": "bad request: prompt refused", "type": "invalid_request_error",
                                   "param": None, "code": None}}
        return super().route(path, body, headers)


@pytest.mark.e2e  # 30 pytest runs of two xdist workers each
def test_two_workers_pay_once_for_every_prompt_run_after_run(pytester):
    pytester.makeini(INI)
    pytester.makepyfile(test_overlap_suite=SUITE)
    per_run: list[dict[str, int]] = []
    with RefusingServer() as server:
        for run in range(RUNS):
            server.requests.clear()
            result = subprocess.run(
                [sys.executable, "-m", "pytest", "-n", "2", "-q", "--llm-progress", "off",
                 "--llm-judge", f"openai:m;base_url={server.base_url}",
                 "--llm-cache-path", str(pytester.path / f"cache-{run}.sqlite"),
                 "--llm-reports", str(pytester.path / "reports")],
                cwd=pytester.path, capture_output=True, text=True, timeout=300, check=False)
            assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
            per_run.append(dict(sorted(Counter(b["messages"][-1]["content"] for b in server.requests).items())))
    twice = {run: {p: n for p, n in counts.items() if n != 1} for run, counts in enumerate(per_run)}
    assert all(len(counts) == PROMPTS for counts in per_run), per_run
    assert not any(twice.values()), "\n".join(f"run {run}: {counts}" for run, counts in enumerate(per_run))
