"""Answers paid for that the store never committed, kept in a file of this machine until it can.

A run whose store stays out of reach past `--llm-store-outage` stops; the answers that arrived
meanwhile were held in memory only, waiting for their writes. Each such answer is appended to a
JSONL file in the folder of the cache file (`unsaved/<store>/`, a folder for each store, one file a
run and process, the rows as the store holds them), flushed and synced before the run goes on
stopping. The next run that opens that same store hands those answers to it before anything else,
then deletes the file: nothing already paid is paid again, whichever process of the next run gets
there first. A run on another store leaves them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, InvalidStateError
from pathlib import Path

from llmjury.chat import Sample
from llmjury.errors import ConfigError
from llmjury.running.leases import process_alive

#: An answer as the store holds it: key, provider, task, request JSON, sample JSON, run id, created.
AnswerRow = tuple[str, str, str, str, str, str, float]
#: The suffix of a file a process is handing to the store (its pid before it).
HANDING = ".handing"
#: The longest a process waits for another one handing answers over (one transaction, normally).
HANDING_S = 30.0
FIELDS = ("key", "provider", "task", "request", "sample", "run_id", "created")


class UnsavedAnswers:
    """One process's files of answers whose writes to a store failed, under `root`: a folder a store
    (by its id; its `STORE` file names it for a reader), so only a run on that store takes them back."""

    def __init__(self, root: Path, store_id: str, described: str) -> None:
        self.folder, self.described = store_folder(root, store_id), f"{described} (store id {store_id})"
        self._lock = threading.Lock()
        self.kept = 0

    def path(self, run_id: str) -> Path:
        """This process's file for `run_id`: its pid tells whether it may still be written to."""
        return self.folder / f"{run_id}-{os.getpid()}.jsonl"

    def keep(self, row: AnswerRow) -> None:
        """Append one answer and sync it to disk: it survives the run's stop, and a kill after it."""
        line = dict(zip(FIELDS, row, strict=True))  # the request and sample as the store holds them
        with self._lock:
            if not self.folder.is_dir():
                self.folder.mkdir(parents=True, exist_ok=True)
                (self.folder / "STORE").write_text(self.described + "\n", encoding="utf-8")
            with self.path(row[5]).open("a", encoding="utf-8") as out:
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
                out.flush()
                os.fsync(out.fileno())
            self.kept += 1

    def keep_if_failed(self, row: AnswerRow, written: Future[None]) -> Future[None]:
        """`written` (the store's write of `row`) as its caller sees it, with the answer kept here
        when the write fails. The caller may cancel what it gets (a run that stops): the write goes
        on, and a failure keeps the answer all the same."""
        told: Future[None] = Future()
        written.add_done_callback(lambda done: self._settle(row, done, told))
        return told

    def _settle(self, row: AnswerRow, written: Future[None], told: Future[None]) -> None:
        """On the writer's thread: the caller is told how its write ended whatever happens (an
        exception here would be logged and lost, and the caller would wait forever)."""
        error = written.exception()
        try:
            if error is not None:
                self.keep(row)
        except Exception as lost:  # a full or read-only disk: said once on the error the batch's writes share
            note = f"answers could not be kept in {self.folder} either: {lost}"
            if error is not None and note not in getattr(error, "__notes__", []):
                error.add_note(note)
        finally:
            with contextlib.suppress(InvalidStateError):  # the caller gave up on it
                if error is None:
                    told.set_result(None)
                else:
                    told.set_exception(error)


def store_folder(root: Path, store_id: str) -> Path:
    """Where the answers a store could not take are kept: a folder named by its id."""
    return root / hashlib.sha256(store_id.encode()).hexdigest()[:16]


def hand_over(folder: Path, write: Callable[[list[AnswerRow]], None],
              wait: Callable[[float], object] = time.sleep) -> int:
    """Give every answer kept in a store's `folder` (`UnsavedAnswers.folder`) to the store (`write`,
    committed), then delete its file; return how many. A file is taken by renaming it, so two
    processes never hand over the same one; a file a process of this machine was handing over when
    it died is taken again. Returns once no other process is handing one over."""
    handed = 0
    for taken in _take(folder):
        try:
            rows = list(read_rows(taken))
            if rows:
                write(rows)
        except BaseException:  # a bad line, the store still away: the file is there for the next run
            taken.rename(taken.with_name(taken.name.partition(".jsonl")[0] + ".jsonl"))
            raise
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


def check(root: Path | None) -> None:
    """At start-up: every kept file under `root`, for any store, reads (a ConfigError naming the
    file and line otherwise), so a run does not find out once its tests have started."""
    if root is None or not root.is_dir():
        return
    for path in sorted(root.glob("*/*.jsonl")):
        for _ in read_rows(path):
            pass


def read_rows(path: Path) -> Iterator[AnswerRow]:
    """The answers of a kept file. A line that is not one is an error naming the file and line,
    but for a last line cut short (its process died writing it): that answer was never kept."""
    shown = path.with_name(path.name.partition(".jsonl")[0] + ".jsonl")
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                yield _row(line)
            except ValueError as exc:
                if not line.endswith("\n") and isinstance(exc, _NotJson):
                    return
                raise ConfigError(f"{shown}:{number}: not an answer an earlier run kept ({exc}); "
                                  "move the file away to run without it") from None


class _NotJson(ValueError):
    """A line that is not JSON at all: cut short, when it is a file's last."""


def _row(line: str) -> AnswerRow:
    """One kept answer, checked as the store will read it back: a ValueError says what is wrong."""
    try:
        entry = json.loads(line)
    except json.JSONDecodeError as exc:
        raise _NotJson(f"not JSON at character {exc.pos + 1}: {exc.msg.lower().removesuffix(' at')}") from None
    if not isinstance(entry, dict):
        raise ValueError("not a JSON object")
    missing = [name for name in FIELDS if name not in entry]
    if missing:
        raise ValueError(f"no {missing[0]!r} field")
    try:
        json.loads(str(entry["request"]))
        Sample.model_validate_json(str(entry["sample"]))
        created = float(entry["created"])
    except (ValueError, TypeError) as exc:  # pydantic's ValidationError is a ValueError
        raise ValueError(f"its request, sample or time is not what a run writes: {str(exc).splitlines()[0]}") from None
    return (str(entry["key"]), str(entry["provider"]), str(entry["task"]), str(entry["request"]),
            str(entry["sample"]), str(entry["run_id"]), created)


def _take(folder: Path) -> Iterator[Path]:
    if not folder.is_dir():
        return
    for path in sorted(folder.iterdir()):
        base, _, handler = path.name.partition(".jsonl")
        if handler and not _abandoned(handler):
            continue  # another live process is handing it over
        if not path.name.endswith(".jsonl") and not handler:
            continue
        writer = base.rsplit("-", 1)[-1]
        if not handler and writer.isdigit() and int(writer) != os.getpid() and process_alive(int(writer)):
            continue  # its run is still stopping, and may add to it: the next run takes it
        taken = path.with_name(f"{base}.jsonl.{os.getpid()}{HANDING}")
        try:
            path.rename(taken)
        except FileNotFoundError:  # another process took it first
            continue
        yield taken


def _handing(name: str) -> bool:
    """Whether another live process is handing this file over."""
    _, _, handler = name.partition(".jsonl")
    return handler.endswith(HANDING) and handler != f".{os.getpid()}{HANDING}" and not _abandoned(handler)


def _abandoned(handler: str) -> bool:
    """`.PID.handing`: a file a process of this machine was handing over, and that process is gone."""
    pid = handler.removesuffix(HANDING).removeprefix(".")
    return handler.endswith(HANDING) and pid.isdigit() and not process_alive(int(pid))
