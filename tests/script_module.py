"""A script of the repository (a bench, a CI or docs helper) imported as a module, for its tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def script_module(path: Path, name: str, *, registered: bool = False) -> ModuleType:
    """The script at `path` as module `name`; `registered` puts it in `sys.modules` first, where its
    dataclasses look their module up (as mkdocs' hook loader does)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    if registered:
        sys.modules[name] = module
    sys.path.insert(0, str(path.parent))  # its folder's modules, as `python path` finds them
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module
