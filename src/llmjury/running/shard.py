"""`--llm-shard I/N`: which part of a suite this invocation runs, parsed once at start-up.

1-based, as a CI matrix counts (`shard: [1, 2, 3, 4]`), so the matrix value goes straight into the
option. Which tests a shard holds is decided after collection (llmjury.session.sharding).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from llmjury.errors import ConfigError

SHAPE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count`, 1 <= index <= count."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str, what: str = "--llm-shard") -> Shard:
        """`I/N`, else a ConfigError naming the option and the value: a typo (`0/4`, `5/4`) must not run
        no test, or every test, without a word."""
        found = SHAPE.match(str(text))
        if found is None:
            raise ConfigError(f"{what} {text!r}: write I/N, the shard's number (from 1) and the number of "
                              "shards, e.g. 2/4")
        index, count = int(found[1]), int(found[2])
        if count < 1:
            raise ConfigError(f"{what} {text!r}: the number of shards must be at least 1")
        if not 1 <= index <= count:
            raise ConfigError(f"{what} {text!r}: the shard's number must be between 1 and {count} "
                              "(shards count from 1, as a CI matrix does)")
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"
