"""Prompt templates live in files under `prompts/`; code only renders them.

Jinja2 is the renderer because it is the templating library Python projects already know,
it fails loudly on missing variables (StrictUndefined), and a project can shadow any bundled
prompt by putting a file with the same relative path in its own prompts directory.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llmjury.errors import ConfigError
from llmjury.reading.declaration import Declaration
from llmjury.reading.words import prompt_language

if TYPE_CHECKING:
    import jinja2

BUNDLED_PROMPTS = Path(__file__).with_name("prompts")


GENERATION_FILE = "generation.toml"
READING_FILE = "reading.toml"
GENERATION_KEYS = frozenset({"temperature", "max_tokens", "top_p"})


@dataclass(frozen=True)
class RenderedPrompt:
    """A rendered template, the identity of the template that produced it, and how its answer is
    sampled (`generation.toml`: temperature, max_tokens)."""

    name: str
    version: str
    text: str
    generation: dict[str, Any] = field(default_factory=dict)

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
        self._search = search
        self._versions: dict[str, str] = {}
        self._languages: dict[str, str | None] = {}  # a template's language, read once (every repair asks it)
        self._generation = _generation_tables([Path(d) for d in search])
        self._reading = _reading_tables([Path(d) for d in search])
        self._json: jinja2.Environment | None = None

    @cached_property
    def _env(self) -> jinja2.Environment:
        """Built at the first template read: a run whose pipelines render none (a suite that writes
        its requests in code, an xdist controller) never imports jinja2."""
        import jinja2

        return jinja2.Environment(
            loader=jinja2.FileSystemLoader(self._search),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=False,
            autoescape=False,
        )

    @property
    def directories(self) -> list[str]:
        """Where templates are looked up, the project's before the bundled ones."""
        return list(self._search)

    @property
    def environment(self) -> jinja2.Environment:
        """The jinja2 environment, for a check that reads a template's variables (`jinja2.meta`)."""
        return self._env

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
        return RenderedPrompt(name=name, version=self.version(name), text=template.render(**variables),
                              generation=self.generation(name))

    def generation(self, name: str) -> dict[str, Any]:
        """How answers to `name` are sampled: the first prompts directory whose generation.toml has
        an entry for it decides (the project's before the bundled ones)."""
        return dict(self._generation.get(name, {}))

    def reading(self, name: str) -> Declaration:
        """What `name` declares about its answers' decision (`reading.toml`: its language, more names
        for its options, the decision's format); the first prompts directory that declares it decides."""
        return self._reading.get(name, Declaration())

    def language(self, name: str) -> str | None:
        """The language `name` asks in, which its repair call asks in too: its declaration's
        (`reading.toml`), else its own text's (`prompt_language`); None for no such template."""
        import jinja2

        if name not in self._languages:
            declared = self.reading(name).language
            try:
                self._languages[name] = declared if declared is not None else prompt_language(self.source(name))
            except jinja2.TemplateNotFound:
                self._languages[name] = None
        return self._languages[name]

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


def _generation_tables(directories: Sequence[Path]) -> dict[str, dict[str, Any]]:
    """Every directory's generation.toml, merged per template with the earlier directory winning."""
    tables: dict[str, dict[str, Any]] = {}
    for directory in reversed(directories):
        path = directory / GENERATION_FILE
        if not path.is_file():
            continue
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: not a TOML table of prompts ({exc})") from None
        for template, entry in data.items():
            unknown = set(entry) - GENERATION_KEYS if isinstance(entry, dict) else {"(not a table)"}
            if unknown:
                raise ConfigError(f"{path} [{template}]: unknown keys {sorted(unknown)}; "
                                  f"use {sorted(GENERATION_KEYS)}")
            tables[template] = {**tables.get(template, {}), **entry}
    return tables


def _reading_tables(directories: Sequence[Path]) -> dict[str, Declaration]:
    """Every directory's reading.toml, the earlier directory's entry winning for a template; a fault
    is a ConfigError at start-up naming the file and the template."""
    tables: dict[str, Declaration] = {}
    for directory in reversed(directories):
        path = directory / READING_FILE
        if not path.is_file():
            continue
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
            tables |= {template: Declaration.parse(entry, f"{path} [{template}]") for template, entry in data.items()}
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: not a TOML table of prompts ({exc})") from None
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    return tables


def _json_value(value: Any) -> Any:
    """Each expression of a JSON template as a JSON value, unless `tojson` already made it one."""
    import jinja2
    import markupsafe

    if isinstance(value, markupsafe.Markup):
        return value
    if isinstance(value, jinja2.Undefined):
        str(value)  # a StrictUndefined raises UndefinedError here, naming the missing name or attribute
    try:
        return json.dumps(value, ensure_ascii=False)
    except TypeError:
        raise ValueError(f"{type(value).__name__} value is not JSON: {value!r}"[:200]) from None


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
