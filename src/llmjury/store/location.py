"""Which run store a run uses (`--llm-store`, ini `llm_store`), parsed once at start-up."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from llmjury.errors import ConfigError
from llmjury.store.database import Database
from llmjury.store.outage import OUTAGE_S, Outage
from llmjury.store.postgres import DSN_VARIABLE, PostgresDatabase
from llmjury.store.sqlite import SqliteDatabase

KINDS = ("sqlite", "postgres")


@dataclass(frozen=True)
class StoreLocation:
    """SQLite at `path` (the cache file), or PostgreSQL at the environment's connection string."""

    kind: Literal["sqlite", "postgres"]
    path: Path
    dsn: str = field(default="", repr=False, compare=False)  # never printed: it may hold a password
    #: How long the run waits for a PostgreSQL server that went away (`--llm-store-outage`), and
    #: whether this process gave up on it: shared by every connection opened here.
    outage: Outage = field(default_factory=Outage, repr=False, compare=False)

    @classmethod
    def parse(cls, value: str, cache_path: Path, option: str = "--llm-store",
              outage_s: float = OUTAGE_S) -> StoreLocation:
        if value == "sqlite":
            return cls("sqlite", cache_path)
        if value == "postgres":
            return cls("postgres", cache_path, os.environ.get(DSN_VARIABLE, ""), Outage(outage_s))
        raise ConfigError(f"{option} {value!r}: unknown store (use {' or '.join(KINDS)})")

    def open(self) -> Database:
        """A new connection (each thread that writes or reads keeps its own)."""
        if self.kind == "sqlite":
            return SqliteDatabase(self.path)
        return PostgresDatabase(self.dsn, self.outage)

    def __str__(self) -> str:
        return str(self.path) if self.kind == "sqlite" else "postgres"
