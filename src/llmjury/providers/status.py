"""What an HTTP status or a failed connection says about retrying, shared by every provider that
speaks HTTP."""

from __future__ import annotations

import errno
import socket
from collections.abc import Iterable
from typing import Any

from llmjury.errors import TransientProviderError, UnreachableProviderError
from llmjury.redact import scrub

RETRYABLE_STATUS = frozenset({408, 409, 429})
#: The OS's errors for a connection no server took: refused, no route to the network or the host.
NO_SERVER_ERRNOS = frozenset({errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTUNREACH})


def is_retryable(status: int) -> bool:
    """Timeouts, conflicts, rate limits and server errors are worth another try."""
    return status in RETRYABLE_STATUS or status >= 500


def retry_after(response: Any) -> float | None:
    """Seconds the server asked us to wait (`retry-after-ms` or `retry-after`), if it said."""
    headers = getattr(response, "headers", None) or {}
    for header, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(header)
        if value is None:
            continue
        try:
            return float(value) / scale
        except ValueError:
            continue
    return None


def no_server(exc: BaseException) -> OSError | None:
    """The OS's error under a client's exception when no server answered at all (the connection
    refused, no route, the host name not found), else None. Clients wrap it differently (the openai
    SDK's aiohttp transport reports a refused connection as a connect time-out), so the chain of
    causes is read rather than the client's class."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, socket.gaierror) or (isinstance(current, OSError) and current.errno in NO_SERVER_ERRNOS):
            return current
        current = current.__cause__ or current.__context__
    return None


def connection_error(provider: str, exc: BaseException, secrets: Iterable[str | None] = ()) -> TransientProviderError:
    """A failed request with no HTTP answer: unreachable when no server took the connection (named
    by the OS's own error, not the client's wrapper), else transient (a time-out, a reset)."""
    refused = no_server(exc)
    if refused is not None:
        return UnreachableProviderError(provider, scrub(f"cannot connect ({type(refused).__name__}: {refused})",
                                                        secrets))
    return TransientProviderError(provider, scrub(f"{type(exc).__name__}: {exc}", secrets))
