"""Prompt templates live in files under `prompts/`; code only renders them.

Jinja2 is the renderer because it is the templating library Python projects already know,
it fails loudly on missing variables (StrictUndefined), and a project can shadow any bundled
prompt by putting a file with the same relative path in its own prompts directory.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

BUNDLED_PROMPTS = Path(__file__).with_name("prompts")


@dataclass(frozen=True)
class RenderedPrompt:
    """A rendered template plus the identity of the template that produced it."""

    name: str
    version: str
    text: str

    @property
    def task(self) -> str:
        """`name@version`: stamped on requests so caches and reports know the exact prompt."""
        return f"{self.name}@{self.version}"


class PromptLibrary:
    """Finds templates in the project's prompt directories first, then in the bundled ones."""

    def __init__(self, directories: Sequence[Path] = ()) -> None:
        search = [str(d) for d in directories if d.is_dir()]
        if BUNDLED_PROMPTS.is_dir() and str(BUNDLED_PROMPTS) not in search:
            search.append(str(BUNDLED_PROMPTS))
        self._versions: dict[str, str] = {}
        self._env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(search),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=False,
            autoescape=False,
        )
        self._json: jinja2.Environment | None = None

    def source(self, name: str) -> str:
        """The raw template text, for hashing and for snapshot review."""
        src, _, _ = self._env.loader.get_source(self._env, name)  # type: ignore[union-attr]
        return src

    def version(self, name: str) -> str:
        """Content hash of the template file, read once per library (renders are a hot path)."""
        if name not in self._versions:
            self._versions[name] = hashlib.sha256(self.source(name).encode()).hexdigest()[:12]
        return self._versions[name]

    def render(self, name: str, **variables: Any) -> RenderedPrompt:
        """Render `name` with `variables`; a missing variable raises instead of rendering blank."""
        template = self._env.get_template(name)
        return RenderedPrompt(name=name, version=self.version(name), text=template.render(**variables))

    def render_json(self, name: str, **variables: Any) -> Any:
        """Render a JSON document template (an `http:` request body): every `{{ value }}` is written
        as a JSON value, so a quote or newline in the text cannot break the document or add fields.
        `{{ value | tojson }}` still works and is not encoded twice."""
        template = self._json_env().get_template(name)
        text = template.render(**variables)
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"template {name} did not render JSON ({exc.msg} at line {exc.lineno}); "
                             "write each value as {{ value }} without quotes around it") from None

    def _json_env(self) -> jinja2.Environment:
        if self._json is None:
            self._json = self._env.overlay(finalize=_json_value)
        return self._json


def _json_value(value: Any) -> Any:
    """Each expression of a JSON template as a JSON value, unless `tojson` already made it one."""
    return value if isinstance(value, markupsafe.Markup) else json.dumps(value, ensure_ascii=False)


_default: PromptLibrary | None = None


def library() -> PromptLibrary:
    """The process-wide library; the plugin replaces it with one that knows the project's dirs."""
    global _default
    if _default is None:
        _default = PromptLibrary()
    return _default


def use_library(lib: PromptLibrary) -> None:
    global _default
    _default = lib
