"""Keeping a judging run's long-lived objects out of the garbage collector's way.

What start-up and collection built lives to the end of the session, and a full collection walks every
object of the run: frozen once collection is done, each later collection (during planning, tests, the
session end, pytest's cleanup, the interpreter's exit) walks only what came after. Its thresholds are
raised meanwhile: a run makes little cyclic garbage (a few objects per call), and at the default
thresholds the collector walked what every few calls left alive again and again, several times more
CPU than at these. Only a session with llmjury cases does this, so a pytest run without them keeps the
collector as it was.
"""

from __future__ import annotations

import atexit
import gc

import pytest

#: The collector's thresholds before this session raised them, set once it selected llmjury's tests.
THRESHOLDS = pytest.StashKey[tuple[int, ...]]()
#: Set once this session has taken objects out of the collector's way (gc.freeze), to give them back.
FROZEN = pytest.StashKey[bool]()

#: The thresholds of a judging run: a young collection every 10,000 new objects (700 by default), the
#: older generations every 10 of the one before. The run's peak memory stays as it was (bench/growth.py).
JUDGING_THRESHOLDS = (10_000, 10, 10)


def freeze_run(config: pytest.Config) -> None:
    """Set aside what collection built and raise the thresholds (both given back by `give_back_frozen`,
    the session's last cleanup)."""
    config.stash[THRESHOLDS] = gc.get_threshold()
    gc.set_threshold(*JUDGING_THRESHOLDS)
    freeze(config)
    freeze_at_exit()


def judging(config: pytest.Config) -> bool:
    """Did this process select llmjury's tests (and so raise the thresholds, and freeze the run when
    it may)? An xdist controller selects none: its workers say whether they did."""
    return THRESHOLDS in config.stash


def freeze_at_exit() -> None:
    """Freeze what is alive when the interpreter exits: its last full collection would walk every
    object of the run once more (0.3-0.5 s per process after 1000 cases) in a process that is ending."""
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)


def may_freeze(config: pytest.Config) -> bool:
    """False when a caller of this session (`pytest.main` in a process of its own design, a test
    suite running pytest in-process) froze objects before the session did: `gc.unfreeze` gives back
    every frozen object at once, so the session would hand the caller's back to the collector too.
    It leaves the freeze to the caller then."""
    return config.stash.get(FROZEN, False) or gc.get_freeze_count() == 0


def freeze(config: pytest.Config) -> None:
    """Set aside what lives now, if this session may (`may_freeze`)."""
    if may_freeze(config):
        config.stash[FROZEN] = True
        gc.freeze()


def settle_before_cleanup(config: pytest.Config, judged: bool) -> None:
    """pytest's cleanup runs five full garbage collections to surface unraisable exceptions, each
    walking every object of the run (1.2 s of CPU after 1000 cases; in an xdist controller, every
    test's reports and verdicts): one collection here, while pytest still records what it raises,
    then what lives is set aside until that cleanup is over (give_back_frozen), so they walk only
    what the other plugins' unconfigure leave. `judged`: the session selected llmjury's tests."""
    if judged and may_freeze(config):
        gc.collect()
        freeze(config)


def give_back_frozen(config: pytest.Config) -> None:
    """Hand what the session froze back to the garbage collector, and its thresholds, as its last cleanup."""
    if config.stash.get(FROZEN, False):
        gc.unfreeze()
    if (thresholds := config.stash.get(THRESHOLDS, None)) is not None:
        gc.set_threshold(*thresholds)
