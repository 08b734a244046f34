"""A `base_url`'s credentials, taken out of the address.

A key can ride in a base URL's query string (`.../v1?key=...`, a gateway's `&sig=`) or its user-info
(`https://user:pass@host`). The openai SDK mishandles both (it appends its path after the query, and
its aiohttp transport refuses user-info beside its own Authorization header), so the provider sends
them as the protocol means them: the query on every request, the user-info as HTTP Basic auth. Their
values are secrets the provider's error texts are scrubbed of.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

from llmjury.redact import is_secret_name


@dataclass(frozen=True)
class Address:
    #: The URL without query string, fragment and user-info.
    url: str
    #: The query string's parameters, to send with every request.
    query: dict[str, str] = field(default_factory=dict)
    #: `user:password` from the user-info, if any.
    user_info: str | None = None

    @property
    def authorization(self) -> str | None:
        """The HTTP Basic Authorization header the user-info stands for, as an HTTP client would send it."""
        if self.user_info is None:
            return None
        return "Basic " + base64.b64encode(self.user_info.encode()).decode()

    @property
    def secrets(self) -> tuple[str, ...]:
        """Values no text may show: secret-named query values and the user-info's password (or, with
        none, its user name: `https://TOKEN@host` carries a token there)."""
        found = [value for name, value in self.query.items() if is_secret_name(name)]
        if self.user_info is not None:
            user, _, password = self.user_info.partition(":")
            found.append(password or user)
        return tuple(value for value in found if value)


def split(url: str) -> Address:
    """`url` with its query string and user-info taken out."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    user_info = None
    if parts.username is not None or parts.password is not None:
        user_info = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    return Address(url=urlunsplit((parts.scheme, netloc, parts.path, "", "")), query=query, user_info=user_info)
