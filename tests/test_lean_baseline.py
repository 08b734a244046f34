"""The baseline a workflow ships holds what a pull request replays (the samples), not the run's own
bookkeeping: the xdist hand-off of planned outcomes is deleted at the run's end and never copied."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

import pytest

from llmjury.chat import Sample
from llmjury.running.cache import SampleStore, copy_samples
from llmjury.running.handoff import OutcomeHandoff, forget_run
from llmjury.store.location import StoreLocation

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / ".github" / "scripts" / "evals.sh"
HANDOFF_TABLES = {"plans", "planned", "outcomes"}
#: The baseline's cap for the offline suite (issue 21): it was 42 MB, all of it hand-off rows.
MAX_BASELINE_BYTES = 10_000_000


def tables(path: Path) -> dict[str, int]:
    """Each table of the SQLite file at `path` with its row count."""
    with closing(sqlite3.connect(path)) as db:
        names = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {name: db.execute(f"SELECT COUNT(*) FROM {name}").fetchone()[0] for name in names}


def handed_on(path: Path, run_id: str, worker: int, count: int) -> None:
    """`count` planned outcomes of `run_id` in the run file at `path`, as a worker hands them on."""
    handoff = OutcomeHandoff(StoreLocation("sqlite", path), run_id, worker)
    keys = [f"{run_id}-{i}" for i in range(count)]
    handoff.announce(keys)
    for key in keys:
        handoff.put(key, {"verdicts": [{"case_id": key, "raw": ["x" * 2000]}]})
    handoff.close()


def test_a_baseline_copy_holds_the_samples_and_none_of_the_runs_bookkeeping(tmp_path):
    cache = tmp_path / "cache.sqlite"
    store = SampleStore(StoreLocation("sqlite", cache))
    for i in range(3):
        store.put(f"k{i}", "openai:m", "t", "{}", Sample(text=f"answer {i}"), "run-a").result()
    store.claim(["k9"], "run-a:gw0", run_id="run-a").result()
    store.close()
    handed_on(cache, "run-a", 0, 500)

    shipped = tmp_path / "baseline" / "cache.sqlite"
    assert copy_samples(cache, shipped) == 3
    counts = tables(shipped)
    assert (counts.pop("samples"), counts.pop("llmjury_meta")) == (3, 2)  # its tables' version, its own id
    assert set(counts.values()) == {0}  # claims, hand-offs, tallies, spend: none copied
    assert shipped.stat().st_size * 20 < cache.stat().st_size
    replayed = SampleStore(StoreLocation("sqlite", shipped))
    assert replayed.get("k2").text == "answer 2"
    replayed.close()


def test_copying_a_file_that_is_no_response_cache_says_which_file(tmp_path):
    other = tmp_path / "other.sqlite"
    with closing(sqlite3.connect(other)) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
    with pytest.raises(ValueError, match=re.escape(f"{other}: not an llmjury response cache")):
        copy_samples(other, tmp_path / "copy.sqlite")
    assert not (tmp_path / "copy.sqlite").exists()


def test_forgetting_a_run_deletes_its_hand_off_rows_and_keeps_another_runs(tmp_path):
    cache = tmp_path / "cache.sqlite"
    SampleStore(StoreLocation("sqlite", cache)).close()
    handed_on(cache, "finished", 1, 20)
    handed_on(cache, "running", 0, 5)
    forget_run(StoreLocation("sqlite", cache), "finished")
    with closing(sqlite3.connect(cache)) as db:
        for table in HANDOFF_TABLES:
            runs = {row[0] for row in db.execute(f"SELECT run_id FROM {table}")}
            assert runs == {"running"}, table
    still = OutcomeHandoff(StoreLocation("sqlite", cache), "running", 0)
    assert len(still.handed_on()) == 5
    still.close()


def test_forgetting_a_run_in_a_cache_that_does_not_exist_creates_none(tmp_path):
    forget_run(StoreLocation("sqlite", tmp_path / "cache.sqlite"), "run")
    assert not (tmp_path / "cache.sqlite").exists()


@pytest.mark.e2e  # the workflow's bash script and a pytest run of the offline suite on two xdist workers
def test_the_baseline_of_the_offline_suite_is_small_and_has_no_planning_rows(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env.update(LLMJURY_EVALS=str(REPO / "evals"), LLMJURY_ARGS="-n 2 -p no:cacheprovider --llm-sample 400",
               LLMJURY_BASELINE_DIR=str(tmp_path / "baseline"), LLMJURY_REPORTS=str(tmp_path / "reports"),
               LLMJURY_CACHE=str(tmp_path / "cache.sqlite"))
    done = subprocess.run(["bash", str(SCRIPT), "baseline"], cwd=REPO, env=env, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    shipped = tmp_path / "baseline" / "cache.sqlite"
    assert shipped.stat().st_size <= MAX_BASELINE_BYTES
    copied = tables(shipped)
    assert copied["samples"] == 0 and not any(copied.get(t) for t in HANDOFF_TABLES)  # the store's tables, empty
    assert re.search(r"^baseline: cache 0 samples, \d+\.\d\d MB$", done.stdout, re.MULTILINE), done.stdout
    # The run itself planned on two workers through the hand-off, then forgot it at its end.
    working = tables(tmp_path / "cache.sqlite")
    assert set(working) >= HANDOFF_TABLES and not any(working[t] for t in HANDOFF_TABLES)
