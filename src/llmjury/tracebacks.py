"""Tracebacks formatted off pytest's thread without racing it.

On CPython 3.11, `traceback` finds the caret anchors of each frame (`~~~^^^`) with `ast.parse`, and
`ast.parse` keeps its recursion depth in state the interpreter shares between threads: the engine
thread formatting a failed case while pytest's thread parses source for its own report can stop
the run with `INTERNALERROR SystemError: AST constructor recursion depth mismatch`. Frames without
column positions are formatted without carets, and without `ast.parse`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import traceback
from pathlib import Path

#: Frames from these folders are the machinery that ran a test's body, not the test: a failure
#: handed on from another worker shows the frames of the test's own code, as a local one does.
_MACHINERY = (str(Path(__file__).parent), str(Path(asyncio.__file__).parent),
              str(Path(concurrent.futures.__file__).parent), str(Path(threading.__file__)))


def format_exception(exc: BaseException, *, own_frames: bool = False) -> str:
    """The exception's traceback, chained causes included, as `traceback.format_exception` writes
    it but without caret lines, so formatting never parses source; with `own_frames`, only the
    frames of the code under test (llmjury's, asyncio's and thread frames left out, unless
    nothing else is left)."""
    report = traceback.TracebackException.from_exception(exc)
    _drop_columns(report, set(), own_frames)
    return "".join(report.format()).rstrip()


def _drop_columns(report: traceback.TracebackException, seen: set[int], own_frames: bool) -> None:
    if id(report) in seen:
        return
    seen.add(id(report))
    if own_frames:
        own = [frame for frame in report.stack if not frame.filename.startswith(_MACHINERY)]
        if own:
            report.stack = traceback.StackSummary.from_list(own)
    for frame in report.stack:
        frame.colno = frame.end_colno = None
    for linked in (report.__cause__, report.__context__, *(getattr(report, "exceptions", None) or ())):
        if linked is not None:
            _drop_columns(linked, seen, own_frames)
