"""A command's own CPU seconds and peak memory, for the benches that print them.

A child's `ru_maxrss` counts its parent's resident memory at the fork (Linux folds the forked image's
high-water mark into it at `exec`), so a command started by a bench that holds a fake server's
requests or a run's verdicts would be floored at the bench's own size: a 300 MB parent makes
`python -c pass` peak at 313 MB. Each command is therefore started by a small launcher process of
its own, which reports the command's usage through a file.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LAUNCHER = ("import os, subprocess, sys\n"
            "process = subprocess.Popen(sys.argv[2:])\n"
            "_, status, usage = os.wait4(process.pid, 0)\n"
            "cpu = usage.ru_utime + usage.ru_stime\n"
            "with open(sys.argv[1], 'w') as out:\n"
            "    out.write(f'{os.waitstatus_to_exitcode(status)} {cpu} {usage.ru_maxrss}')\n")


@dataclass(frozen=True)
class Usage:
    exit_code: int
    cpu_s: float
    peak_mb: float


class Measured:
    """`command` started from the launcher (Popen's keyword arguments apply to it, and so to the
    command, which inherits its streams); `usage()` waits for it."""

    def __init__(self, command: Sequence[str], **popen: Any) -> None:
        handle, name = tempfile.mkstemp(prefix="bench-usage-")
        os.close(handle)
        self.file = Path(name)
        self.process = subprocess.Popen([sys.executable, "-c", LAUNCHER, str(self.file), *command], **popen)

    def usage(self) -> Usage:
        self.process.wait()
        try:
            code, cpu, peak_kb = self.file.read_text().split()
        finally:
            self.file.unlink()
        return Usage(int(code), float(cpu), int(peak_kb) / 1024)
