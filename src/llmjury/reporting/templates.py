"""The HTML reports' jinja2 templates (`llmjury/templates/`, package data), in one environment:
every value escaped unless the code marks it safe (SVG plots, views built from templates)."""

from __future__ import annotations

from jinja2 import Environment, PackageLoader, StrictUndefined


def templates() -> Environment:
    """The report templates; an undefined name is an error, not an empty cell."""
    return Environment(loader=PackageLoader("llmjury", "templates"), autoescape=True, undefined=StrictUndefined,
                       trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
