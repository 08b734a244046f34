"""The garbage collector held off while saved verdicts become a report.

A report builds hundreds of thousands of objects that live to its end (verdict records, their typed
verdicts, the summary) and almost no cycles: each full collection the growing heap sets off walks all
of them again to free nothing (2 s of CPU for the offline suite's 37,000 verdicts). Held off, the
few cycles made meanwhile (plots' figures) are freed by the first collection after.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def held_off() -> Iterator[None]:
    """No automatic collection inside; the collector is as it was after (a caller's hold is kept)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
