"""SIGINT and SIGTERM, in any sequence, leave a report marked incomplete with its cause: the first
signal interrupts the run (and its xdist workers), a later one cannot abort the report's writing
and ends the process once the report is on disk."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from priced_toy import write_toy

from llmjury.interrupts import CAUSES, Interrupts

# A shell that starts a job in the background makes it ignore SIGINT, which a child inherits (and
# llmjury then leaves ignored): the run restores Ctrl-C itself, whoever started this test.
PYTEST_WITH_CTRL_C = ("import signal, sys, pytest; signal.signal(signal.SIGINT, signal.default_int_handler); "
                      "sys.exit(pytest.console_main())")
#: Generous: how long a run may take to write its report after a signal before the test gives up
#: (bench/interrupts.py measures the time itself).
REPORT_TIMEOUT_S = 60.0


def wait_for(found, timeout: float) -> bool:
    """Poll `found()` until it is true or `timeout` has passed (an event seen in the file system)."""
    deadline = time.monotonic() + timeout
    while not found():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def summary_files(path: Path) -> list[Path]:
    return list((path / "reports").glob("*/summary.json"))


@pytest.mark.e2e  # a pytest process of its own, signalled while two workers wait on held calls
@pytest.mark.parametrize("signals", [
    [signal.SIGINT], [signal.SIGTERM], [signal.SIGINT, signal.SIGTERM], [signal.SIGTERM, signal.SIGTERM],
], ids=lambda sigs: "-then-".join(s.name for s in sigs))
def test_any_sequence_of_signals_leaves_a_report_marked_incomplete(pytester, openai_server, signals):
    write_toy(pytester)
    release, asked = threading.Event(), threading.Event()

    def reply(body: dict, index: int) -> str:
        asked.set()
        release.wait(timeout=120)  # never answered while the run is being stopped
        return "reply"

    openai_server.reply = reply
    command = [sys.executable, "-c", PYTEST_WITH_CTRL_C, "-n", "2", "--llm-progress", "off",
               "--llm-judge", f"openai:priced;base_url={openai_server.base_url}"]
    with subprocess.Popen(command, cwd=pytester.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as run:
        try:
            assert asked.wait(timeout=120), "no call reached the server"  # the event: calls are in flight
            os.kill(run.pid, signals[0])
            for later in signals[1:]:
                # A CI cancel's second signal a second later, or at once if the report is already there.
                wait_for(lambda: bool(summary_files(pytester.path)), timeout=1.0)
                os.kill(run.pid, later)
            assert wait_for(lambda: bool(summary_files(pytester.path)), REPORT_TIMEOUT_S)
            output = run.communicate(timeout=120)[0]
        finally:
            release.set()
            run.kill()  # a run that ignored its signals must not outlive the test
    (path,) = summary_files(pytester.path)
    summary = json.loads(path.read_text())
    assert summary["complete"] is False, output
    assert summary["run"]["stopped"]["by"] == CAUSES[signals[0]]
    # One signal: pytest's interrupted exit. A later one ends the process by itself once the report
    # is on disk (or, had the run already ended, changes nothing).
    ended_by = {pytest.ExitCode.INTERRUPTED} | {-s for s in signals[1:]}
    assert run.returncode in ended_by, output


# -- the handler, without a process --------------------------------------------------------------
class Ended(Exception):
    """Stands for the process ending by a signal."""


@pytest.fixture
def interrupts(monkeypatch) -> tuple[Interrupts, list[str]]:
    causes: list[str] = []
    handler = Interrupts(causes.append)

    def end(which: signal.Signals) -> None:
        raise Ended(which.name)

    monkeypatch.setattr(handler, "_end", end)
    return handler, causes


def test_the_first_signal_interrupts_and_names_its_cause(interrupts):
    handler, causes = interrupts
    with pytest.raises(KeyboardInterrupt):
        handler._on_signal(signal.SIGTERM, None)
    assert causes == ["SIGTERM"]


def test_a_second_signal_is_held_until_the_report_is_written_then_ends_the_process(interrupts):
    handler, causes = interrupts
    with pytest.raises(KeyboardInterrupt):
        handler._on_signal(signal.SIGINT, None)
    handler._on_signal(signal.SIGTERM, None)  # during the report's writing: no exception
    handler._on_signal(signal.SIGINT, None)
    assert (causes, handler.held) == (["KeyboardInterrupt (Ctrl-C)"], signal.SIGTERM)
    with pytest.raises(Ended, match="SIGTERM"):
        handler.pytest_sessionfinish_after_report(session=None)


def test_a_first_signal_while_the_session_finishes_does_not_abort_it(interrupts):
    """A run that ends on its own and is signalled while writing its report: held, then obeyed."""
    handler, causes = interrupts
    finishing = handler.pytest_sessionfinish(session=None)
    next(finishing)
    handler._on_signal(signal.SIGTERM, None)
    assert causes == [] and handler.held == signal.SIGTERM
    with pytest.raises(Ended):
        next(finishing)


def test_a_signal_after_the_session_ends_the_process_at_once(interrupts):
    handler, _ = interrupts
    finishing = handler.pytest_sessionfinish(session=None)
    next(finishing)
    with pytest.raises(StopIteration):
        next(finishing)
    with pytest.raises(Ended):
        handler._on_signal(signal.SIGINT, None)


def test_a_signal_the_process_ignores_stays_ignored(monkeypatch):
    installed: dict[int, object] = {}
    monkeypatch.setattr(signal, "getsignal", lambda s: signal.SIG_IGN if s == signal.SIGINT else signal.SIG_DFL)
    monkeypatch.setattr(signal, "signal", lambda s, h: installed.setdefault(s, h))
    Interrupts(lambda cause: None).pytest_sessionstart(session=None)
    assert list(installed) == [signal.SIGTERM]


def test_only_local_workers_are_signalled(monkeypatch):
    """xdist's popen workers by the pid their gateway cached; never a remote one (its pid is
    another machine's) nor one not yet set up."""
    from types import SimpleNamespace

    from llmjury.interrupts import XdistWorkers

    def node(pid, popen=True, via=None):
        info = SimpleNamespace(pid=pid) if pid else None
        spec = SimpleNamespace(popen=popen, via=via)
        return SimpleNamespace(gateway=SimpleNamespace(spec=spec, _cache_rinfo=info))

    sent: list[tuple[int, int]] = []
    monkeypatch.setattr("os.kill", lambda pid, which: sent.append((pid, which)))
    workers = XdistWorkers()
    workers.nodes = [node(101), node(102, popen=False), node(103, via="gw0"), node(None)]
    workers.interrupt()
    workers.interrupt(signal.SIGTERM)
    assert sent == [(101, signal.SIGINT), (101, signal.SIGTERM)]


def test_a_stopped_run_ends_its_workers_once_the_report_is_written(interrupts, monkeypatch):
    handler, _ = interrupts
    sent: list[signal.Signals] = []
    monkeypatch.setattr(handler.workers, "interrupt", lambda which=signal.SIGINT: sent.append(which))
    handler.pytest_sessionfinish_after_report(session=None)
    assert sent == []  # a whole run: xdist's teardown as usual
    with pytest.raises(KeyboardInterrupt):
        handler._on_signal(signal.SIGINT, None)
    handler.pytest_sessionfinish_after_report(session=None)
    assert sent == [signal.SIGINT, signal.SIGTERM]
