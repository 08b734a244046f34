"""Keeping secrets out of everything a run writes: reports, verdicts, CSVs, JUnit XML, the terminal.

Two rules, applied where text leaves llmjury's hands: spec options named like secrets
(`api_key`, `token`, `password`, ...) are written as `***`, and provider error texts are scrubbed
of the provider's own key and of anything shaped like a bearer token or an API key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"
_SECRET_OPTION = re.compile(
    r"(?P<name>[;,]\s*[\w-]*(?:key|token|secret|password|passwd|auth)[\w-]*\s*=)(?P<value>[^;,+*\s]*)", re.IGNORECASE)
_KEY_SHAPES = re.compile(
    r"(?:(?<=Bearer )|(?<=bearer ))[A-Za-z0-9._~+/=-]+"  # an Authorization header echoed back (token68)
    r"|\bsk-[A-Za-z0-9_-]{8,}"  # OpenAI-style keys
    r"|\bAIza[0-9A-Za-z_-]{20,}"  # Google API keys
    r"|\b(?:xox[abpr]|ghp|gho|hf)_[A-Za-z0-9_-]{8,}"  # Slack, GitHub, Hugging Face tokens
)


def redact_spec(text: str) -> str:
    """A provider spec (or any command-line argument holding one) with secret-named options masked."""
    def mask(match: re.Match[str]) -> str:
        if match.group("name").rstrip("= ").lower().endswith("_env"):  # names a variable, holds no secret
            return match.group(0)
        return match.group("name") + MASK

    return _SECRET_OPTION.sub(mask, text)


def scrub(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` without the given secret values and without bearer tokens or key-shaped strings."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, MASK)
    return _KEY_SHAPES.sub(MASK, text)
