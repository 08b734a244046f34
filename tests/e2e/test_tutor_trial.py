"""Seeds 000/003's flow on your own tutor service, with no glue: a tutor behind its own (not
OpenAI's) HTTP API, reached through the http provider with a body template of the project's own;
the names the user gave the two tutors label every table; a mistyped template name stops the run
before the service is asked anything."""

from __future__ import annotations

from typing import Any

import pytest
from kit import report_file, summary, user_project

from llmjury.testing import FakeServer

pytestmark = pytest.mark.e2e

BODY = '{"student_message": {{ last.content }}, "history": {{ turns }}, "style": "socratic"}'


class TutorService(FakeServer):
    """A tutor with its own API: `{student_message, history, style}` in, `{data: {reply}}` out."""

    def route(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if path != "/v2/tutor" or set(body) != {"student_message", "history", "style"}:
            return 422, {"detail": f"unexpected request {path} {sorted(body)}"}
        return 200, {"data": {"reply": f"What makes you say '{body['student_message'][:40]}'? Which step comes "
                                       "first, and why?"}, "latency_ms": 12}


def tutor_run(project: pytest.Pytester, service: TutorService, body: str) -> pytest.RunResult:
    spec = f"candidate=http:{service.origin}/v2/tutor;body={body};reply=data.reply"
    return project.runpytest_inprocess(
        "--llm-role", spec, "-m", "simulated", "--llm-option", "socratic.dialogues=3",
        "--llm-option", "socratic.subsets=5", "--llm-option", "socratic.ours_name=my-tutor",
        "--llm-option", "socratic.baseline_name=plain-teacher", "-o", "llm_prompts=prompts")


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    project = user_project(pytester, "test_socratic.py")
    (project.path / "prompts" / "tutor").mkdir(parents=True)
    (project.path / "prompts" / "tutor" / "body.j2").write_text(BODY, encoding="utf-8")
    return project


def test_a_tutor_behind_its_own_http_api_is_judged_under_its_own_name(project):
    with TutorService() as service:
        result = tutor_run(project, service, "tutor/body.j2")
    result.assert_outcomes(passed=5)
    assert len(service.requests) == 5  # one reply a subset, asked afresh
    for body in service.requests:
        assert body["history"] and all(turn["role"] in ("user", "assistant") for turn in body["history"])
        assert body["student_message"] == body["history"][-1]["content"]  # the system prompt stays out
    section = summary(project)["socratic"]
    assert (section["ours_name"], section["baseline_name"]) == ("my-tutor", "plain-teacher")
    assert sum(section["final_verdicts"].values()) == 5
    wins = report_file(project, "summary.md")
    assert "| my-tutor |" in wins and "| plain-teacher |" in wins and "| ours |" not in wins


def test_a_mistyped_body_template_stops_the_run_before_the_tutor_is_asked(project):
    with TutorService() as service:
        result = tutor_run(project, service, "tutor/bdoy.j2")
        assert service.requests == []
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*candidate=http:*body template tutor/bdoy.j2: no such template*"])
