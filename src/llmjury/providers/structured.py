"""Which error answers prove that a server refuses a form of structured output.

A provider steps down from a strict form (`json_schema`) to a looser one only on such proof, never
on a server error or a refusal about something else: a transient 500 must not silently drop schema
enforcement for the rest of a run. Proof is a 4xx whose body names the structured-output parameter,
or the one 500 known to mean the same thing: llama-cpp-python's server, which reports its request
validation failure on `response_format` as HTTP 500 `internal_server_error`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: Request parameters that carry structured output in the OpenAI and Gemini APIs.
PARAMETERS = ("response_format", "json_schema", "json_object", "response_schema", "response_json_schema",
              "responseschema", "responsejsonschema", "response_mime_type", "responsemimetype", "schema")
_NAMES_PARAMETER = re.compile(r"\b(?:" + "|".join(PARAMETERS) + r")\b", re.IGNORECASE)
#: Statuses that refuse a request's form (not its rate, its key or the server's health).
_REFUSING = frozenset({400, 415, 422})
#: llama-cpp-python's wrapper of a pydantic validation error that failed on `response_format`.
_LLAMA_CPP_VALIDATION = re.compile(r"validation error.*?'loc': \([^)]*'response_format'", re.DOTALL)
EXCERPT_CHARS = 120


def refusal_proof(status: int, body: Any, message: str) -> str | None:
    """A short excerpt of an error answer that proves the structured-output form asked for is
    refused, or None when the answer proves nothing about it (a 5xx, a rate limit, another field)."""
    error: Mapping[str, Any] = body if isinstance(body, Mapping) else {}
    text = str(error.get("message") or message or "")
    if status in _REFUSING:
        param = error.get("param") or error.get("field")
        if param:  # the server named the field it refuses: trust that name alone
            return excerpt(f"param {param}: {text}") if _NAMES_PARAMETER.search(str(param)) else None
        return excerpt(text) if _NAMES_PARAMETER.search(text) else None
    if status == 500 and error.get("type") == "internal_server_error":
        return excerpt(text) if _LLAMA_CPP_VALIDATION.search(text) else None
    return None


def excerpt(text: str) -> str:
    """The answer on one line, cut to `EXCERPT_CHARS` from the word before the parameter it names."""
    flat = " ".join(text.split())
    named = _NAMES_PARAMETER.search(flat)
    start = flat.rfind(" ", 0, max(0, named.start() - 10)) + 1 if named else 0
    start = min(start, max(0, len(flat) - EXCERPT_CHARS))
    cut = flat[start:start + EXCERPT_CHARS]
    return ("…" if start else "") + cut + ("…" if start + EXCERPT_CHARS < len(flat) else "")
