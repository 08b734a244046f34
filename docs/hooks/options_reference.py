"""mkdocs hook: the options reference is rendered from llmjury's own `pytest_addoption`, so the page
lists exactly what the installed plugin declares and cannot go stale.

The plugin is loaded the way pytest loads it (its `pytest11` entry point) into a fresh pytest
config, whose parser then holds every option and ini key it declared. An option or ini key without
help text fails the build: the page would have nothing to say about it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from _pytest.config import get_config  # pytest's own config factory: the parser a real run fills

PLACEHOLDER = "<!-- llmjury-options -->"
PREFIX = "llm"


@dataclass(frozen=True)
class Option:
    """One command-line option or ini key as the plugin declared it."""

    name: str
    help: str
    detail: str  # metavar, choices or ini type


def plugin() -> Any:
    """llmjury's pytest plugin, found by the entry point pytest itself uses."""
    (point,) = entry_points(group="pytest11", name="llmjury")
    return point.load()


def declared(*plugins: Any) -> tuple[list[Option], list[Option]]:
    """The `--llm-*` options and `llm_*` ini keys the plugins add to a fresh pytest parser."""
    config = get_config()
    for module in plugins:
        config.pluginmanager.register(module)
    parser = config._parser
    options = []
    for group in parser._groups:
        for argument in group.options:
            names = [name for name in argument.names() if name.startswith(f"--{PREFIX}-")]
            if names:
                attrs = argument.attrs()
                text = expanded(attrs.get("help") or "", attrs)
                detail = value_of(attrs)
                options.append(Option(", ".join(names), text, detail))
    inis = [Option(name, text, str(kind or "string")) for name, (text, kind, *_rest) in parser._inidict.items()
            if name.startswith(f"{PREFIX}_")]
    missing = [option.name for option in options + inis if not option.help or option.help == argparse.SUPPRESS]
    if missing:
        raise ValueError(f"llmjury options without help text: {', '.join(missing)}; give each a help= string")
    return options, inis


def expanded(text: str, attrs: dict[str, Any]) -> str:
    """Help text as `pytest --help` prints it (argparse's `%(default)s` filled in, `%%` as %); text
    argparse cannot format is shown as declared."""
    try:
        return text % {"prog": "pytest", **attrs}
    except (KeyError, TypeError, ValueError):
        return text


def value_of(attrs: dict[str, Any]) -> str:
    """What an option takes, as the page shows it: its choices, its metavar, N, VALUE or nothing (a flag)."""
    if attrs.get("choices"):
        return ", ".join(f"`{choice}`" for choice in attrs["choices"])
    if attrs.get("action") in ("store_true", "store_false"):
        return ""
    return f"`{attrs.get('metavar') or ('N' if attrs.get('type') is int else 'VALUE')}`"


def cell(text: str) -> str:
    """Text made safe for one markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def render(options: list[Option], inis: list[Option]) -> str:
    """The reference tables: every option, then every ini key, in declaration order."""
    lines = ["## Command-line options", "", "| option | value | what it does |", "|---|---|---|"]
    lines += [f"| `{o.name}` | {o.detail} | {cell(o.help)} |" for o in options]
    lines += ["", "## Ini keys", "", "In `pytest.ini`, `[tool.pytest.ini_options]` of `pyproject.toml`, `tox.ini` or "
              "`setup.cfg`; a command-line option wins over its ini key.", "",
              "| key | type | what it sets |", "|---|---|---|"]
    lines += [f"| `{i.name}` | {i.detail} | {cell(i.help)} |" for i in inis]
    return "\n".join(lines) + "\n"


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    """mkdocs event: fill the options page's placeholder with the generated tables."""
    if PLACEHOLDER not in markdown:
        return markdown
    return markdown.replace(PLACEHOLDER, render(*declared(plugin())))
