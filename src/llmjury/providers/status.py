"""What an HTTP status or a failed connection says about retrying, shared by every provider that
speaks HTTP."""

from __future__ import annotations

import errno
import socket
import ssl
from collections.abc import Iterable, Iterator
from typing import Any

from llmjury.errors import PermanentProviderError, ProviderError, TransientProviderError, UnreachableProviderError
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


def causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and the exceptions under it, outermost first. Clients wrap the OS's and TLS's errors
    differently (the openai SDK's aiohttp transport reports a refused connection, and a certificate
    it does not trust, as a connect time-out), so the chain is read rather than the client's class."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def no_server(exc: BaseException) -> OSError | None:
    """The OS's error under a client's exception when no server answered at all (the connection
    refused, no route, the host name not found), else None."""
    return next((cause for cause in causes(exc) if isinstance(cause, socket.gaierror)
                 or (isinstance(cause, OSError) and cause.errno in NO_SERVER_ERRNOS)), None)


def untrusted(exc: BaseException) -> ssl.SSLCertVerificationError | None:
    """The TLS error under a client's exception when the server's certificate was not trusted: the
    innermost one (aiohttp's wrapper is one too, without the verifier's message)."""
    found = [cause for cause in causes(exc) if isinstance(cause, ssl.SSLCertVerificationError)]
    return found[-1] if found else None


def connection_error(provider: str, exc: BaseException, secrets: Iterable[str | None] = ()) -> ProviderError:
    """A failed request with no HTTP answer: unreachable when no server took the connection (named
    by the OS's own error, not the client's wrapper); permanent when the server's certificate is not
    trusted (every call would fail alike); else transient (a time-out, a reset)."""
    refused = no_server(exc)
    if refused is not None:
        return UnreachableProviderError(provider, scrub(f"cannot connect ({type(refused).__name__}: {refused})",
                                                        secrets))
    certificate = untrusted(exc)
    if certificate is not None:
        reason = getattr(certificate, "verify_message", None) or str(certificate)
        return PermanentProviderError(provider, scrub(
            f"the server's TLS certificate is not trusted ({reason}); for a private certificate authority "
            "set SSL_CERT_FILE or SSL_CERT_DIR", secrets))
    return TransientProviderError(provider, scrub(f"{type(exc).__name__}: {exc}", secrets))
