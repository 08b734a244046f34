"""Every SDK client of a process shares one TLS context: each would otherwise load the CA
certificates again (20 ms of CPU an openai client, 90 ms a google-genai one)."""

from __future__ import annotations

import asyncio
import ssl

import pytest

from llmjury.chat import chat
from llmjury.providers.base import ProviderSpec, resolve
from llmjury.providers.tls import shared_tls


@pytest.fixture
def certificate_loads(monkeypatch: pytest.MonkeyPatch) -> list[object]:
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
    provider = resolve(ProviderSpec.parse(f"openai:m;base_url={openai_server.base_url}"))

    async def ask() -> str:
        try:
            (sample,) = await provider.generate(chat(("user", "hi")), 1)
            return sample.text
        finally:
            await provider.aclose()

    assert asyncio.run(ask()) == "shared"
    assert len(certificate_loads) == 1
