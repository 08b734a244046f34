"""BLAS on one thread while the run's figures are computed: their fits are small, and a BLAS pool's
threads spin between them, taking the CPU from the other process on a 2-core machine.

threadpoolctl finds the BLAS libraries by walking every shared library the process has loaded, a few
milliseconds where pandas and matplotlib are loaded, and a session end limits BLAS once per family and
per comparison. What it found holds until the process imports another module (a BLAS library arrives with
an extension module), so it is looked for again only then.
"""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from functools import lru_cache

from threadpoolctl import ThreadpoolController


def one_blas_thread() -> AbstractContextManager[object]:
    """A context in which every loaded BLAS library runs on one thread, as before it on leaving."""
    limit: AbstractContextManager[object] = _controller(len(sys.modules)).limit(limits=1, user_api="blas")
    return limit


@lru_cache(maxsize=1)
def _controller(modules: int) -> ThreadpoolController:
    """The libraries loaded when `modules` modules were imported (the count keys the cache)."""
    return ThreadpoolController()
