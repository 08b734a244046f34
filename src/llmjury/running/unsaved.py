"""Answers paid for that the store never committed, kept in a file of this machine until it can.

A run whose store stays out of reach past `--llm-store-outage` stops; the answers that arrived
meanwhile were held in memory only, waiting for their writes. Each such answer is appended to a
JSONL file beside the cache (`unsaved/`, one file a run and process, the rows as the store holds
them), flushed and synced before the run goes on stopping. The next run that opens the store hands
those answers to it before anything else, then deletes the file: nothing already paid is paid
again, whichever process of the next run gets there first.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from llmjury.errors import ConfigError
from llmjury.running.leases import process_alive

#: An answer as the store holds it: key, provider, task, request JSON, sample JSON, run id, created.
AnswerRow = tuple[str, str, str, str, str, str, float]
#: The suffix of a file a process is handing to the store (its pid before it).
REPLAYING = ".replaying"
#: The longest a process waits for another one handing answers over (one transaction, normally).
HANDING_S = 30.0
FIELDS = ("key", "provider", "task", "request", "sample", "run_id", "created")


class UnsavedAnswers:
    """One process's file of answers whose writes failed, under `folder`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self.kept = 0

    def path(self, run_id: str) -> Path:
        return self.folder / f"{run_id}-{os.getpid()}.jsonl"

    def keep(self, row: AnswerRow) -> None:
        """Append one answer and sync it to disk: it survives the run's stop, and a kill after it."""
        line = dict(zip(FIELDS, row, strict=True))  # the request and sample as the store holds them
        with self._lock:
            self.folder.mkdir(parents=True, exist_ok=True)
            with self.path(row[5]).open("a", encoding="utf-8") as out:
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
                out.flush()
                os.fsync(out.fileno())
            self.kept += 1


def hand_over(folder: Path, store: Callable[[list[AnswerRow]], None],
              wait: Callable[[float], object] = time.sleep) -> int:
    """Give every unsaved answer under `folder` to `store` (a committed write), then delete its
    file; return how many. A file is taken by renaming it, so two processes never hand over the same
    one; a file a process of this machine was handing over when it died is taken again. Returns once
    no other process is handing one over."""
    handed = 0
    for taken in _take(folder):
        try:
            rows = list(read_rows(taken))
        except ConfigError:
            taken.rename(taken.with_name(taken.name.partition(".jsonl")[0] + ".jsonl"))  # still there next time
            raise
        if rows:
            store(rows)
        taken.unlink()
        handed += len(rows)
    _wait_for_others(folder, wait)
    return handed


def _wait_for_others(folder: Path, wait: Callable[[float], object]) -> None:
    """Until no live process of this machine is still handing a file over: a process that found
    nothing to take starts calling only once the answers another one took are in the store."""
    delay, waited = 0.01, 0.0
    while waited < HANDING_S and folder.is_dir() and any(_handing(path.name) for path in folder.iterdir()):
        wait(delay)
        waited += delay
        delay = min(delay * 2, 0.25)


def check(folder: Path | None) -> None:
    """At start-up: every unsaved file under `folder` reads (a ConfigError naming the file and line
    otherwise), so a run does not find out once its tests have started."""
    if folder is None or not folder.is_dir():
        return
    for path in sorted(folder.glob("*.jsonl")):
        for _ in read_rows(path):
            pass


def read_rows(path: Path) -> Iterator[AnswerRow]:
    """The answers of an unsaved file; a line that is not one is an error naming the file and line."""
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                yield (str(entry["key"]), str(entry["provider"]), str(entry["task"]), str(entry["request"]),
                       str(entry["sample"]), str(entry["run_id"]), float(entry["created"]))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                shown = path.with_name(path.name.partition(".jsonl")[0] + ".jsonl")
                why = f"no {exc.args[0]!r} field" if isinstance(exc, KeyError) else str(exc)
                raise ConfigError(f"{shown}:{number}: not an answer an earlier run kept ({why}); "
                                  "move the file away to run without it") from exc


def _take(folder: Path) -> Iterator[Path]:
    if not folder.is_dir():
        return
    for path in sorted(folder.iterdir()):
        base, _, handler = path.name.partition(".jsonl")
        if handler and not _abandoned(handler):
            continue  # another live process is handing it over
        if not path.name.endswith(".jsonl") and not handler:
            continue
        taken = path.with_name(f"{base}.jsonl.{os.getpid()}{REPLAYING}")
        try:
            path.rename(taken)
        except FileNotFoundError:  # another process took it first
            continue
        yield taken


def _handing(name: str) -> bool:
    """Whether another live process is handing this file over."""
    _, _, handler = name.partition(".jsonl")
    return handler.endswith(REPLAYING) and handler != f".{os.getpid()}{REPLAYING}" and not _abandoned(handler)


def _abandoned(handler: str) -> bool:
    """`.PID.replaying`: a file a process of this machine was handing over, and that process is gone."""
    pid = handler.removesuffix(REPLAYING).removeprefix(".")
    return handler.endswith(REPLAYING) and pid.isdigit() and not process_alive(int(pid))
