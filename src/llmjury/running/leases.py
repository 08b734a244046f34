"""Claims as leases: who may fetch a sample while the others wait, across processes, runs and hosts.

A claim names its owner, its process and its host, and expires by the database's clock unless its
owner's heartbeat moves it on: a process killed with `kill -9` (or a machine that went away)
stops renewing, and its keys are taken over once the lease runs out, not after a long fixed TTL.
On the claimant's own machine a finished process is known at once (a crashed xdist worker's keys
are taken over without waiting for the lease). A machine is named by its host name and what tells
apart two machines that share one (containers, network namespaces, clones): the kernel's boot id
and the process-id namespace, the scope in which a pid means anything.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path


def machine() -> str:
    """`hostname/boot-id/pid-namespace`: the scope in which a claimant's pid can be looked up."""
    parts = [socket.gethostname()]
    try:
        parts.append(Path("/proc/sys/kernel/random/boot_id").read_text().strip()[:8])
        parts.append(str(os.stat("/proc/self/ns/pid").st_ino))
    except OSError:  # no /proc (macOS, Windows): the host name alone
        pass
    return "/".join(parts)


#: This machine, in claims: a claimant's pid says something only where its pids are this process's.
HOST = machine()
#: How long a claim lasts without a heartbeat (`--llm-lease`).
LEASE_S = 30.0


def process_alive(pid: int) -> bool:
    """Whether a process of this machine still runs (xdist's local workers are all on it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def holder_alive(pid: int, host: str) -> bool:
    """A claim whose lease has not run out still counts, unless its process is on this machine and gone."""
    return host != HOST or process_alive(pid)


class Heartbeat:
    """Renews this process's leases three times a lease, on a thread of its own: a loop busy with
    parsing, or a call that takes minutes, never lets a live claim lapse."""

    def __init__(self, renew: Callable[[], object], lease_s: float) -> None:
        self._renew, self._every = renew, lease_s / 3
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="llmjury-lease-heartbeat", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            self._renew()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
