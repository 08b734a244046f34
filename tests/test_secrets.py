"""No secret is written: not from a spec, not from the environment, not echoed back by a server."""

from __future__ import annotations

import base64
import gzip
from pathlib import Path
from typing import Any

import pytest

from llmjury.errors import ConfigError
from llmjury.providers.base import ProviderSpec
from llmjury.redact import redact_spec, scrub
from llmjury.testing import FakeOpenAI

SPEC_KEY = "zq-marker-spec-5150"
ENV_KEY = "zq-marker-env-7337"


class EchoingServer(FakeOpenAI):
    """Refuses every key and quotes it back, as some servers' 401 pages do."""

    def route(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        auth = {k.lower(): v for k, v in headers.items()}["authorization"]
        return 401, {"error": {"message": f"Incorrect API key provided: {auth}", "type": "invalid_request_error",
                               "code": "invalid_api_key"}}


TEST = """
import llmjury
from llmjury import Case, JudgeConfig, Outcome, Verdict
from llmjury.chat import chat
from llmjury.errors import ProviderError


class Item(Case):
    text: str


async def judge(case, jury):
    try:
        await jury.complete(case.text, "toy", chat(("user", "hello")))
    except ProviderError as exc:
        return Outcome([Verdict(case_id=case.id, family="toy", judge=JudgeConfig(provider="x"), valid=False,
                                error=f"call failed: {exc}")])
    return Outcome([])


@llmjury.pipeline(judge)
@llmjury.parametrize([Item(id="spec-key", family="toy", text="judge"),
                      Item(id="env-key", family="toy", text="candidate")])
def test_unscored(outcome):
    assert not outcome.verdict.valid


def test_raises(jury):
    jury.engine.run(jury.complete("judge", "toy", chat(("user", "hello"))))
"""


@pytest.mark.e2e  # two xdist workers
def test_no_key_reaches_any_output(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    pytester.makeini("[pytest]\naddopts = -p no:deepeval -p no:asyncio -p no:benchmark\n")
    pytester.makepyfile(test_keys=TEST)
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    with EchoingServer() as server:
        result = pytester.runpytest_inprocess(
            "-n", "2", "--junitxml=junit.xml", "-rA", "-l", "--tb=long",
            "--llm-judge", f"openai:judge;base_url={server.base_url};api_key={SPEC_KEY};timeout=5",
            "--llm-role", f"candidate=openai:cand;base_url={server.base_url};timeout=5")
    result.assert_outcomes(passed=2, failed=1)
    assert any(f"Bearer {SPEC_KEY}" in r.get("authorization", "") for r in server.headers)  # the key was sent
    assert any(f"Bearer {ENV_KEY}" in r.get("authorization", "") for r in server.headers)
    written = {path: _unpacked(path).decode("utf-8", "replace") for path in Path(pytester.path).rglob("*")
               if path.is_file() and "__pycache__" not in path.parts}
    assert any(p.name == "verdicts.jsonl.gz" for p in written) and any(p.name == "junit.xml" for p in written)
    for text, where in [*((t, str(p)) for p, t in written.items()), (result.stdout.str(), "stdout"),
                        (result.stderr.str(), "stderr")]:
        assert SPEC_KEY not in text, where
        assert ENV_KEY not in text, where
    verdicts = _unpacked(pytester.path / "reports" / "latest" / "verdicts.jsonl.gz").decode("utf-8")
    assert "HTTP 401: Incorrect API key provided: Bearer ***" in verdicts
    assert "api_key=***" in (pytester.path / "reports" / "latest" / "summary.json").read_text()


def _unpacked(path: Path) -> bytes:
    """A written file's bytes, a gzipped one unpacked: a key must not hide in a compressed report."""
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


@pytest.mark.parametrize(("spec", "expected"), [
    ("openai:gpt-4o;api_key=abc;base_url=http://h", "openai:gpt-4o;api_key=***;base_url=http://h"),
    ("openai:a;token=t1+gemini:b;API_KEY=t2", "openai:a;token=***+gemini:b;API_KEY=***"),
    ("openai:a;api_key_env=MY_KEY*3", "openai:a;api_key_env=MY_KEY*3"),
    ("judge=http:http://h/chat;auth_header=s3cret", "judge=http:http://h/chat;auth_header=***"),
])
def test_secret_named_spec_options_are_masked(spec, expected):
    assert redact_spec(spec) == expected


def test_error_text_loses_known_secrets_and_key_shaped_strings():
    text = "HTTP 401: key my-own-key rejected; Authorization: Bearer abc.def; try sk-proj-ABCDEFGH12 or AIza" + "x" * 30
    assert scrub(text, ["my-own-key", None]) == (
        "HTTP 401: key *** rejected; Authorization: Bearer ***; try *** or ***")


def test_a_bad_spec_is_reported_without_its_key(pytester: pytest.Pytester):
    pytester.makeini("[pytest]\naddopts = -p no:deepeval -p no:asyncio -p no:benchmark\n")
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_inprocess("--llm-judge", f"openai:gpt-4o;api_key={SPEC_KEY};timeout=abc")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "timeout" in result.stderr.str() and SPEC_KEY not in result.stderr.str() + result.stdout.str()


URL_KEY = "zq-marker-url-4242"


class PathEchoingServer(FakeOpenAI):
    """Answers under /v1; anywhere else a 404 that quotes the path and query back, as many servers do."""

    def route(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if not path.startswith("/v1/"):
            return 404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}}
        return super().route(path, body, headers)
URL_TEST = """
import llmjury
from llmjury import Case, JudgeConfig, Outcome, Verdict
from llmjury.chat import chat
from llmjury.errors import ProviderError


async def judge(case, jury):
    try:
        completion = await jury.complete(case.id, "toy", chat(("user", "hello")))
    except ProviderError as exc:
        return Outcome([Verdict(case_id=case.id, family="toy", judge=JudgeConfig(provider="x"), valid=False,
                                error=f"call failed: {exc}")])
    return Outcome([Verdict(case_id=case.id, family="toy", judge=JudgeConfig(provider=completion.provider),
                            raw=completion.texts)])


@llmjury.pipeline(judge)
@llmjury.parametrize([Case(id="judge", family="toy"), Case(id="candidate", family="toy")])
def test_toy(outcome):
    assert outcome.verdict.valid


def test_raises(jury):
    jury.engine.run(jury.complete("candidate", "toy", chat(("user", "again"))))
"""


@pytest.mark.e2e  # two xdist workers
@pytest.mark.parametrize("where", ["query", "user-info"])
def test_a_key_in_a_base_url_reaches_the_server_and_no_output(pytester: pytest.Pytester, where):
    """The judge's base_url carries the key; the candidate's points at a wrong path, so the server's
    404 quotes the URL back into an error that lands in verdicts, JUnit XML and the terminal."""
    pytester.makeini("[pytest]\naddopts = -p no:deepeval -p no:asyncio -p no:benchmark\n")
    pytester.makepyfile(test_url_keys=URL_TEST)
    with PathEchoingServer() as server:
        if where == "query":
            judge, wrong = (f"{server.base_url}?key={URL_KEY}&api-version=1", f"{server.origin}/nope?sig={URL_KEY}")
        else:
            judge = server.base_url.replace("http://", f"http://user:{URL_KEY}@")
            wrong = server.origin.replace("http://", f"http://{URL_KEY}@") + "/nope?token=x" + URL_KEY
        result = pytester.runpytest_inprocess(
            "-n", "2", "--junitxml=junit.xml", "-rA", "--log-cli-level=DEBUG", "--log-level=DEBUG",
            "--llm-judge", f"openai:judge;base_url={judge};timeout=5",
            "--llm-role", f"candidate=openai:cand;base_url={wrong};timeout=5")
    result.assert_outcomes(passed=1, failed=2)
    answered = [path for path, headers in zip(server.paths, server.headers, strict=True)
                if "/v1/chat/completions" in path]
    assert answered, server.paths
    if where == "query":  # the key went where the URL put it: in the query of the real path
        assert any(p == f"/v1/chat/completions?key={URL_KEY}&api-version=1" for p in server.paths)
    else:  # and the user-info as HTTP Basic auth, as an HTTP client sends it
        basic = "Basic " + base64.b64encode(f"user:{URL_KEY}".encode()).decode()
        assert basic in [h.get("authorization") for h in server.headers]
    written = {path: _unpacked(path).decode("utf-8", "replace") for path in Path(pytester.path).rglob("*")
               if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".sqlite"}
    assert any(p.name == "junit.xml" for p in written) and any(p.name == "summary.json" for p in written)
    for text, where_written in [*((t, str(p)) for p, t in written.items()), (result.stdout.str(), "stdout"),
                                (result.stderr.str(), "stderr")]:
        assert URL_KEY not in text, where_written
    verdicts = _unpacked(pytester.path / "reports" / "latest" / "verdicts.jsonl.gz").decode("utf-8")
    assert "HTTP 404" in verdicts and "no route /nope" in verdicts  # the echoed URL, masked
    assert "HTTP 404" in result.stdout.str()


@pytest.mark.parametrize(("text", "expected"), [
    ("base_url=http://h:1/v1?key=abc&api-version=2;timeout=5", "base_url=http://h:1/v1?key=***&api-version=2;timeout=5"),
    ("GET /v1?api_key=abc%2Fdef&x=1", "GET /v1?api_key=***&x=1"),
    ("https://blob/x?sv=1&sig=AbC%3D&se=2", "https://blob/x?sv=1&sig=***&se=2"),
    ("url 'https://h/?access_token=t0k' failed", "url 'https://h/?access_token=***' failed"),
    ("https://user:p%40ss@host:8/v1", "https://***@host:8/v1"),
    ("openai:m;base_url=https://ghtoken@host/v1;timeout=5", "openai:m;base_url=https://***@host/v1;timeout=5"),
    ("http://host/v1?design=a&keyword=b", "http://host/v1?design=a&keyword=b"),
])
def test_secrets_in_urls_are_masked(text, expected):
    assert redact_spec(text) == expected


@pytest.mark.parametrize("spec", ["openai:m;base_url=http://h/v1?key=zq-spec-url-1;timeout=x",
                                  "openai:m;base_url=https://u:zq-spec-url-1@h/v1;timeout=x",
                                  "opena:m;api_key=zq-spec-url-1"])
def test_a_spec_error_raised_anywhere_masks_the_specs_secrets(spec):
    with pytest.raises(ConfigError) as raised:
        ProviderSpec.parse(spec)
    assert "zq-spec-url-1" not in str(raised.value) and "***" in str(raised.value)


def test_an_echoed_basic_authorization_header_is_masked():
    """A server that echoes the request's headers sent back Basic's base64 of the base_url's
    `user:password`, and it reached verdicts, CSVs and report.html in clear."""
    token = base64.b64encode(b"user:SECRET456").decode()
    text = scrub(f"HTTP 401: bad credentials in 'Authorization: Basic {token}' and 'authorization: basic {token}'")
    assert token not in text and text.count("***") == 2
