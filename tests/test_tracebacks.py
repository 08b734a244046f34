"""Tracebacks formatted on the engine thread never call ast.parse, which races pytest's own on 3.11."""

from __future__ import annotations

import ast
import traceback

import pytest

from llmjury.tracebacks import format_exception


def failing() -> None:
    values = {"a": 1}
    assert values["a"] + values["a"] == 3, "sum is off"


def caught() -> BaseException:
    try:
        try:
            failing()
        except AssertionError as inner:
            raise RuntimeError("while judging") from inner
    except RuntimeError as exc:
        return exc
    raise AssertionError("unreachable")


def test_a_traceback_is_formatted_without_parsing_source(monkeypatch):
    exc = caught()
    calls = []
    monkeypatch.setattr(ast, "parse", lambda *a, **k: calls.append(a) or pytest.fail("ast.parse called"))
    text = format_exception(exc)
    assert calls == []
    assert "AssertionError: sum is off" in text and "RuntimeError: while judging" in text
    assert 'assert values["a"] + values["a"] == 3' in text and "in failing" in text


def test_the_standard_formatter_would_parse_source_on_this_python(monkeypatch):
    # Guards the test above: on a Python whose traceback anchors carets with ast.parse, the plain
    # formatter calls it for this exception; if none does, the race cannot happen there either.
    exc = caught()
    calls = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda *a, **k: calls.append(a) or real(*a, **k))
    traceback.format_exception(exc)
    if not calls:
        pytest.skip("traceback.format_exception parses no source on this Python: nothing to race")
    assert format_exception(exc).count("Traceback") == "".join(traceback.format_exception(exc)).count("Traceback")
