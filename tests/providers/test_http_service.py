"""The http: provider posts the dialogue to a plain service and reads the reply by path."""

from __future__ import annotations

import re
from typing import Any

import pytest

from llmjury.chat import chat
from llmjury.errors import PermanentProviderError
from llmjury.providers.base import ProviderSpec
from llmjury.providers.http_service import extract
from llmjury.testing import FakeServer, Fault


class TutorService(FakeServer):
    def route(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        last = body["messages"][-1]["content"]
        return 200, {"data": {"choices": [{"text": f"What do you think about {last}?"}]}}


def test_reply_is_read_from_the_configured_json_path(make_engine):
    with TutorService() as service:
        engine = make_engine()
        spec = ProviderSpec.parse(f"http:{service.origin}/chat;reply=data.choices.0.text")
        completion = engine.run(engine.complete(spec, chat(("user", "pointers"))))
        assert completion.text == "What do you think about pointers?"
        assert service.requests[0] == {"messages": [{"role": "user", "content": "pointers"}]}


def test_missing_reply_path_is_a_permanent_error_quoting_the_body(make_engine):
    with TutorService() as service:
        engine = make_engine()
        spec = ProviderSpec.parse(f"http:{service.origin}/chat;reply=answer")
        with pytest.raises(PermanentProviderError, match="reply path 'answer' not found"):
            engine.run(engine.complete(spec, chat(("user", "x"))))


def test_service_errors_are_retried(make_engine):
    with TutorService() as service:
        service.faults.append(Fault(status=502))
        engine = make_engine()
        spec = ProviderSpec.parse(f"http:{service.origin}/chat;reply=data.choices.0.text")
        assert engine.run(engine.complete(spec, chat(("user", "x")))).text.endswith("x?")
        assert len(service.requests) == 2


def test_extract_walks_dicts_and_lists():
    assert extract({"a": [{"b": 1}, {"b": 2}]}, "a.1.b") == 2


class EchoBody(FakeServer):
    def route(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        return 200, {"reply": f"{body['session']}|{body['utterance']}|{len(body['history'].splitlines())}"}


def test_body_template_renders_the_dialogue_for_the_service(make_engine, tmp_path):
    from llmjury.prompts import PromptLibrary, use_library

    (tmp_path / "tutor").mkdir()
    (tmp_path / "tutor" / "body.j2").write_text(
        '{"session": "eval", "utterance": {{ last.content | tojson }}, "history": {{ history | tojson }}}')
    use_library(PromptLibrary([tmp_path]))
    try:
        with EchoBody() as service:
            engine = make_engine()
            spec = ProviderSpec.parse(f"http:{service.origin}/chat;body=tutor/body.j2")
            request = chat(("user", "what is a pivot?"), ("assistant", "What do you think?"), ("user", "no idea"))
            assert engine.run(engine.complete(spec, request)).text == "eval|no idea|3"
    finally:
        use_library(PromptLibrary())


class RecordBody(FakeServer):
    def route(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        return 200, {"reply": None if body.get("utterance") == "silence" else "ok"}


def test_body_values_are_json_escaped_without_tojson(make_engine, tmp_path):
    """A quote in the text can neither break the body nor add a field to it."""
    from llmjury.prompts import PromptLibrary, use_library

    (tmp_path / "plain.j2").write_text('{"session": "eval", "utterance": {{ last.content }}}')
    use_library(PromptLibrary([tmp_path]))
    try:
        with RecordBody() as service:
            engine = make_engine()
            crafted = 'hi", "admin": true, "x": "'
            spec = ProviderSpec.parse(f"http:{service.origin}/c;body=plain.j2")
            assert engine.run(engine.complete(spec, chat(("user", crafted)))).text
            assert service.requests[0] == {"session": "eval", "utterance": crafted}
    finally:
        use_library(PromptLibrary())


def test_a_null_reply_is_an_empty_answer_not_the_text_none(make_engine, tmp_path):
    from llmjury.prompts import PromptLibrary, use_library

    (tmp_path / "plain.j2").write_text('{"utterance": {{ last.content }}}')
    use_library(PromptLibrary([tmp_path]))
    try:
        with RecordBody() as service:
            engine = make_engine()
            spec = ProviderSpec.parse(f"http:{service.origin}/c;body=plain.j2")
            completion = engine.run(engine.complete(spec, chat(("user", "silence"))))
    finally:
        use_library(PromptLibrary())
    assert completion.text == "" and completion.problem == "empty answer (finish reason stop)"


class EchoingService(FakeServer):
    """Refuses every request and quotes the URL it was asked at, key included."""

    def route(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        return 403, {"error": f"forbidden: {path} (key {path.partition('key=')[2]})"}


def test_a_key_in_the_service_url_is_sent_but_not_named_or_quoted(make_engine):
    with EchoingService() as service:
        engine = make_engine()
        spec = ProviderSpec.parse(f"http:{service.origin}/chat?key=zq-service-key-31;reply=reply")
        with pytest.raises(PermanentProviderError, match="HTTP 403") as raised:
            engine.run(engine.complete(spec, chat(("user", "x"))))
        assert service.paths == ["/chat?key=zq-service-key-31"]
        assert "zq-service-key-31" not in str(raised.value)
        assert str(raised.value).startswith(f"http:{service.origin}/chat?key=***: HTTP 403")


def test_body_variables_keep_the_system_prompt_apart_from_the_dialogue():
    from llmjury.providers.http_body import variables

    request = chat(("system", "Be Socratic."), ("user", "7?"), ("assistant", "Why?"), ("user", "3+4"))
    seen = variables(request.messages)
    assert seen["system"] == "Be Socratic." and seen["messages"][0]["role"] == "system"
    assert [m["role"] for m in seen["turns"]] == ["user", "assistant", "user"]
    assert seen["dialogue"] == "[user]: 7?\n[assistant]: Why?\n[user]: 3+4"
    assert seen["history"].startswith("[system]: Be Socratic.\n") and seen["last"] == {"role": "user",
                                                                                     "content": "3+4"}


OWN_EVAL = """
import llmjury
from llmjury import Case


@llmjury.parametrize([Case(id="r0", family="recipes")])
async def test_recipe(case, jury):
    answer = await jury.ask("candidate", "a stew?")
    assert answer
"""


def test_a_providers_error_fails_the_test_at_its_own_line_without_the_engines_frames(pytester):
    """A wrong reply path printed about 85 lines of llmjury's frames per test, 3,089 for 36 tests (a
    user trial): the failure shows the test's line and the cause; `--full-trace` shows every frame."""
    pytester.makepyfile(test_recipes=OWN_EVAL)
    with TutorService() as service:
        role = f"candidate=http:{service.origin}/chat;reply=result.txt"
        short = pytester.runpytest_inprocess("-p", "no:randomly", "--llm-role", role)
        full = pytester.runpytest_inprocess("-p", "no:randomly", "--llm-role", role, "--full-trace")
    short.assert_outcomes(failed=1)
    text = short.stdout.str()
    assert "answer = await jury.ask(\"candidate\", \"a stew?\")" in text
    assert re.search(r"^E +llmjury.errors.PermanentProviderError: http:.*reply path 'result.txt' not found", text, re.M)
    assert not re.search(r"llmjury/\S+\.py:\d+", text), text
    assert "engine.py" in full.stdout.str()
