"""The summary.json reference page is generated from the model that writes the file: every field of
every part is on it, so a field added to the model is documented by the build itself."""

from __future__ import annotations

from pathlib import Path

from script_module import script_module

from llmjury.model import FamilySummary, Metric, RunInfo, RunSummary

HOOK = Path(__file__).resolve().parents[1] / "docs" / "hooks" / "summary_reference.py"


def test_every_field_of_the_summary_model_is_on_the_page():
    hook = script_module(HOOK, "summary_reference")
    page = hook.on_page_markdown("# Reports\n\n<!-- llmjury-summary -->\n", page=None)
    for part in (RunSummary, RunInfo, FamilySummary, Metric):
        assert f"### `{part.__name__}`" in page
        for name in part.model_fields:
            assert f"| `{name}` |" in page, (part.__name__, name)
    assert "| `status` | `Status` | computed |" in page
    assert "| `value` | `float | None` | yes |" in page
