"""A base_url's credentials come out of the address: the query to send on every request, the
user-info as Basic auth, and the values no error text may show."""

from __future__ import annotations

import pytest

from llmjury.chat import chat
from llmjury.errors import PermanentProviderError
from llmjury.providers.address import split
from llmjury.providers.base import ProviderSpec


def test_query_and_user_info_are_taken_out_of_the_url():
    address = split("https://me:p%40ss@gateway.example:8443/openai/v1?key=K1&api-version=2024-06-01#frag")
    assert address.url == "https://gateway.example:8443/openai/v1"
    assert address.query == {"key": "K1", "api-version": "2024-06-01"}
    assert address.authorization == "Basic bWU6cEBzcw=="  # me:p@ss
    assert address.secrets == ("K1", "p@ss")  # a user name is no secret; "user" must not mask the role
    assert split("https://ghp_token@host/v1").secrets == ("ghp_token",)


def test_a_plain_url_is_left_as_it_is():
    address = split("http://[::1]:8080/v1")
    assert (address.url, address.query, address.authorization, address.secrets) == ("http://[::1]:8080/v1", {},
                                                                                      None, ())


def test_a_gemini_error_that_quotes_a_key_from_the_base_url_is_scrubbed(gemini_server, make_engine):
    engine = make_engine()
    spec = ProviderSpec.parse(f"gemini:g;base_url={gemini_server.origin}/prefix?key=zq-gemini-key-77")
    with pytest.raises(PermanentProviderError, match="404") as raised:
        engine.run(engine.complete(spec, chat(("user", "hi"))))
    assert "zq-gemini-key-77" in gemini_server.paths[0]  # the SDK sent it; the error quoted the path back
    assert "zq-gemini-key-77" not in str(raised.value) and "key=***" in str(raised.value)
