"""How long a stopped run takes to write its report: the time from the first signal to
`summary.json` on disk, and to the process's end, for each signal sequence a user or a CI system
sends (Ctrl-C; a time limit's SIGTERM; a CI cancel's SIGINT and SIGTERM a second later; two
SIGTERMs a second apart), under `-n 2` while every call waits on a server that never answers.

    python bench/interrupts.py --workers 2 --repeat 3

Reference, issue 21 (before llmjury.interrupts): SIGINT wrote the report after 7.6 s; SIGINT then
SIGTERM wrote none.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from llmjury.testing import FakeOpenAI

SUITE = """
import llmjury
from llmjury import Case


@llmjury.parametrize([Case(id=f"q{i:02d}", family="answers") for i in range(40)])
async def test_answer(case, jury):
    graded = await jury.score("an answer " + case.id, rubric="5: good; 1: bad")
    assert graded.scored, graded.error
"""
INI = """[pytest]
addopts = -p no:cacheprovider -p no:randomly -p no:deepeval -p no:asyncio -p no:benchmark
"""
SEQUENCES = {"SIGINT": [signal.SIGINT], "SIGTERM": [signal.SIGTERM],
             "SIGINT, SIGTERM 1 s later": [signal.SIGINT, signal.SIGTERM],
             "SIGTERM, SIGTERM 1 s later": [signal.SIGTERM, signal.SIGTERM]}
# The child restores Ctrl-C: a shell's background job starts with SIGINT ignored.
PYTEST = ("import signal, sys, pytest; signal.signal(signal.SIGINT, signal.default_int_handler); "
          "sys.exit(pytest.console_main())")


def stop_once(folder: Path, workers: str, signals: list[signal.Signals]) -> tuple[float | None, float, bool | None]:
    """Seconds from the first signal to the report and to the process's end, and `complete`. A
    server of its own, whose calls are answered only once the run is over."""
    asked, release = threading.Event(), threading.Event()

    def reply(body: dict, index: int) -> str:
        asked.set()
        release.wait(timeout=300)
        return "reply"

    with FakeOpenAI(reply) as server:
        try:
            return _stop(folder, server.base_url, asked, workers, signals)
        finally:
            release.set()


def _stop(folder: Path, url: str, asked: threading.Event, workers: str, signals: list[signal.Signals]
          ) -> tuple[float | None, float, bool | None]:
    reports = folder / "reports"
    command = [sys.executable, "-c", PYTEST, "-n", workers, "-q", "--llm-progress", "off", "--llm-cache", "off",
               "--llm-judge", f"openai:held;base_url={url}"]
    with subprocess.Popen(command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as run:
        if not asked.wait(timeout=120):
            run.kill()
            raise SystemExit("no call reached the server in 120 s")
        start = time.monotonic()
        os.kill(run.pid, signals[0])
        report = None
        sent = 1
        while run.poll() is None or report is None:
            now = time.monotonic() - start
            if report is None and list(reports.glob("*/summary.json")):
                report = now
            if sent < len(signals) and now >= 1.0:
                os.kill(run.pid, signals[sent])
                sent += 1
            if run.poll() is not None and report is None:
                break
            if now > 120:
                run.kill()
                break
            time.sleep(0.01)
        ended = time.monotonic() - start
    found = list(reports.glob("*/summary.json"))
    complete = json.loads(found[0].read_text())["complete"] if found else None
    shutil.rmtree(reports, ignore_errors=True)
    return report, ended, complete


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="2", help="pytest -n")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "pytest.ini").write_text(INI + "llm_prices = prices.toml\n")
        (folder / "prices.toml").write_text('[models."held"]\ninput = 0\noutput = 0\n')
        (folder / "test_suite.py").write_text(SUITE)
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; -n {args.workers}, "
              f"median of {args.repeat}")
        print(f"{'signals':<28} {'report after':>12} {'process ended':>14}  complete")
        for label, signals in SEQUENCES.items():
            runs = [stop_once(folder, args.workers, signals) for _ in range(args.repeat)]
            reports = [r for r, _, _ in runs if r is not None]
            shown = f"{statistics.median(reports):11.2f}s" if reports else "no report"
            missing = f" ({len(runs) - len(reports)} without a report)" if len(reports) < len(runs) else ""
            complete = ",".join(sorted({str(c) for _, _, c in runs}))
            ended = statistics.median(e for _, e, _ in runs)
            print(f"{label:<28} {shown:>12} {ended:13.2f}s  {complete}{missing}")


if __name__ == "__main__":
    main()
