"""A PostgreSQL run store that goes away mid-run: what it costs, on a throwaway server of the bench's own.

An eval of `--cases` cases, one judge call each, runs with `--llm-store postgres` against a local
fake OpenAI-compatible server that answers in `--latency` seconds, at each `-n` of `--workers`. As
the server answers the run's `--at`-th call, the bench stops PostgreSQL (`pg_ctl -m immediate`):
- restart: the server comes back `--down` seconds later, within the run's `--llm-store-outage`
  (120 s): the run rides it out. Printed: its exit, the tests that passed, the calls answered, the
  prompts answered twice (target 0), and the wait the run reports (`run.store.away_s`).
- stop: it stays away past `--limit` seconds of `--llm-store-outage`: the run stops, its report
  marked incomplete. The server then comes back and the same command runs again. Printed: the
  answers the first run got, those it kept for the next (`run.store.kept_answers`), those the
  second run handed back (`recovered_answers`), the prompts paid in both runs (target 0), and the
  second run's exit.

    python bench/outage.py                       # 40 cases, down 10 s, -n 0 and -n 2
    python bench/outage.py --cases 12 --down 2 --workers 0

Needs PostgreSQL's initdb and pg_ctl, and psycopg (`pip install 'llmjury[postgres]'`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
from pathlib import Path
from typing import Any

from llmjury.testing import FakeOpenAI
from llmjury.testing.postgres import fresh_schema, resume, start, stop

SUITE = textwrap.dedent("""
    import llmjury
    from llmjury import Case, JudgeConfig, Outcome, Verdict
    from llmjury.chat import chat

    async def judge(case, jury):
        completion = await jury.complete("judge", "bench", chat(("user", "hello " + case.id)))
        return Outcome([Verdict(case_id=case.id, family="bench", judge=JudgeConfig(provider=completion.provider))])

    @llmjury.pipeline(judge)
    @llmjury.parametrize([Case(id=f"{{i:03d}}", family="bench") for i in range({cases})])
    def test_case(outcome):
        assert len(outcome.verdicts) == 1
""")


class Faulty(FakeOpenAI):
    """Stops the store's server as it answers its `at`-th request; brings it back `down` seconds
    later (None: only when told). Keeps the prompts it answered, in order."""

    def __init__(self, folder: Path, at: int, down: float | None, latency: float) -> None:
        super().__init__(latency=latency)
        self.folder, self.at, self.down = folder, at, down
        self.answered: list[str] = []
        self._lock = threading.Lock()
        self.stopped = False

    def respond(self, method: str, path: str, body: dict[str, Any], raw: bytes,
                headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            if len(self.requests) >= self.at and not self.stopped:
                stop(self.folder)
                self.stopped = True
                if self.down is not None:
                    threading.Timer(self.down, resume, (self.folder,)).start()
        answer = super().respond(method, path, body, raw, headers)
        with self._lock:
            self.answered.append(body["messages"][-1]["content"])
        return answer


def run(project: Path, dsn: str, base_url: str, workers: str, limit: float) -> tuple[int, dict[str, Any]]:
    """One pytest run of the suite on the store; its exit code and summary (the run's own folder)."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:deepeval", "-p", "xdist",
               "-p", "llmjury", "-n", workers, "--llm-store", "postgres", "--llm-store-outage", f"{limit:g}",
               "--llm-concurrency", "8", "--llm-progress", "off", "--llm-judge",
               f"openai:bench;base_url={base_url};timeout=60", "-o", "markers=bench: bench"]
    env = {**os.environ, "LLMJURY_STORE_DSN": dsn, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    before = set((project / "reports").glob("*/summary.json"))
    done = subprocess.run(command, cwd=project, capture_output=True, text=True, env=env)
    made = [path for path in set((project / "reports").glob("*/summary.json")) - before
            if path.parent.name != "latest"]
    if len(made) != 1:
        raise SystemExit(f"bench: no report of the run in {project} (exit {done.returncode}):\n"
                         + "\n".join((done.stdout + done.stderr).splitlines()[-15:]))
    return done.returncode, json.loads(made[0].read_text())


def store_facts(summary: dict[str, Any]) -> dict[str, Any]:
    return summary["run"].get("store") or {}


def restart(place: Path, folder: Path, dsn: str, workers: str, args: argparse.Namespace) -> list[str]:
    project = project_in(place / f"restart-{workers}", args.cases)
    with Faulty(folder, args.at, args.down, args.latency) as server:
        code, summary = run(project, fresh_schema(dsn), server.base_url, workers, 120)
        answered = list(server.answered)
    passed = sum(family.get("cases", 0) for name, family in summary.items()
                 if isinstance(family, dict) and name == "bench")
    twice = len(answered) - len(set(answered))
    return [f"exit {code}", f"{passed}/{args.cases}", str(len(answered)), f"{twice} (target 0)",
            f"{store_facts(summary).get('away_s', 0):g} s"]


def stop_for_good(place: Path, folder: Path, dsn: str, workers: str, args: argparse.Namespace) -> list[str]:
    project, schema = project_in(place / f"stop-{workers}", args.cases), fresh_schema(dsn)
    with Faulty(folder, args.at, None, args.latency) as server:
        code, first = run(project, schema, server.base_url, workers, args.limit)
        got = set(server.answered)
    resume(folder)
    with Faulty(folder, args.cases * 10, None, args.latency) as again:  # never stops it
        second_code, second = run(project, schema, again.base_url, workers, args.limit)
        asked = set(again.answered)
    return [f"exit {code}, complete {first['complete']}", str(len(got)),
            str(store_facts(first).get("kept_answers", 0)), str(store_facts(second).get("recovered_answers", 0)),
            f"{len(got & asked)} (target 0)", f"exit {second_code}"]


def project_in(folder: Path, cases: int) -> Path:
    folder.mkdir(parents=True)
    (folder / "test_bench.py").write_text(SUITE.format(cases=cases))
    return folder


def positive(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not above 0")
    return value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=40, help="one call each (default 40)")
    parser.add_argument("--at", type=int, default=10, help="the call whose answer stops the store (default 10)")
    parser.add_argument("--down", type=positive, default=10.0, help="seconds the restart keeps it away (default 10)")
    parser.add_argument("--limit", type=positive, default=3.0, help="--llm-store-outage of the stop (default 3)")
    parser.add_argument("--latency", type=positive, default=0.05, help="seconds an answer takes (default 0.05)")
    parser.add_argument("--workers", default="0,2", help="-n values, comma separated (default 0,2)")
    args = parser.parse_args()
    if not 0 < args.at < args.cases:
        parser.error(f"--at {args.at}: must be between 1 and --cases - 1 ({args.cases - 1})")
    place = Path(tempfile.mkdtemp(prefix="llmjury-bench-outage-"))
    folder = Path(tempfile.mkdtemp(prefix="llmjury-bench-outage-pg-"))  # its server's user must reach it
    try:
        dsn = start(folder)
        print(f"restart: PostgreSQL stopped at answer {args.at}, back {args.down:g} s later (--llm-store-outage 120)")
        print(f"{'-n':>4}  {'run':<8} {'passed':>7} {'answered':>9} {'answered twice':>15} {'run.store.away_s':>17}")
        for workers in args.workers.split(","):
            cells = restart(place, folder, dsn, workers, args)
            print(f"{workers:>4}  {cells[0]:<8} {cells[1]:>7} {cells[2]:>9} {cells[3]:>15} {cells[4]:>17}")
        print(f"stop: PostgreSQL stopped at answer {args.at} for good (--llm-store-outage {args.limit:g}), "
              "then back, and the run made again")
        print(f"{'-n':>4}  {'first run':<26} {'answered':>9} {'kept':>5} {'handed back':>12} "
              f"{'paid in both runs':>18}  second run")
        for workers in args.workers.split(","):
            cells = stop_for_good(place, folder, dsn, workers, args)
            print(f"{workers:>4}  {cells[0]:<26} {cells[1]:>9} {cells[2]:>5} {cells[3]:>12} {cells[4]:>18}  {cells[5]}")
    finally:
        stop(folder)
        shutil.rmtree(place, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
