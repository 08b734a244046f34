"""The own-evals page's example of cases read from a file of your own, run as a reader copies it."""

from __future__ import annotations

import json

import pytest
from doc_examples import blocks


def test_cases_from_your_own_file_are_read_validated_and_selected_by_their_markers(pytester: pytest.Pytester):
    (code,) = blocks("own-cases-from-a-file", "python")
    pytester.makepyfile(test_recipes=code)
    records = [{"id": "r1", "query": "a quick stew", "cuisine": "italian"},
               {"id": "r2", "query": "a cold soup", "cuisine": "spanish"}]
    (pytester.path / "recipes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--strict-markers", "-m", "italian")
    result.assert_outcomes(passed=1, deselected=1)
    (pytester.path / "recipes.jsonl").write_text('{"id": "r1", "query": "a stew"}\n')  # no cuisine
    broken = pytester.runpytest_inprocess("-p", "no:randomly")
    assert broken.ret == pytest.ExitCode.INTERRUPTED and "cuisine" in broken.stdout.str()
