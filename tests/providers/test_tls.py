"""Every SDK client of a process shares one TLS context: each would otherwise load the CA
certificates again (20 ms of CPU an openai client, 90 ms a google-genai one)."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme

from llmjury.chat import chat
from llmjury.errors import PermanentProviderError
from llmjury.providers.base import Provider, ProviderSpec, resolve
from llmjury.providers.tls import shared_tls
from llmjury.testing import FakeGemini, FakeOpenAI


@pytest.fixture
def certificate_loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Each time a TLS context is given CA certificates, from a fresh shared context on."""
    loads: list[object] = []
    load = ssl.SSLContext.load_verify_locations

    def counted(self: ssl.SSLContext, *args: object, **kwargs: object) -> None:
        loads.append(args or kwargs)
        load(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    shared_tls.cache_clear()
    yield loads
    shared_tls.cache_clear()  # the next one is built without the counting


def test_providers_of_both_sdks_load_the_ca_certificates_once_a_process(certificate_loads):
    specs = [f"openai:m{i};base_url=http://127.0.0.1:1/v1" for i in range(3)]
    specs += [f"gemini:m{i};base_url=http://127.0.0.1:1" for i in range(3)]
    providers = [resolve(ProviderSpec.parse(spec)) for spec in specs]
    assert len(certificate_loads) == 1
    for provider in providers:
        asyncio.run(provider.aclose())


def test_a_provider_with_the_shared_context_still_answers(certificate_loads, openai_server):
    openai_server.reply = lambda body, index: "shared"
    assert answer(resolve(ProviderSpec.parse(f"openai:m;base_url={openai_server.base_url}"))) == "shared"
    assert len(certificate_loads) == 1


def answer(provider: Provider) -> str:
    async def ask() -> str:
        try:
            (sample,) = await provider.generate(chat(("user", "hi")), 1)
            return sample.text
        finally:
            await provider.aclose()

    return asyncio.run(ask())


@pytest.fixture
def authority(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[trustme.CA, Path]]:
    """A certificate authority of the test's own, its certificate in a file; a fresh shared context."""
    ca = trustme.CA()
    pem = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(pem))
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    shared_tls.cache_clear()
    yield ca, pem
    shared_tls.cache_clear()


@pytest.mark.parametrize("kind", ["openai", "gemini"])
def test_a_server_behind_a_private_authority_is_named_untrusted_then_reached_with_ssl_cert_file(
        authority, monkeypatch, kind):
    """An untrusted certificate is a permanent failure that says so (the openai SDK called it a
    time-out, and each call was retried); with SSL_CERT_FILE naming the authority, the call is answered."""
    ca, pem = authority
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    fake = FakeOpenAI if kind == "openai" else FakeGemini
    with fake(lambda body, index: "over TLS").serve_tls(context) as server:
        url = server.base_url if isinstance(server, FakeOpenAI) else server.origin
        assert url.startswith("https://")
        spec = ProviderSpec.parse(f"{kind}:m;base_url={url}")
        with pytest.raises(PermanentProviderError, match=r"TLS certificate is not trusted \(.*\); for a private "
                                                         r"certificate authority set SSL_CERT_FILE or SSL_CERT_DIR"):
            answer(resolve(spec))
        monkeypatch.setenv("SSL_CERT_FILE", str(pem))
        shared_tls.cache_clear()  # the context is built once a process: this one reads SSL_CERT_FILE
        assert answer(resolve(spec)) == "over TLS"
