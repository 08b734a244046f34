"""Keeping secrets out of everything a run writes: reports, verdicts, CSVs, JUnit XML, the terminal.

One function, `scrub`, applied wherever a spec, a URL or a provider's error becomes text for an
artefact; `redact_spec` is the same rules for text that names no known secret. The rules:
spec options named like secrets (`api_key`, `token`, `password`, ...) are written as `***`; so are
URL query parameters named like secrets (`?key=`, `&api_key=`, `&sig=`, ...) and a URL's user-info
(`https://user:pass@host` becomes `https://***@host`); provider error texts also lose the
provider's own key and anything shaped like a bearer or Basic credential or an API key. Log records go through
it too (`redact_log_records`): an HTTP client logs each URL it posts to, query key included.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from typing import Any

MASK = "***"
#: The end of a parameter name that says its value is a secret (`api_key`, `access_token`, `sig`).
_SECRET_NAME = r"[\w.-]*(?:key|token|secret|passw(?:or)?d|pwd|auth\w*|sig|signature|credentials?)"
_SECRET_OPTION = re.compile(
    r"(?P<name>[;,]\s*[\w-]*(?:key|token|secret|password|passwd|auth)[\w-]*\s*=)(?P<value>[^;,+*\s\"'<>\\]*)",
    re.IGNORECASE)
#: A secret-named query parameter; its value runs to the next parameter, option or quote (a `+`
#: or `*` is masked with it: better to hide the rest of a spec than a piece of a key).
_SECRET_QUERY = re.compile(rf"(?P<name>[?&]{_SECRET_NAME}=)(?P<value>[^&#;,\s\"'<>\\]*)", re.IGNORECASE)
#: A URL's user-info, whatever it holds (`user:password`, or a bare token as GitHub's URLs carry).
_USER_INFO = re.compile(r"(?P<scheme>\b[a-z][a-z0-9+.-]*://)(?P<info>[^/?#@\s\"'<>\\]+)@", re.IGNORECASE)
_KEY_SHAPES = re.compile(
    r"(?:(?<=Bearer )|(?<=bearer )|(?<=Basic )|(?<=basic ))[A-Za-z0-9._~+/=-]+"  # an Authorization header
    # echoed back: a bearer token, or Basic's base64 of the URL's `user:password` (token68)
    r"|\bsk-[A-Za-z0-9_-]{8,}"  # OpenAI-style keys
    r"|\bAIza[0-9A-Za-z_-]{20,}"  # Google API keys
    r"|\b(?:xox[abpr]|ghp|gho|hf)_[A-Za-z0-9_-]{8,}"  # Slack, GitHub, Hugging Face tokens
)


def is_secret_name(name: str) -> bool:
    """Whether a query parameter or option of this name holds a secret (`key`, `api_key`, `sig`)."""
    return re.fullmatch(_SECRET_NAME, name, re.IGNORECASE) is not None


def redact_spec(text: str) -> str:
    """A provider spec (or any command-line argument holding one) with secret-named options, secret
    query parameters and URL user-info masked."""
    return scrub(text)


def scrub(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` without the given secret values, secret-named spec options and URL parts, bearer
    tokens or key-shaped strings: the one redaction every artefact goes through."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, MASK)
    text = _SECRET_OPTION.sub(_mask_option, text)
    text = _SECRET_QUERY.sub(lambda match: match.group("name") + MASK, text)
    text = _USER_INFO.sub(lambda match: match.group("scheme") + MASK + "@", text)
    return _KEY_SHAPES.sub(MASK, text)


def _mask_option(match: re.Match[str]) -> str:
    if match.group("name").rstrip("= ").lower().endswith("_env"):  # names a variable, holds no secret
        return match.group(0)
    return match.group("name") + MASK


def redact_log_records() -> Callable[[], None]:
    """Scrub every log record's message from now on (the SDKs' HTTP clients log each request's URL,
    and a log line reaches the terminal and JUnit XML); returns the function that stops it."""
    previous = logging.getLogRecordFactory()

    def scrubbed_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a malformed call: logging reports it when the record is emitted
            return record
        clean = scrub(message)
        if clean != message:
            record.msg, record.args = clean, ()
        return record

    logging.setLogRecordFactory(scrubbed_record)
    return lambda: logging.setLogRecordFactory(previous)
