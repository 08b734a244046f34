"""One TLS context a process for every SDK client.

openai and google-genai build a TLS context for each client they make, loading the CA certificates
each time: about 20 ms of CPU for an openai client and 90 ms for a google-genai one (three contexts).
A run makes a client for each provider and role in every process, and the batch lane more. Both SDKs
take a context of the caller's, and an `ssl.SSLContext` may be shared by connections and threads.

The shared context is the one httpx2, the HTTP library of both SDKs' current releases, builds by
default: the system's trust store, or `SSL_CERT_FILE`/`SSL_CERT_DIR` when set.
"""

from __future__ import annotations

import functools
import ssl

import httpx2


@functools.cache
def shared_tls() -> ssl.SSLContext:
    """httpx2's default TLS context, built at the first call."""
    return httpx2.create_ssl_context()
