"""Which judge has no API key, known at start-up.

A pull request from a fork (or Dependabot) gets no repository secrets: its judge would be refused
on every call, and its verdicts would differ from main's for a reason no gate should read as "the
judges differ". Said once, before any call, in words that name the cause.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from llmjury.providers.base import ProviderSpec

#: Per provider kind: the variables its key is read from (after `;api_key_env=`), and the variable
#: that points it at another server (a local one needs no key).
KEY_VARIABLES: dict[str, tuple[str, ...]] = {"openai": ("OPENAI_API_KEY",),
                                             "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
BASE_URL_VARIABLES = {"openai": "OPENAI_BASE_URL", "gemini": "GOOGLE_GEMINI_BASE_URL"}
#: The words that start the message (the workflow's compare step recognises a run stopped by it).
NO_KEY = "no key for"


def missing_key(spec: ProviderSpec, environ: Mapping[str, str] | None = None) -> str | None:
    """The message when `spec` needs a key and none is set (no `;api_key=`, no variable, no base URL), else None."""
    environ = os.environ if environ is None else environ
    if spec.kind not in KEY_VARIABLES or spec.text_option("api_key") or spec.text_option("base_url") \
            or environ.get(BASE_URL_VARIABLES[spec.kind]):
        return None
    own = spec.text_option("api_key_env")
    variables = ((own,) if own else ()) + KEY_VARIABLES[spec.kind]
    if any(environ.get(variable) for variable in variables):
        return None
    return (f"{NO_KEY} {spec.kind}: {' or '.join(dict.fromkeys(variables))} is not set "
            f"(a fork pull request gets no secrets); set it, or judge offline on forks")
