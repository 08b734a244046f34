"""The JSON body an `http:` service receives, and the check of its template at start-up.

Without `;body=`, the body is `{"messages": [...]}`: every message of the request, the system
prompt first when the request has one. With `;body=NAME`, the prompt template NAME (looked up in
the project's prompt directories, then the bundled ones) renders the body from these variables:

| variable | value |
|---|---|
| `messages` | every message, `[{"role": "system"|"user"|"assistant", "content": text}]`, the system prompt included |
| `turns` | the same without the system prompt: the dialogue alone |
| `system` | the system prompt's text (`""` when the request has none) |
| `history` | the messages as text, one `[role]: content` a line, the system prompt included |
| `dialogue` | the turns as text, one `[role]: content` a line, without the system prompt |
| `last` | the last message, `{"role", "content"}` |

A template that is missing, names another variable, or does not render JSON is a start-up error
naming the role's spec, before any call is paid for.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from llmjury.chat import Message
from llmjury.errors import ConfigError
from llmjury.prompts import PromptLibrary
from llmjury.providers.base import ProviderSpec

VARIABLES = {
    "messages": "every message as {role, content}, the system prompt included",
    "turns": "the messages without the system prompt",
    "system": "the system prompt's text ('' without one)",
    "history": "the messages as '[role]: content' lines, the system prompt included",
    "dialogue": "the turns as '[role]: content' lines",
    "last": "the last message, {role, content}",
}
#: The request the start-up check renders a template with: a system prompt and two turns.
SAMPLE = (Message(role="system", content="You are a tutor."), Message(role="user", content="What is 3 x 4?"),
          Message(role="assistant", content="What do you think?"), Message(role="user", content="7"))


def variables(messages: Sequence[Message]) -> dict[str, Any]:
    """The values a body template sees for one request's messages."""
    every = [m.model_dump() for m in messages]
    turns = [m for m in every if m["role"] != "system"]
    return {"messages": every, "turns": turns,
            "system": "\n".join(m["content"] for m in every if m["role"] == "system"),
            "history": "\n".join(f"[{m['role']}]: {m['content']}" for m in every),
            "dialogue": "\n".join(f"[{m['role']}]: {m['content']}" for m in turns),
            "last": every[-1]}


def check_body_templates(specs: Iterable[tuple[str, ProviderSpec]], directories: Sequence[Path]) -> None:
    """Every `http:` spec's body template (looked up in `directories`, then the bundled prompts) exists,
    reads only the variables above and renders JSON."""
    bodies = [(where, name) for where, spec in specs if spec.kind == "http" and (name := spec.text_option("body"))]
    if not bodies:
        return  # templates and jinja2 load only for a template to check, not in every run's start-up
    prompts = PromptLibrary(directories)
    import jinja2
    from jinja2 import meta

    for where, name in bodies:
        prefix = f"{where}: body template {name}"
        try:
            source = prompts.source(name)
        except jinja2.TemplateNotFound:
            raise ConfigError(f"{prefix}: no such template in the prompt directories "
                              f"({', '.join(prompts.directories)}); put it under the project's prompts "
                              "directory (llm_prompts) or fix the name") from None
        except jinja2.TemplateSyntaxError as exc:
            raise ConfigError(f"{prefix}: not a template ({exc.message}, line {exc.lineno})") from None
        unknown = sorted(meta.find_undeclared_variables(prompts.environment.parse(source)) - set(VARIABLES))
        if unknown:
            raise ConfigError(f"{prefix}: unknown variable(s) {', '.join(unknown)}; a body template sees "
                              + "; ".join(f"{key} ({what})" for key, what in VARIABLES.items()))
        try:
            prompts.render_json(name, **variables(SAMPLE))
        except (ValueError, jinja2.TemplateError) as exc:
            raise ConfigError(f"{prefix}: {exc}") from None
