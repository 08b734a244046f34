"""What an HTTP status says about retrying, shared by every provider that speaks HTTP."""

from __future__ import annotations

from typing import Any

RETRYABLE_STATUS = frozenset({408, 409, 429})


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
