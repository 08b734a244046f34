"""The documentation's runnable examples, read where they are written: each sits between
`<!-- example: NAME -->` and `<!-- /example -->` in one page of docs/ (or the README), so a test
runs exactly what a reader copies, whichever page holds it."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def example(name: str) -> tuple[Path, str]:
    """The one page holding the example NAME, and the text between its markers."""
    start, end = f"<!-- example: {name} -->", "<!-- /example -->"
    found = [(page, text) for page in PAGES if start in (text := page.read_text(encoding="utf-8"))]
    assert len(found) == 1, f"example {name!r} is marked in {len(found)} pages ({[str(p) for p, _ in found]}), not 1"
    page, text = found[0]
    body = text[text.index(start) + len(start):]
    assert end in body, f"example {name!r} in {page}: no {end} after {start}"
    return page, body[:body.index(end)]


def blocks(name: str, *languages: str) -> list[str]:
    """The fenced code blocks of example NAME, in page order, only those in `languages` when given."""
    _, text = example(name)
    found = re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)
    return [body for language, body in found if not languages or language in languages]
