"""mkdocs hook: the summary.json reference is rendered from the typed `RunSummary` that writes it,
so the page lists exactly the fields a run writes and cannot go stale.

Each model the summary is made of becomes a table of its fields, their types and whether a run
always writes them; a family's own figures ride beside the core counts of its section (see the
family's page) and end in `Metric`s, the leaves every gate path reads.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from typing import Any

from pydantic import BaseModel

from llmjury import model

PLACEHOLDER = "<!-- llmjury-summary -->"
#: The summary's parts, in the order the page shows them.
MODELS: tuple[type[Any], ...] = (model.RunSummary, model.Status, model.RunInfo, model.Usage, model.BudgetFacts,
                                 model.FamilySummary, model.Metric, model.GateResult)


def type_text(annotation: Any) -> str:
    """A field's type as a reader writes it: `int`, `list[str]`, `Metric | None`."""
    text = repr(annotation) if not isinstance(annotation, type) else annotation.__name__
    text = re.sub(r"\b(?:typing|llmjury\.model|collections\.abc)\.", "", text)
    return text.replace("NoneType", "None").replace("<class '", "").replace("'>", "")


def rows(part: type[Any]) -> list[tuple[str, str, str]]:
    """(field, type, always written) for a pydantic model or a dataclass of the summary."""
    if issubclass(part, BaseModel):
        found = [(name, type_text(info.annotation), "yes" if info.is_required() else "default")
                 for name, info in part.model_fields.items()]
        found += [(name, type_text(info.return_type), "computed") for name, info in part.model_computed_fields.items()]
        return found
    hints = typing.get_type_hints(part)
    return [(f.name, type_text(hints[f.name]), "yes") for f in dataclasses.fields(part)]


def render() -> str:
    """One table per part of the summary, each under the part's name and first docstring line."""
    lines = [f"Written by llmjury's `RunSummary` (version {model.SUMMARY_VERSION}). On disk each family's "
             "section sits at the top level under the family's name (`run.families` lists them); gate paths "
             "start there.", ""]
    for part in MODELS:
        doc = " ".join((part.__doc__ or "").strip().split("\n\n")[0].split())
        lines += [f"### `{part.__name__}`", "", doc, "", "| field | type | written |", "|---|---|---|"]
        lines += [f"| `{name}` | `{kind}` | {written} |" for name, kind, written in rows(part)]
        lines.append("")
    return "\n".join(lines)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    """mkdocs event: fill the reports page's placeholder with the generated tables."""
    if PLACEHOLDER not in markdown:
        return markdown
    return markdown.replace(PLACEHOLDER, render())
