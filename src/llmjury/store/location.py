"""Which run store a run uses (`--llm-store`, ini `llm_store`), parsed once at start-up."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from llmjury.errors import ConfigError
from llmjury.store.database import Database
from llmjury.store.postgres import DSN_VARIABLE, PostgresDatabase
from llmjury.store.sqlite import SqliteDatabase

KINDS = ("sqlite", "postgres")


@dataclass(frozen=True)
class StoreLocation:
    """SQLite at `path` (the cache file), or PostgreSQL at the environment's connection string."""

    kind: Literal["sqlite", "postgres"]
    path: Path
    dsn: str = field(default="", repr=False, compare=False)  # never printed: it may hold a password

    @classmethod
    def parse(cls, value: str, cache_path: Path, option: str = "--llm-store") -> StoreLocation:
        if value == "sqlite":
            return cls("sqlite", cache_path)
        if value == "postgres":
            return cls("postgres", cache_path, os.environ.get(DSN_VARIABLE, ""))
        raise ConfigError(f"{option} {value!r}: unknown store (use {' or '.join(KINDS)})")

    def open(self) -> Database:
        """A new connection (each thread that writes or reads keeps its own)."""
        if self.kind == "sqlite":
            return SqliteDatabase(self.path)
        return PostgresDatabase(self.dsn)

    def __str__(self) -> str:
        return str(self.path) if self.kind == "sqlite" else "postgres"
