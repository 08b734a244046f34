"""The own-eval example of the docs (docs/tutorial/first-own-eval.md, the same code in the README),
read from the page so the two cannot drift, runs as a new user's project would: outside this
repository, under --strict-markers, offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from doc_examples import blocks

from llmjury.runfiles import read_verdicts

REPO = Path(__file__).resolve().parents[1]


def readme_example() -> str:
    """The Python block of the docs' own-eval example."""
    (code,) = blocks("own-eval", "python")
    return code


def test_the_readme_shows_the_docs_example_as_it_is():
    """The README's front-door example is the executed one, not a copy that can drift."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"```python\n{readme_example()}```" in readme


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    assert not pytester.path.resolve().is_relative_to(REPO)  # a user's checkout, not this one
    pytester.makepyfile(test_answers=readme_example())
    return pytester


def run(project: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    # The loop scope a new project sets, so pytest-asyncio's deprecation warning stays out of this run's summary.
    result = project.runpytest_inprocess("--strict-markers", "-p", "no:deepeval", "-p", "no:cacheprovider",
                                         "-o", "asyncio_default_fixture_loop_scope=function", *args)
    summary = json.loads((project.path / "reports" / "latest" / "summary.json").read_text())
    return result, summary


def test_the_readme_example_is_about_fifteen_lines():
    code = [line for line in readme_example().splitlines() if line.strip()]
    assert len(code) <= 18


# Two xdist workers are processes of their own: e2e (tests/test_plugin.py merges verdicts across workers in
# the quick run).
@pytest.mark.parametrize("workers", ["0", pytest.param("2", marks=pytest.mark.e2e)])
def test_the_readme_example_passes_and_its_verdicts_are_aggregated(project, workers):
    result, summary = run(project, "-n", workers)
    result.assert_outcomes(passed=2)
    custom = summary["custom"]
    assert (custom["cases"], custom["verdicts"], custom["unscored"]) == (2, 6, 0)  # 2 judge calls + 1 check a case
    assert custom["check"]["test_answer"]["pass_rate"]["n"] == 2
    assert custom["compare"]["test_answer"]["win_rate"]["n"] == 2
    assert custom["score"]["test_answer"]["mean"]["value"] == 3.0
    kinds = sorted(record["kind"] for record in read_verdicts(project.path / "reports" / "latest"))
    assert kinds == ["check", "check", "compare", "compare", "score", "score"]


def test_the_readme_example_selects_by_its_case_family_marker(project):
    result, _ = run(project, "-m", "answers", "-k", "capital")
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize("mode", ["strict", "auto"])
def test_the_readme_example_runs_beside_pytest_asyncio(project, mode):
    pytest.importorskip("pytest_asyncio")
    result, summary = run(project, "-p", "asyncio", "-o", f"asyncio_mode={mode}")
    result.assert_outcomes(passed=2)
    assert summary["custom"]["verdicts"] == 6


def test_a_gate_on_the_examples_two_cases_is_inconclusive_never_passed_on_its_point_value(project):
    result, _ = run(project, "--llm-gate", "custom.score.test_answer.mean>=3")
    assert result.ret == 11  # two cases: no interval, so nothing to decide on
    result.stdout.fnmatch_lines(["*INCONCLUSIVE*custom.score.test_answer.mean>=3*too few items*"])
    result, _ = run(project, "--llm-gate", "custom.score.test_answer.mean>=3", "--llm-gate-uncertain", "pass")
    assert result.ret == 0  # decided on the point estimate, as asked
    result, _ = run(project, "--llm-gate", "custom.score.test_answer.mean>=4", "--llm-gate-uncertain", "pass")
    assert result.ret not in (0, 1)  # the tests passed; the gate failed the run
    result.stdout.fnmatch_lines(["*FAIL*custom.score.test_answer.mean>=4*"])


def test_a_score_the_judge_never_gave_fails_the_example_with_the_judges_error(project):
    """A rubric answer that cannot be read leaves no score: the example's assertion shows why (the
    judge's error), where `graded.score >= 3` stopped on a TypeError before its message."""
    from llmjury.testing import FakeOpenAI

    def reply(body, index):
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        return '{"reasoning": "the same", "decision": "tie"}' if schema == "verdict" else "no idea"

    with FakeOpenAI(reply) as server:
        result, _ = run(project, "--llm-judge", f"openai:m;api_key=x;base_url={server.base_url}")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*AssertionError: unparseable*"])
    assert "TypeError" not in result.stdout.str()
