"""A saved run read back for comparison: a file that cannot be read is named with its cause."""

from __future__ import annotations

import gzip

import pytest

from llmjury import saved
from llmjury.errors import ConfigError


def test_a_read_error_without_a_message_is_called_truncated(tmp_path, monkeypatch):
    (tmp_path / "verdicts.jsonl.gz").write_bytes(gzip.compress(b"{}\n"))

    def cut_short(*args, **kwargs):
        raise EOFError  # what a stream cut before its end may raise, with no message of its own

    monkeypatch.setattr(saved.gzip, "open", cut_short)
    with pytest.raises(ConfigError, match=r"verdicts\.jsonl\.gz: cannot be read \(truncated\)$"):
        saved.load_run(tmp_path, "--llm-baseline")
