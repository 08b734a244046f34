"""The HTML reports' jinja2 templates (`llmjury/templates/`, package data), in one environment:
every value escaped unless the code marks it safe (SVG plots, views built from templates)."""

from __future__ import annotations

import functools

from jinja2 import Environment, PackageLoader, StrictUndefined


@functools.cache
def templates() -> Environment:
    """The report templates; an undefined name is an error, not an empty cell. One environment a
    process, so each template is compiled once (jinja2 caches the templates it loaded), not at
    every page, view and report."""
    return Environment(loader=PackageLoader("llmjury", "templates"), autoescape=True, undefined=StrictUndefined,
                       trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
