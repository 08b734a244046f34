"""A run folder's layout: where a run keeps its files, how `latest` points at the newest run, and how
to read a run's verdicts back, whatever wrote them (this layout, or an older plain `verdicts.jsonl`).

Verdicts and the per-family CSVs are gzipped: they repeat the same keys, judge configuration and
texts on every line, so gzip shrinks them about thirtyfold (the offline suite's 29 MB of verdicts
become under 1 MB) and `gzip`/`pandas.read_csv` read them as they are. `latest` is a symlink to the
run's folder, or where the file system refuses symlinks a one-line file naming it, never a copy.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from llmjury.errors import ConfigError

VERDICTS = "verdicts.jsonl.gz"
PLAIN_VERDICTS = "verdicts.jsonl"
LATEST = "latest"


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[BinaryIO]:
    """A file at `path` written through a temporary one, so a reader never sees half a report (and a
    write that fails leaves the file as it was)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with tmp.open("wb") as out:
            yield out
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text(path: Path, text: str) -> None:
    """`text` as UTF-8 at `path`, replaced whole (see `replacing`)."""
    with replacing(path) as out:
        out.write(text.encode("utf-8"))


def write_gzip(path: Path, text: str | Iterable[str]) -> None:
    """Like `write_text`, gzipped, of a text or of its parts in order (a run's verdicts are never one string)."""
    with replacing(path) as out:
        gzip_member(out, [text] if isinstance(text, str) else text)


def gzip_member(out: BinaryIO, parts: Iterable[str]) -> None:
    """The parts of a text as one gzip member written to `out` (after any members already there: a
    gzip file of several is read as one text); `mtime=0` so the same content gives the same bytes."""
    # level 6: twice as fast as gzip's default 9 on a run's verdicts, for 1% more bytes
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=6, mtime=0, filename="") as member:
        for part in parts:
            member.write(part.encode("utf-8"))


def run_folder(path: Path) -> Path:
    """The run folder `path` names: itself, or the run a `latest` pointer file names."""
    if path.is_file() and path.name == LATEST:
        return path.parent / path.read_text(encoding="utf-8").strip()
    return path


def verdicts_file(path: Path) -> Path:
    """The verdicts file of a run folder (or `latest`, or a reports folder holding `latest`), or
    `path` itself when it is a verdicts file."""
    folder = run_folder(path)
    if not folder.is_dir():
        return path
    if not any((folder / name).is_file() for name in (VERDICTS, PLAIN_VERDICTS)) and (folder / LATEST).exists():
        folder = run_folder(folder / LATEST)  # a reports folder: its newest run (a symlink resolves itself)
    for name in (VERDICTS, PLAIN_VERDICTS):
        if (folder / name).is_file():
            return folder / name
    raise ConfigError(f"{path}: no {VERDICTS} (or {PLAIN_VERDICTS}) in this folder: is it a run folder?")


def verdict_files(paths: Iterable[Path]) -> list[Path]:
    """The verdicts file of each path, in order, each once: a run named twice (its folder and its file,
    a reports folder's `latest` and its run) is one run, its verdicts and its summary read once."""
    first: dict[Path, Path] = {}
    for path in paths:
        file = verdicts_file(path)
        first.setdefault(file.resolve(), file)
    return list(first.values())


def read_verdicts(path: Path) -> list[dict[str, Any]]:
    """Every verdict record of a run folder or verdicts file, gzipped or not; a bad line is an error
    naming the file and line."""
    return [record for block in verdict_blocks(path) for _, _, record in block]


@dataclass
class FileEnd:
    """Where a verdicts file's text ends: the number of its last line, blank or not, and whether that
    line ends in a newline (an empty file has nothing to end)."""

    line: int = 0
    newline: bool = True


def verdict_blocks(path: Path, end: FileEnd | None = None) -> Iterator[list[tuple[int, str, dict[str, Any]]]]:
    """The verdict lines of a run folder or verdicts file, READ_BLOCK at a time: each line's number,
    its text and its record; where the file ends told to `end` after the last block. A bad line is an
    error naming the file and line."""
    found = _found(path)
    block: list[tuple[int, str]] = []
    size = 0
    for numbered in _lines(found, end):
        block.append(numbered)
        size += len(numbered[1])
        if len(block) == READ_BLOCK or size >= READ_BLOCK_CHARS:
            yield _numbered(found, block)
            block, size = [], 0
    if block:
        yield _numbered(found, block)


def verdict_lines(path: Path) -> Iterator[str]:
    """The verdict lines of a run folder or verdicts file as written (unparsed), each ending in a newline."""
    for _, line in _lines(_found(path)):
        yield line if line.endswith("\n") else line + "\n"


def _found(path: Path) -> Path:
    found = verdicts_file(path)
    if not found.is_file():
        raise ConfigError(f"{path}: no such run folder or verdicts file")
    return found


def _lines(found: Path, end: FileEnd | None = None) -> Iterator[tuple[int, str]]:
    """A verdicts file's lines but the blank ones, numbered from 1, gzipped or not; where the file ends
    told to `end`, once it is read."""
    opener = gzip.open if found.name.endswith(".gz") else open
    number, line = 0, ""
    try:
        with opener(found, "rt", encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if line.strip():
                    yield number, line
        if end is not None:
            end.line, end.newline = number, not line or line.endswith("\n")
    except (OSError, EOFError, UnicodeDecodeError) as exc:  # a cut or corrupt gzip stream, bytes that are not UTF-8
        raise ConfigError(f"{found}: cannot be read after line {number} ({exc})") from None


def _numbered(found: Path, block: list[tuple[int, str]]) -> list[tuple[int, str, dict[str, Any]]]:
    records = _parsed(found, block)
    for (number, _), record in zip(block, records, strict=True):
        if not isinstance(record, dict):
            raise ConfigError(f"{found} line {number}: not a verdict record (a JSON object)")
    return [(number, line, record) for (number, line), record in zip(block, records, strict=True)]


#: Verdict lines parsed as one JSON array: the parser then keeps one string per key name for the
#: whole block (a line at a time it keeps one per record: about twice the memory, and slower).
READ_BLOCK = 5000
#: ... or fewer, when their text comes to this many characters: the block is held three times while
#: it is parsed (its lines, the array's text, the records), so long answers make it short.
READ_BLOCK_CHARS = 2_000_000


def _parsed(found: Path, block: list[tuple[int, str]]) -> list[dict[str, Any]]:
    """The records of a block of lines; a line that is not one JSON value is named."""
    if not block:
        return []
    with contextlib.suppress(json.JSONDecodeError):
        records: list[dict[str, Any]] = json.loads("[" + ",".join(line for _, line in block) + "]")
        if len(records) == len(block):
            return records
    parsed = []
    for number, line in block:
        try:
            parsed.append(json.loads(line))
        except json.JSONDecodeError as exc:
            why = f"{exc.msg.removesuffix(' at')} at column {exc.colno}"  # json's "Invalid control character at"
            raise ConfigError(f"{found} line {number}: not a JSON verdict record ({why})") from None
    return parsed


def link_identical(files: dict[str, str]) -> dict[str, str]:
    """Files whose content repeats an earlier one's: name -> the earlier name, so it is hard-linked
    rather than written twice (a seed layout can keep one table under two folders)."""
    first: dict[str, str] = {}
    links: dict[str, str] = {}
    for name, text in files.items():
        earlier = first.setdefault(text, name)
        if earlier != name:
            links[name] = earlier
    return links


def place(run_dir: Path, name: str, same_as: str) -> None:
    """`name` as a hard link to `same_as` in the run folder, or a copy where links are refused."""
    target, source = run_dir / name, run_dir / same_as
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def point_latest(directory: Path, run_dir: Path) -> Path:
    """Make `directory/latest` point at `run_dir`, atomically: a relative symlink (the reports folder
    can be moved or uploaded whole), else a file naming the run. An older `latest` copy is removed."""
    latest = directory / LATEST
    if latest.is_dir() and not latest.is_symlink():
        shutil.rmtree(latest)  # the full copy earlier versions kept
    tmp = directory / f".{LATEST}.{run_dir.name}.tmp"
    tmp.unlink(missing_ok=True)
    try:
        tmp.symlink_to(run_dir.name, target_is_directory=True)
    except OSError:
        tmp.write_text(run_dir.name + "\n", encoding="utf-8")
    tmp.replace(latest)
    return latest
