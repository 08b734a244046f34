"""Tracebacks formatted off pytest's thread without racing it.

On CPython 3.11, `traceback` finds the caret anchors of each frame (`~~~^^^`) with `ast.parse`, and
`ast.parse` keeps its recursion depth in state the interpreter shares between threads: the engine
thread formatting a failed case while pytest's thread parses source for its own report can stop
the run with `INTERNALERROR SystemError: AST constructor recursion depth mismatch`. Frames without
column positions are formatted without carets, and without `ast.parse`.
"""

from __future__ import annotations

import traceback


def format_exception(exc: BaseException) -> str:
    """The exception's whole traceback, chained causes included, as `traceback.format_exception`
    writes it but without caret lines, so formatting never parses source."""
    report = traceback.TracebackException.from_exception(exc)
    _drop_columns(report, set())
    return "".join(report.format()).rstrip()


def _drop_columns(report: traceback.TracebackException, seen: set[int]) -> None:
    if id(report) in seen:
        return
    seen.add(id(report))
    for frame in report.stack:
        frame.colno = frame.end_colno = None
    for linked in (report.__cause__, report.__context__, *(getattr(report, "exceptions", None) or ())):
        if linked is not None:
            _drop_columns(linked, seen)
