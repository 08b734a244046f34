import sys
import types

import numpy  # noqa: F401  (its BLAS library, loaded)
from threadpoolctl import threadpool_info

from llmjury.results import blas
from llmjury.results.blas import one_blas_thread


def blas_threads() -> list[int]:
    return [library["num_threads"] for library in threadpool_info() if library["user_api"] == "blas"]


def test_every_blas_library_runs_on_one_thread_inside_and_as_before_after():
    before = blas_threads()
    assert before
    with one_blas_thread():
        assert blas_threads() == [1] * len(before)
    assert blas_threads() == before


def test_the_libraries_are_looked_for_again_only_after_an_import(monkeypatch):
    with one_blas_thread():
        pass
    looked = blas._controller.cache_info().misses
    with one_blas_thread():
        pass
    assert blas._controller.cache_info().misses == looked
    monkeypatch.setitem(sys.modules, "llmjury_blas_probe", types.ModuleType("llmjury_blas_probe"))  # an import
    with one_blas_thread():
        assert blas_threads() == [1] * len(blas_threads())
    assert blas._controller.cache_info().misses == looked + 1
