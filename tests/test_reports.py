"""Reports that lead with the decision, and run folders people keep: the Decision block in summary.md
and the terminal, report.html, the gzipped run folder, the `latest` pointer, interrupted runs."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from infrastructure import needs
from summaries import summary_of

from llmjury.families import discover
from llmjury.model import RunSummary
from llmjury.reporting.reports import markdown, terminal_lines, verdict_table, write_run
from llmjury.results.decision import sig3
from llmjury.results.gates import Gate
from llmjury.runfiles import LATEST, VERDICTS, link_identical, place, read_verdicts
from llmjury.tables import csv_chunks, csv_table

FAMILIES = discover()


def socratic_records(n: int = 6) -> list[dict[str, Any]]:
    """Socratic verdicts over two subjects, enough for a win rate with an interval."""
    records = []
    for i in range(n):
        winner = "ours" if i % 3 else "baseline"
        runs = [{"ours_position": p, "decision": "a", "preferred": winner, "juror": "openai:gpt-4o-mini",
                 "error": None, "attempts": 1} for p in "ABA"]
        records.append({"case_id": f"sim-{i}", "family": "socratic", "kind": "pairwise",
                        "judge": {"provider": "openai:gpt-4o-mini", "prompt": "socratic/judge.j2@x", "runs": 3},
                        "result": {"winner": winner, "confidence": "unanimous", "counted_runs": 3, "runs": runs,
                                   "source": "simulated", "dataset": "simulated",
                                   "subject": ["operating_systems", "machine_learning"][i % 2],
                                   "ours_chars": 100 + i, "baseline_chars": 120},
                        "valid": True, "error": None, "raw": ["A"], "attributes": {"question": "q" * 50}})
    return records


def tree_of(records: list[dict[str, Any]], run_id: str = "fixed-run") -> dict[str, Any]:
    """The summary of these records as summary.json holds it, for a test to edit."""
    from llmjury.pricing import PriceTable
    from llmjury.results.aggregate import summarize

    run = {"id": run_id, "judge": "openai:gpt-4o-mini", "cache_mode": "replay", "seed": 0, "workers": 1}
    return summarize(records, run, {}, PriceTable.load(), FAMILIES).tree()


def test_three_significant_digits_and_whole_ratings():
    assert [sig3(x) for x in (0.93512345678, 0.0757138671, 1159.27, -0.3428, 0.0, None)] == \
        ["0.935", "0.0757", "1159", "-0.343", "0", "n/a"]


def test_summary_md_opens_with_the_decision_then_folds_the_tables():
    summary = summary_of(tree_of(socratic_records()))
    gates = [Gate.parse("socratic.win_rate>=0.1").check(summary), Gate.parse("socratic.win_rate>=0.95").check(summary)]
    text = markdown(summary, gates, FAMILIES)
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[0] == "## Decision"
    decision = text.split("## Details")[0]
    assert "| **PASS** | `socratic.win_rate>=0.1` | 0.667 |" in decision
    assert "| **FAIL** | `socratic.win_rate>=0.95` |" in decision
    assert "even the interval's high end 0.903 >= 0.95 does not hold" in decision
    assert "| socratic | `socratic.win_rate` | 0.667 [" in decision
    assert not re.search(r"\d\.\d{5,}", decision), "a long float in the Decision block"
    details = text.split("## Details")[1]
    assert details.count("<details>") == details.count("</details>") == 1
    assert "<summary><b>socratic</b>: 6 cases, 6 verdicts, 0 unscored</summary>" in details


def test_the_change_against_a_baseline_is_shown_or_said_why_not():
    tree = tree_of(socratic_records())
    entry = {"current": 0.667, "baseline": 0.7, "shared_cases": 5, "only_current": 1, "only_baseline": 0,
             "delta": {"value": -0.0333333333, "low": -0.21234567, "high": 0.1456789, "n": 5, "method": "paired"}}
    tree["comparison"] = {"baseline": "reports/main-run", "judges_differ": [], "compared": True,
                          "families": {"socratic": {"win_rate": entry}}}
    text = markdown(summary_of(tree), [], FAMILIES)
    assert "| family | headline metric | value [95% CI] | n | change [95% CI] vs baseline |" in text
    assert "-0.0333 [-0.212, +0.146], 5 shared cases, 1 only here, 0 only in the baseline |" in text
    tree["comparison"]["confidence"] = 0.92  # --llm-compare-confidence 0.92: the column says so
    assert "| change [92% CI] vs baseline |" in markdown(summary_of(tree), [], FAMILIES)
    tree["comparison"] |= {"compared": False, "families": {},
                           "judges_differ": [{"field": "model", "current": "a", "baseline": "b"}]}
    text = markdown(summary_of(tree), [], FAMILIES)
    assert "Baseline: `reports/main-run`; not compared: the judges differ (model: `a` here, `b` in the baseline)" \
        in text
    assert "| socratic | `socratic.win_rate` |" in text and "| not compared |" in text


def test_the_terminal_shows_the_decision_and_says_what_it_left_out(tmp_path):
    summary = summary_of(tree_of(socratic_records()))
    gates = [Gate.parse("socratic.win_rate>=0.1").check(summary)]
    lines = terminal_lines(summary, gates, tmp_path / "run", FAMILIES)
    assert lines[0].startswith("PASS         socratic.win_rate>=0.1: value 0.667 [")
    assert lines[1] == "socratic: 6 cases, 6 verdicts, 0 unscored"
    assert lines[2].startswith("  socratic.win_rate")
    from llmjury.results.decision import metric_rows

    hidden = frozenset(FAMILIES["socratic"].hidden_from_tables)
    left_out = len(metric_rows(summary.families["socratic"].tree(), hidden=hidden)) - 1
    assert f"  ({left_out} more metric rows for socratic in {tmp_path / 'run' / 'summary.md'})" in lines


def test_the_terminals_metric_columns_fit_the_longest_metric_name(tmp_path):
    """An own eval's metric is named after its test: the values stayed aligned only for names of
    up to 34 characters."""
    tree = tree_of(socratic_records())
    name = "test_the_tutor_never_gives_the_answer_away_in_its_first_turn"
    tree["socratic"]["check"] = {name: {"pass_rate": dict(tree["socratic"]["win_rate"])}}
    tree["socratic"]["headline"] = ["win_rate", f"check.{name}.pass_rate", "tie_rate"]
    lines = [line for line in terminal_lines(summary_of(tree), [], tmp_path, FAMILIES) if " n=" in line]
    assert len(lines) == 3 and len({line.index(" n=") for line in lines}) == 1
    assert len({re.match(r" +\S+ +", line).end() for line in lines}) == 1  # type: ignore[union-attr]  # values too


def test_an_incomplete_run_says_so_first(tmp_path):
    tree = tree_of(socratic_records())
    tree["complete"] = False
    tree["run"]["stopped"] = {"by": "SIGTERM", "tests_finished": 6, "tests_collected": 40}
    summary = summary_of(tree)
    assert summary.status.model_dump() == {"state": "partial", "cause": "SIGTERM"}
    assert markdown(summary, [], FAMILIES).splitlines()[2].startswith(
        "> **Incomplete run: stopped by SIGTERM after 6 of 40 tests.**")
    assert terminal_lines(summary, [], tmp_path, FAMILIES)[0].startswith(
        "INCOMPLETE RUN: stopped by SIGTERM after 6 of 40 tests")


# -- report.html --------------------------------------------------------------------------------
def _metric(value: float, half: float = 0.05, n: int = 50) -> dict[str, Any]:
    return {"value": value, "low": value - half, "high": value + half, "n": n, "method": "wilson"}


def plotted_summary() -> RunSummary:
    """A run with every family a plot reads: arena leaderboards and consistency, geval validity."""
    summary = tree_of(socratic_records())
    summary["run"]["families"] = ["arena", "geval", "socratic"]
    summary["arena"] = {"cases": 3, "verdicts": 3, "unscored": 0, "unscored_reasons": {}, "judges": ["x"],
                        "main": "mtbench/judge", "rating": {"m1": _metric(1040, 20), "m2": _metric(960, 25)},
                        "swap_consistency": _metric(0.8),
                        "leaderboards": {"mtbench/judge": {"rating": {"m1": _metric(1040, 20)}},
                                         "prd/human": {"rating": {"m3": _metric(1010, 15), "m4": _metric(990, 9)}}},
                        "judge_validity": {"prd": {"reviewers": {"gpt4": {"swap_consistency": _metric(0.7)}}},
                                           "llmbar": {"Natural/GPT-4": {"positional_agreement": _metric(0.9)}}}}
    summary["geval"] = {"cases": 2, "verdicts": 2, "unscored": 0, "unscored_reasons": {}, "judges": ["x"],
                        "judge_validity": {"judge-a/topical_chat/response/coherence":
                                           {"spearman": _metric(0.5, 0.1), "human_ceiling_spearman": 0.74},
                                           "judge-b/dstc9/dialogue/overall":
                                           {"spearman": _metric(0.2, 0.1), "human_ceiling_spearman": None}}}
    return summary_of(summary)


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def test_report_html_holds_every_plot_and_table_and_fetches_nothing():
    from llmjury.reporting.report_html import page

    summary = plotted_summary()
    text = page(summary, [Gate.parse("socratic.win_rate>=0.1").check(summary)], FAMILIES)
    parser = _Elements()
    parser.feed(text)
    ids = {attrs.get("id") for _, attrs in parser.tags}
    assert {"gates", "headline", "leaderboard-0", "leaderboard-1", "subset-win-rates", "judge-vs-human",
            "position-consistency", "details-arena", "details-geval", "details-socratic"} <= ids
    assert "leaderboard-2" not in ids  # the main board is not drawn twice
    figures = re.findall(r"<figure id=\"([\w-]+)\">(.*?)</figure>", text, re.S)
    assert len(figures) == 5 and all("<svg" in body and "<path" in body for _, body in figures)
    tags = {tag for tag, _ in parser.tags}
    assert not tags & {"script", "link", "img", "iframe", "object"}
    fetched = [value for _, attrs in parser.tags for name, value in attrs.items()
               if name in {"src", "href", "xlink:href"} and value and not value.startswith("#")]
    assert fetched == [] and "url(http" not in text and "@import" not in text


def test_report_html_is_the_same_for_the_same_summary():
    from llmjury.reporting.report_html import page

    summary = plotted_summary()
    assert page(summary, [], FAMILIES) == page(summary, [], FAMILIES)


def test_a_process_compiles_each_report_template_once(monkeypatch):
    """Every page, view and re-aggregated report of a process renders from one jinja2 environment:
    each new one compiled the templates again (40 ms a report)."""
    from jinja2 import Environment

    from llmjury.reporting.report_html import page

    compiled: list[str | None] = []
    compile_ = Environment.compile

    def counted(self: Environment, source: str, name: str | None = None, *args: object, **kwargs: object) -> object:
        compiled.append(name)
        return compile_(self, source, name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Environment, "compile", counted)
    summary = plotted_summary()
    page(summary, [], FAMILIES)
    first = len(compiled)
    page(summary, [], FAMILIES)
    assert len(compiled) == first  # none again (the first may be 0: an earlier test compiled them)


@pytest.mark.e2e  # starts a headless Chromium: seconds of CPU
@needs(shutil.which("chromium") is not None, "no Chromium (Debian package chromium) on this machine")
def test_report_html_renders_in_headless_chromium(tmp_path):
    from PIL import Image

    from llmjury.reporting.report_html import page

    report = tmp_path / "report.html"
    report.write_text(page(plotted_summary(), [], FAMILIES), encoding="utf-8")
    shot = tmp_path / "report.png"
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,3000",
                    f"--screenshot={shot}", report.as_uri()],
                   check=True, capture_output=True, timeout=120)
    image = Image.open(shot).convert("RGB")
    assert image.size == (1200, 3000)
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50, "the page rendered blank"


# -- the run folder -----------------------------------------------------------------------------
def test_verdicts_and_tables_are_gzipped_and_read_back(tmp_path):
    records = socratic_records()
    run_dir = write_run(tmp_path, summary_of(tree_of(records)), records, [], FAMILIES)
    assert {"summary.json", "summary.md", "report.html", VERDICTS, "socratic.csv.gz"} <= \
        {p.name for p in run_dir.iterdir()}
    assert read_verdicts(run_dir) == records == read_verdicts(run_dir / VERDICTS)
    import pandas as pd

    assert list(pd.read_csv(run_dir / "socratic.csv.gz")["case_id"]) == [r["case_id"] for r in records]
    plain = tmp_path / "old" / "verdicts.jsonl"  # what earlier versions wrote
    plain.parent.mkdir()
    plain.write_text(gzip.decompress((run_dir / VERDICTS).read_bytes()).decode("utf-8"), encoding="utf-8")
    assert read_verdicts(plain.parent) == records


def test_verdict_table_is_the_csv_pandas_json_normalize_writes():
    import pandas as pd

    records = [
        {"case_id": "a", "family": "t", "judge": {"provider": "p", "temperature": 0.0, "n": 1},
         "result": {"score": 3, "share": 0.25, "ok": True, "runs": [{"order": "ab", "x": 1.5}], "nested": {"deep": 1},
                    "empty": {}},
         "valid": True, "error": None, "raw": ["one, \"quoted\"", "two\nlines"], "cost_usd": None, "latency_s": 1},
        {"case_id": "b", "family": "t", "judge": {"provider": "p", "temperature": 1.0, "n": 2},
         "result": {"score": None, "share": float("nan"), "mixed": "text", "nested": {"deep": 2, "deeper": {"z": "é"}}},
         "valid": False, "error": "unparseable: x", "raw": [], "cost_usd": 0.1, "latency_s": 2, "extra": [1, 2]},
        {"case_id": "c", "family": "t", "judge": {"provider": "q", "temperature": 0.5, "n": 3},
         "result": {"score": 7, "share": 1, "ok": False, "mixed": 4, "flag": None},
         "valid": True, "error": None, "raw": ["r"], "latency_s": 3.5, "tokens": 12},
    ]
    slim = [{k: v for k, v in r.items() if k != "raw"} | {"raw": " ||| ".join(r["raw"])} for r in records]
    assert "".join(verdict_table(records)) == pd.json_normalize(slim, sep=".").to_csv(index=False)
    assert "".join(verdict_table([])) == pd.DataFrame().to_csv(index=False)


def test_csv_table_with_its_columns_is_the_csv_pandas_writes():
    import pandas as pd

    rows = [{"model": "a", "rank": 1, "low": None, "battles": 3, "valid": True, "note": "x, \"y\""},
            {"model": "b", "rank": 2, "low": 0.5, "battles": 4, "valid": False},
            {"model": "c", "rank": None, "low": float("nan"), "battles": 5, "note": "line\nbreak"}]
    for columns in (None, ["model", "battles", "missing", "note"], ["low"], ["model"]):
        assert csv_table(rows, columns) == pd.DataFrame(rows, columns=columns).to_csv(index=False)
    assert csv_table([], ["a", "b"]) == pd.DataFrame([], columns=["a", "b"]).to_csv(index=False)
    # Written a line at a time (a run's whole verdict table is never one string): the same bytes.
    parts = list(csv_chunks(lambda: iter(rows), chunk_chars=1))
    assert len(parts) == 1 + len(rows) and "".join(parts) == pd.DataFrame(rows).to_csv(index=False)


_CELLS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_infinity=False),
                  st.text("ab, \"\n", max_size=3))


@given(st.lists(st.dictionaries(st.sampled_from("pqrst"), _CELLS, max_size=5), min_size=1, max_size=8))
def test_rows_of_any_shapes_and_kinds_are_the_csv_pandas_writes(rows):
    """Columns in order of first appearance, a column's kind over every row that has it (counted by
    the rows' shapes), gaps: the bytes pandas writes."""
    import pandas as pd

    assert csv_table(rows) == pd.DataFrame(rows).to_csv(index=False)


def test_a_gzipped_run_file_is_read_like_its_plain_text(tmp_path):
    from llmjury.datasets.files import read_records, read_text
    from llmjury.errors import DatasetError

    records = socratic_records()
    run_dir = write_run(tmp_path, summary_of(tree_of(records)), records, [], FAMILIES)
    assert [record for _, record in read_records(run_dir / VERDICTS)] == records
    (tmp_path / "broken.jsonl.gz").write_bytes(b"not gzip at all")
    with pytest.raises(DatasetError, match=r"broken\.jsonl\.gz: not a readable gzip file"):
        read_text(tmp_path / "broken.jsonl.gz")


def test_latest_points_at_the_newest_run_with_verdicts_and_copies_nothing(tmp_path):
    records = socratic_records()
    first = write_run(tmp_path, summary_of(tree_of(records, "run-1")), records, [], FAMILIES)
    latest = tmp_path / LATEST
    assert latest.is_symlink() and latest.resolve() == first.resolve()
    (tmp_path / LATEST / "stale").mkdir()  # a folder left by an old copy must not survive
    second = write_run(tmp_path, summary_of(tree_of(records, "run-2")), records, [], FAMILIES)
    assert latest.resolve() == second.resolve()
    empty = write_run(tmp_path, summary_of(tree_of([], "run-3")), [], [], FAMILIES)  # failed before any verdict
    assert empty.is_dir() and latest.resolve() == second.resolve()
    assert json.loads((latest / "summary.json").read_text())["run"]["id"] == "run-2"


def test_an_old_latest_copy_is_replaced_by_the_pointer(tmp_path):
    (tmp_path / LATEST).mkdir(parents=True)
    (tmp_path / LATEST / "verdicts.jsonl").write_text("{}\n")
    records = socratic_records()
    run_dir = write_run(tmp_path, summary_of(tree_of(records)), records, [], FAMILIES)
    assert (tmp_path / LATEST).resolve() == run_dir.resolve()


def test_where_symlinks_fail_latest_is_a_file_naming_the_run(tmp_path, monkeypatch):
    def refuse(self: Path, target: Any, target_is_directory: bool = False) -> None:
        raise OSError("symlinks are not allowed here")

    monkeypatch.setattr(Path, "symlink_to", refuse)
    records = socratic_records()
    run_dir = write_run(tmp_path, summary_of(tree_of(records)), records, [], FAMILIES)
    latest = tmp_path / LATEST
    assert latest.is_file() and latest.read_text().strip() == run_dir.name
    assert read_verdicts(latest) == records


def test_identical_files_are_linked_not_written_twice(tmp_path):
    files = {"a/records.csv": "x,y\n" * 1000, "b/records.csv": "x,y\n" * 1000, "c.csv": "other\n"}
    links = link_identical(files)
    assert links == {"b/records.csv": "a/records.csv"}
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "records.csv").write_text(files["a/records.csv"])
    place(tmp_path, "b/records.csv", "a/records.csv")
    assert (tmp_path / "b" / "records.csv").read_text() == files["b/records.csv"]
    assert (tmp_path / "b" / "records.csv").stat().st_ino == (tmp_path / "a" / "records.csv").stat().st_ino


# -- interrupted runs -----------------------------------------------------------------------------
BLOCKING = """
import threading

import pytest

from llmjury import JudgeConfig, Verdict


@pytest.mark.parametrize("i", range(3))
def test_finished(record_verdict, i):
    record_verdict(Verdict(case_id=f"c{i}", family="toy", judge=JudgeConfig(provider="offline:heuristic")))


def test_zz_a_long_call(record_verdict):
    record_verdict(Verdict(case_id="never", family="toy", judge=JudgeConfig(provider="offline:heuristic")))
    print("llmjury-test: blocked", flush=True)
    threading.Event().wait()  # a model call that would outlive the CI time limit
"""

INI = """
[pytest]
addopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider
"""


# A shell that starts a command in the background without job control (`(pytest ... &)` in a
# script) makes it ignore SIGINT, and a child inherits that: Python then installs no Ctrl-C handler
# and the run sent SIGINT would block forever. The child restores Ctrl-C itself, whoever started us.
PYTEST_WITH_CTRL_C = ("import signal, sys, pytest; signal.signal(signal.SIGINT, signal.default_int_handler); "
                      "sys.exit(pytest.console_main())")


@pytest.mark.e2e  # the signal goes to a pytest process of its own
@pytest.mark.parametrize(("signum", "by"), [(signal.SIGTERM, "SIGTERM"),
                                            (signal.SIGINT, "KeyboardInterrupt (Ctrl-C)")])
def test_a_stopped_run_writes_what_it_finished_marked_incomplete(pytester, signum, by):
    pytester.makeini(INI)
    pytester.makepyfile(test_blocking=BLOCKING)
    with subprocess.Popen([sys.executable, "-c", PYTEST_WITH_CTRL_C, "-n", "0", "-s", "-q"], cwd=pytester.path,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as process:
        assert process.stdout is not None
        seen = []
        for line in process.stdout:  # the event: the last test is inside its long call
            seen.append(line)
            if "llmjury-test: blocked" in line:
                break
        assert process.poll() is None, "".join(seen)
        os.kill(process.pid, signum)
        try:
            output = "".join(seen) + process.communicate(timeout=120)[0]
        finally:
            process.kill()  # a run that ignored the signal must not outlive the test
    assert process.returncode == pytest.ExitCode.INTERRUPTED, output
    summary = json.loads((pytester.path / "reports" / LATEST / "summary.json").read_text())
    assert summary["complete"] is False
    assert summary["run"]["stopped"] == {"by": by, "tests_finished": 3, "tests_collected": 4, "planned_verdicts": 0}
    assert sorted(r["case_id"] for r in read_verdicts(pytester.path / "reports" / LATEST)) == ["c0", "c1", "c2"]
    head = (pytester.path / "reports" / LATEST / "summary.md").read_text().splitlines()[2]
    assert head.startswith(f"> **Incomplete run: stopped by {by} after 3 of 4 tests.**")
    assert f"INCOMPLETE RUN: stopped by {by} after 3 of 4 tests" in output


def test_a_whole_run_is_complete(pytester):
    pytester.makeini(INI)
    pytester.makepyfile(test_done="""
from llmjury import JudgeConfig, Verdict

def test_one(record_verdict):
    record_verdict(Verdict(case_id="c", family="toy", judge=JudgeConfig(provider="offline:heuristic")))
""")
    pytester.runpytest_inprocess("-n", "0").assert_outcomes(passed=1)
    summary = json.loads((pytester.path / "reports" / LATEST / "summary.json").read_text())
    assert summary["complete"] is True and summary["run"]["stopped"] is None


PLANNING = """
import asyncio
import os
import signal
import threading

import llmjury
from llmjury import Case, JudgeConfig, Outcome, Verdict
from llmjury.judgement.planner import in_share, work_key


class Item(Case):
    text: str


FAST = [Item(id=f"fast-{i}", family="toy", text="x") for i in range(8)]
FINISHED = []
ALL_MINE = asyncio.Event()


def mine():
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        return FAST
    count = int(os.environ["PYTEST_XDIST_WORKER_COUNT"])
    return [c for c in FAST if in_share(work_key(judge, c), int(worker.lstrip("gw")), count)]


async def judge(case, jury):
    if case.id != "slow":
        FINISHED.append(case.id)
        if len(FINISHED) == len(mine()):
            ALL_MINE.set()
        return Outcome([Verdict(case_id=case.id, family="toy", judge=JudgeConfig(provider="offline:heuristic"))])
    if mine():
        await ALL_MINE.wait()  # the event: every other case this process plans has finished
    controller = os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else os.getpid()
    os.kill(controller, signal.SIGTERM)  # the CI time limit, in the middle of planning
    await asyncio.Event().wait()


@llmjury.pipeline(judge)
@llmjury.parametrize(FAST + [Item(id="slow", family="toy", text="x")])
def test_toy(outcome):
    threading.Event().wait()  # planning runs beside the tests: none may report before the SIGTERM
"""


@pytest.mark.e2e  # the run sends SIGTERM to its own controller: it must not be this process
@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_run_stopped_while_planning_reports_the_cases_planning_finished(pytester, monkeypatch, workers):
    from llmjury.judgement.planner import owner_of

    # Under xdist this test runs in a worker: the run it starts must not take itself for one (and
    # signal this worker's parent).
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT", raising=False)
    pytester.makeini(INI)
    pytester.makepyfile(test_planning=PLANNING)
    result = pytester.runpytest_subprocess("-n", workers)
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()
    summary = json.loads((pytester.path / "reports" / LATEST / "summary.json").read_text())
    assert summary["complete"] is False and summary["run"]["stopped"]["by"] == "SIGTERM"
    judged = {r["case_id"] for r in read_verdicts(pytester.path / "reports" / LATEST)}
    fast = {f"fast-{i}" for i in range(8)}
    count = int(workers) or 1
    slow_owner = owner_of("test_planning.judge::slow", count)
    planned_beside_slow = {c for c in fast if owner_of(f"test_planning.judge::{c}", count) == slow_owner}
    assert planned_beside_slow <= judged <= fast
    assert summary["run"]["stopped"]["planned_verdicts"] >= len(planned_beside_slow) > 0
    result.stdout.fnmatch_lines(["INCOMPLETE RUN: stopped by SIGTERM after * tests (* verdicts from planned cases*"])


def test_a_change_is_found_under_the_key_a_gate_writes():
    from llmjury.results.decision import decide

    summary = summary_of({"run": {"families": ["arena"]},
               "arena": {"cases": 2, "verdicts": 2, "unscored": 0, "headline": ["rating"],
                         "rating": {"gpt-3.5-turbo": _metric(1010.0, 10), "gpt_4": _metric(1050.0, 10)}},
               "comparison": {"baseline": "b", "compared": True, "judges_differ": [], "families": {"arena": {
                   "rating[gpt-3.5-turbo]": {"delta": {"value": -5.0, "low": -9.0, "high": -1.0}, "shared_cases": 2},
                   "rating.gpt_4": {"delta": {"value": 3.0, "low": -1.0, "high": 7.0}, "shared_cases": 2}}}}})
    rows = decide(summary, []).families[0].rows
    assert [(row.path, row.change.value if row.change else None) for row in rows] == \
        [("rating.gpt_4", 3.0), ("rating[gpt-3.5-turbo]", -5.0)]


def test_verdict_lines_are_read_in_blocks_that_share_key_strings_and_a_bad_line_is_named(tmp_path, monkeypatch):
    from llmjury import runfiles
    from llmjury.errors import ConfigError

    monkeypatch.setattr(runfiles, "READ_BLOCK", 2)
    records = [{"case_id": f"c{i}", "family": "t", "result": {"score": i}} for i in range(5)]
    file = tmp_path / "verdicts.jsonl"
    file.write_text("\n".join(json.dumps(r) for r in records[:3]) + "\n\n" + "\n".join(
        json.dumps(r) for r in records[3:]) + "\n", encoding="utf-8")
    read = runfiles.read_verdicts(file)
    assert read == records
    first, second = (next(iter(r)) for r in read[:2])
    assert first is second  # one string for the key in a block, not one per record
    for bad, number in (("{\"case_id\": \"c9\"", 5), ("1, 2", 5), ("]", 5)):
        lines = file.read_text(encoding="utf-8").splitlines()
        lines[number - 1] = bad
        (tmp_path / "bad.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        with pytest.raises(ConfigError, match=rf"bad\.jsonl line {number}: not a JSON verdict record"):
            runfiles.read_verdicts(tmp_path / "bad.jsonl")


def test_a_role_the_offline_heuristics_played_beside_a_real_judge_is_said(tmp_path):
    """`--llm-role candidat=...` (a typo) left `candidate` to the heuristics under a real judge, and
    neither the terminal nor summary.md said so: only a warning in pytest's summary (a user trial)."""
    offline = {"offline:heuristic": {"policy": "offline heuristics", "fresh_samples": 18, "replayed_samples": 0}}
    real = {"openai:judge": {"policy": "fixed instrument", "fresh_samples": 126, "replayed_samples": 0}}
    summary = summary_of({"usage": {"roles": {"candidate": offline, "judge": real}}})
    said = ("offline heuristics played candidate (no --llm-role candidate=SPEC was set): its answers are "
            "llmjury's, not a system's")
    assert said in terminal_lines(summary, [], tmp_path / "run", {})
    assert f"> **O{said[1:]}.**" in markdown(summary, [], {})
    everything_offline = summary_of({"run": {"offline": True}, "usage": {"roles": {"candidate": offline}}})
    assert not any("heuristics played" in line for line in terminal_lines(everything_offline, [], tmp_path, {}))
