"""Finding the families a run uses: the `llmjury.families` entry points and `llm_families` lines.

Each is checked against the contract (`llmjury.family.check_family`) once, at start-up.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache, partial
from importlib.metadata import EntryPoint, entry_points

from llmjury.errors import ConfigError
from llmjury.family import AnyFamily, check_family
from llmjury.providers.offline import Heuristic

ENTRY_POINT_GROUP = "llmjury.families"


def discover(extra: Iterable[str] = ()) -> dict[str, AnyFamily]:
    """Every installed family plus those named `module:attribute` in `extra`, by name."""
    found: dict[str, AnyFamily] = {}
    sources: list[tuple[str, Callable[[], object]]] = [
        (f"entry point {ep.name} = {ep.value}", ep.load) for ep in installed_entry_points(tuple(sys.path))]
    sources += [(f"llm_families line {line!r}", partial(_import, line)) for line in extra]
    for where, load in sources:
        try:
            family = check_family(load(), where)
        except ConfigError:
            raise
        except Exception as exc:  # an import error in a user's module
            raise ConfigError(f"family {where}: cannot load it ({type(exc).__name__}: {exc})") from exc
        other = found.get(family.name)
        if other is not None and other is not family:
            raise ConfigError(f"family {where}: another family is already named {family.name!r}")
        found[family.name] = family
    return dict(sorted(found.items()))


@lru_cache(maxsize=1)
def installed_entry_points(path: tuple[str, ...]) -> tuple[EntryPoint, ...]:
    """The families' entry points of the distributions on `path`, which keys the cache: finding them reads
    the entry points of every installed distribution, and a process starting pytest again (pytester's
    in-process runs) finds the same ones."""
    return tuple(entry_points(group=ENTRY_POINT_GROUP))


def offline_answers(families: Mapping[str, AnyFamily]) -> dict[str, Heuristic]:
    """The offline provider's answers of every family in use, by prompt template."""
    return {template: answer for family in families.values() for template, answer in family.offline().items()}


def _import(line: str) -> object:
    module, colon, attribute = line.strip().partition(":")
    if not colon or not module or not attribute:
        raise ConfigError(f"llm_families line {line!r}: write module:attribute, e.g. mypackage.evals:FAMILY")
    return getattr(importlib.import_module(module), attribute)
