"""How a run stops on SIGINT and SIGTERM: within a moment, and always with its report on disk.

The process that reports (xdist's controller, or the only process under `-n 0`) handles both
signals. The first one interrupts the run as Ctrl-C does: pytest ends the session, which writes
the report of what finished, marked incomplete with the cause. It is also passed on to xdist's
workers as SIGINT, so they stop their tests and cancel their calls now, and once the report is
written they are ended (xdist's teardown would wait 10 s for them, then kill them). A CI cancel
sends SIGINT and then SIGTERM: any signal that comes while the session is finishing is held, so
it cannot abort the report's writing, and the process ends by it as soon as the report is written.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Generator
from typing import Any

import pytest

#: What `summary.json`'s `stopped.by` says for each signal.
CAUSES = {signal.SIGINT: "KeyboardInterrupt (Ctrl-C)", signal.SIGTERM: "SIGTERM"}


class Interrupts:
    """Registered only where the run reports. `on_stop` is told the cause of the first signal."""

    def __init__(self, on_stop: Callable[[str], None]) -> None:
        self.on_stop = on_stop
        #: A first signal came, or the session is finishing: a signal now is held, not raised.
        self.holding = False
        #: The session is over (its report written): a held or new signal ends the process.
        self.over = False
        self.held: signal.Signals | None = None
        self.stopped = False  # a signal interrupted the run
        self._previous: dict[signal.Signals, Any] = {}
        #: xdist's workers (registered as a plugin of its own only where xdist is).
        self.workers = XdistWorkers()

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Installed once the session starts: before it, pytest's own handling is the right one. A
        signal the process was started ignoring (SIGINT for a job a shell put in the background)
        stays ignored."""
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in CAUSES:
            if signal.getsignal(signum) is not signal.SIG_IGN:
                self._previous[signum] = signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, frame: Any) -> None:
        which = signal.Signals(signum)
        if self.over:
            self._end(which)
        if self.holding:
            self.held = self.held or which
            return
        self.holding = True
        self.stopped = True
        self.on_stop(CAUSES[which])
        self.workers.interrupt()
        raise KeyboardInterrupt(which.name)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, Any, Any]:
        """Around every plugin's session end: a signal meanwhile is held, not raised into the
        report's writing; whatever comes after the session ends the process at once."""
        self.holding = True
        try:
            return (yield)
        finally:
            self.over = True
            if self.held is not None:
                self._end(self.held)

    @pytest.hookimpl(tryfirst=True, specname="pytest_sessionfinish")
    def pytest_sessionfinish_after_report(self, session: pytest.Session) -> None:
        """Right after the report is written: the plugin registers this object before the session
        that writes it, and among `tryfirst` impls the later registered is called first, so this
        one comes next. A run a signal stopped ends its workers now (they were interrupted and their
        answers are in the crash-safe cache already): xdist's teardown would otherwise wait up to
        10 s for them. A held signal ends this process now."""
        if self.stopped:
            self.workers.interrupt(signal.SIGTERM)
        if self.held is not None:
            self.over = True
            self._end(self.held)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """Give the signals back to the handlers they had, as the run ends."""
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()

    def _end(self, which: signal.Signals) -> None:
        """End the process by `which`, as its sender asked, now that the report is on disk."""
        self.workers.interrupt()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # a closed or broken stream
                stream.flush()
        signal.signal(which, signal.SIG_DFL)
        os.kill(os.getpid(), which)


class XdistWorkers:
    """The controller's xdist workers, to pass an interruption on to (registered only with xdist,
    whose hooks would otherwise be unknown)."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []

    def pytest_configure_node(self, node: Any) -> None:
        """Each worker xdist starts: the ones an interruption is passed on to."""
        self.nodes.append(node)

    def interrupt(self, which: signal.Signals = signal.SIGINT) -> None:
        """`which` to each worker that runs as a local process of ours (xdist's `popen`; a remote
        worker's pid would name a process of this machine that is not it)."""
        for node in self.nodes:
            gateway = getattr(node, "gateway", None)
            spec = getattr(gateway, "spec", None)
            # xdist caches the worker's remote info (its pid) when it sets the worker up.
            pid = getattr(getattr(gateway, "_cache_rinfo", None), "pid", None)
            if spec is None or not spec.popen or spec.via or not isinstance(pid, int):
                continue
            try:
                os.kill(pid, which)
            except OSError:
                continue  # it has ended already
