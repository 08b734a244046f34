"""A throwaway PostgreSQL server for testing against the run store, and a schema of its own per test.

`python -m llmjury.testing.postgres start DIR` initdbs into DIR, starts a server on a free port
with its socket in DIR and prints its connection string; `stop DIR` stops it, and `resume DIR`
starts it again on the same port (a restart, for the store's outage tests). `.ci/run` hands the
string to the tests in LLMJURY_TEST_POSTGRES_DSN, and `bench/store.py` starts one when none is
given. PostgreSQL's own programs (initdb, pg_ctl) must be installed; psycopg for `fresh_schema`.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import socket
import subprocess
from pathlib import Path

TEST_DSN = "LLMJURY_TEST_POSTGRES_DSN"


def binaries() -> Path | None:
    """The folder of initdb and pg_ctl: on PATH, or Debian's versioned one."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    return versions[-1].parent if versions else None


def start(folder: Path) -> str:
    """initdb into `folder` and start a server on a free port with its socket in `folder`; its DSN."""
    bin_dir = binaries()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL's initdb/pg_ctl are not installed (Debian: apt-get install postgresql)")
    folder.mkdir(parents=True, exist_ok=True)
    data, socket_dir = folder / "data", folder / "socket"
    socket_dir.mkdir(exist_ok=True)
    run_as: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root: the server runs as Debian's postgres user
        shutil.chown(folder, "postgres")
        shutil.chown(socket_dir, "postgres")
        run_as = ["runuser", "-u", "postgres", "--"]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    subprocess.run([*run_as, str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
                    "--no-sync"], check=True, capture_output=True)
    options = f"-p {port} -k {socket_dir} -c listen_addresses='' -c fsync=off -c max_connections=300"
    (folder / "options").write_text(options)
    resume(folder)
    return f"host={socket_dir} port={port} user=postgres dbname=postgres"


def resume(folder: Path) -> None:
    """Start the server `start` made in `folder` again (after `stop`), on its port and socket."""
    bin_dir = binaries()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL's initdb/pg_ctl are not installed (Debian: apt-get install postgresql)")
    run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    subprocess.run([*run_as, str(bin_dir / "pg_ctl"), "-D", str(folder / "data"), "-w", "-l", str(folder / "log"),
                    "-o", (folder / "options").read_text(), "start"], check=True, capture_output=True)


def stop(folder: Path) -> None:
    bin_dir = binaries()
    if bin_dir is None or not (folder / "data").exists():
        return
    run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    subprocess.run([*run_as, str(bin_dir / "pg_ctl"), "-D", str(folder / "data"), "-m", "immediate", "stop"],
                   check=False, capture_output=True)


def fresh_schema(dsn: str) -> str:
    """A DSN whose tables live in a new schema of their own: each test starts from an empty store."""
    import psycopg

    name = f"t_{secrets.token_hex(6)}"
    with psycopg.connect(dsn, autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {name}")
    return f"{dsn} options='-csearch_path={name}'"


def main(argv: list[str] | None = None) -> None:
    """`start DIR`, `resume DIR` or `stop DIR`: a mistyped command is refused, never taken for `stop`."""
    parser = argparse.ArgumentParser(prog="python -m llmjury.testing.postgres", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("start", "resume", "stop"))
    parser.add_argument("folder", type=Path, help="the server's folder (data, socket, log)")
    args = parser.parse_args(argv)
    if args.command == "start":
        print(start(args.folder))
    elif args.command == "resume":
        resume(args.folder)
    else:
        stop(args.folder)


if __name__ == "__main__":
    main()
