"""`llmjury report` and `llmjury merge` build a report a family at a time from verdicts spilled to
disk (`llmjury.results.verdict_spill`, `llmjury.reporting.by_family`): the same files as a report of
verdicts held in memory, holding one family's at a time."""

from __future__ import annotations

import gzip
import io
import json
import random
import re
import string
import tracemalloc
from pathlib import Path

import pytest

from llmjury.cli import main
from llmjury.errors import ConfigError
from llmjury.families import discover
from llmjury.pricing import PriceTable
from llmjury.reporting.by_family import write_by_family
from llmjury.reporting.reports import write_run
from llmjury.results import aggregate
from llmjury.results.verdict_spill import VerdictSpill
from llmjury.runfiles import VERDICTS, gzip_member, read_verdicts, replacing


def record(family: str, case: str, *, text: str = "", passed: bool = True, valid: bool = True) -> dict:
    """A verdict record: `custom` checks are typed by an installed family, other families are not."""
    return {"case_id": case, "family": family, "kind": "check" if family == "custom" else "",
            "judge": {"provider": "pytest:assert" if family == "custom" else "openai:m"},
            "result": {"passed": passed} if family == "custom" else {}, "valid": valid,
            "error": None if valid else "refused: policy", "raw": [] if valid else ["I cannot."],
            "attributes": {"name": "t", "text": text}}


def write_lines(path: Path, records: list[dict], *, last_newline: bool = True) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + ("\n" if last_newline else ""))
    return path


def arena_verdicts(tmp_path: Path) -> Path:
    """A real family's verdicts with files of its own: pairwise judgements replayed into a run folder."""
    pairs = [{"id": f"p{i}", "prompt": f"Q{i % 4}", "answer_a": "a" * (i % 5 + 1), "answer_b": "b" * (i % 3 + 1),
              "model_a": ["sysA", "sysB", "sysC"][i % 3], "model_b": ["sysB", "sysC", "sysA"][i % 3],
              "label": "ab"[i % 2], "verdict_ab": "ab"[i % 2], "verdict_ba": "ba"[i % 3 % 2], "judge": "gpt-4"}
             for i in range(24)]
    (tmp_path / "judged.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))
    assert main(["replay", "arena", str(tmp_path / "judged.jsonl"), "--out", str(tmp_path / "replayed"),
                 "--name", "replayed"]) == 0
    return tmp_path / "replayed" / "replayed" / VERDICTS


def test_the_spill_sorts_verdicts_by_family_and_keeps_every_line_as_written(tmp_path):
    first = write_lines(tmp_path / "a.jsonl", [record("toy", "c1"), record("custom", "c2"), record("toy", "c3")])
    (tmp_path / "b.jsonl").write_text("\n" + json.dumps(record("toy", "c4"), indent=None, separators=(",", ":")))
    spill = VerdictSpill([first, tmp_path / "b.jsonl"], tmp_path)
    assert spill.families == ["custom", "toy"] and len(spill) == 4
    assert [r["case_id"] for r in spill.records("toy")] == ["c1", "c3", "c4"]
    assert spill.records("absent") == []
    lines = list(spill.lines())  # both files' lines in order, the blank one left out, each ending in a newline
    assert lines == [*first.read_text().splitlines(keepends=True), (tmp_path / "b.jsonl").read_text()[1:] + "\n"]


def gzipped(path: Path, text: str) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write(text)
    return path


def lines_of(*cases: str) -> str:
    return "".join(json.dumps(record("toy", case)) + "\n" for case in cases)


def test_gzipped_sources_holding_their_lines_as_written_are_joined_byte_for_byte(tmp_path):
    """Two shards' verdict files into one: their gzip members one after the other, read as one text
    (decompressed and compressed again, a suite's verdicts cost a report 0.4 s)."""
    shards = [gzipped(tmp_path / f"s{n}.jsonl.gz", lines_of(f"{n}-0", f"{n}-1", f"{n}-2")) for n in (1, 2)]
    spill = VerdictSpill(shards, tmp_path / "spill")
    spill.write(tmp_path / "joined.jsonl.gz")
    assert (tmp_path / "joined.jsonl.gz").read_bytes() == shards[0].read_bytes() + shards[1].read_bytes()
    assert [r["case_id"] for r in read_verdicts(tmp_path / "joined.jsonl.gz")] == ["1-0", "1-1", "1-2",
                                                                                     "2-0", "2-1", "2-2"]
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize("text", [
    lines_of("a0", "a1").rstrip("\n"),  # no newline after the last record: joined, it runs into the next one
    lines_of("a0") + "\n" + lines_of("a1"),  # a blank line between records
    lines_of("a0", "a1") + "\n",  # a blank line after them
    lines_of("a0", "a1") + "\x0c",  # a line str.strip() empties, not JSON's whitespace
    "",  # no record at all
])
def test_a_gzipped_source_with_any_line_but_a_record_has_the_lines_compressed_again(tmp_path, text):
    """The file's text is the sources' record lines, whatever else a source held, as one member."""
    odd, clean = gzipped(tmp_path / "a.jsonl.gz", text), gzipped(tmp_path / "b.jsonl.gz", lines_of("b0", "b1"))
    spill = VerdictSpill([odd, clean], tmp_path / "spill")
    spill.write(tmp_path / "joined.jsonl.gz")
    joined = (tmp_path / "joined.jsonl.gz").read_bytes()
    assert joined == gzip_of("".join(spill.lines()))
    assert len(read_verdicts(tmp_path / "joined.jsonl.gz")) == len(spill)


def test_a_plain_source_among_gzipped_ones_has_the_lines_compressed_again_and_no_source_an_empty_text(tmp_path):
    """One member, as a report of the same verdicts held in memory writes it; with no source, a gzip
    file of nothing (an empty file is no gzip file to `gzip -d`)."""
    plain, clean = tmp_path / "a.jsonl", gzipped(tmp_path / "b.jsonl.gz", lines_of("b0"))
    plain.write_text(lines_of("a0"))
    VerdictSpill([clean, plain], tmp_path / "spill").write(tmp_path / "mixed.jsonl.gz")
    assert (tmp_path / "mixed.jsonl.gz").read_bytes() == gzip_of(lines_of("b0", "a0"))
    VerdictSpill([], tmp_path / "spill").write(tmp_path / "none.jsonl.gz")
    assert gzip.decompress((tmp_path / "none.jsonl.gz").read_bytes()) == b""
    assert (tmp_path / "none.jsonl.gz").read_bytes()[:2] == b"\x1f\x8b"  # a gzip header, not an empty file


def gzip_of(text: str) -> bytes:
    out = io.BytesIO()
    gzip_member(out, [text])
    return out.getvalue()


def test_a_file_written_through_a_temporary_one_is_left_as_it_was_when_the_write_fails(tmp_path):
    path = tmp_path / "summary.json"
    path.write_text("before")
    with pytest.raises(RuntimeError), replacing(path) as out:
        out.write(b"half a summ")
        raise RuntimeError("disk gone")
    assert path.read_text() == "before" and sorted(p.name for p in tmp_path.iterdir()) == ["summary.json"]


@pytest.mark.parametrize("line, cause", [
    ("[1, 2]", "line 2: not a verdict record (a JSON object)"),
    ('{"case_id": "c9"}', "line 2: a verdict record names no family"),
    ('{"case_id": "c9", "family": ', "line 2: not a JSON verdict record"),
])
def test_a_line_that_is_not_a_verdict_record_stops_the_spill_naming_its_file_and_line(tmp_path, line, cause):
    path = tmp_path / "v.jsonl"
    path.write_text(json.dumps(record("toy", "c1")) + "\n" + line + "\n")
    with pytest.raises(ConfigError, match=re.escape(f"{path} {cause}")):
        VerdictSpill([path], tmp_path / "spill")


def test_llmjury_report_of_a_bad_line_names_it_and_writes_no_report(tmp_path, capsys):
    path = tmp_path / "v.jsonl"
    path.write_text(json.dumps(record("toy", "c1")) + "\n[]\n")
    assert main(["report", str(path), "--out", str(tmp_path / "out")]) == 4  # a usage error, as merge's
    assert capsys.readouterr().err == f"llmjury report: {path} line 2: not a verdict record (a JSON object)\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("again", ["folder", "file", "latest"])
def test_a_run_named_twice_counts_its_verdicts_once_as_it_counts_its_usage(tmp_path, again):
    """Before: `llmjury report run run/verdicts.jsonl.gz` read the run's summary once and its verdicts
    twice, every verdict counted twice."""
    run = arena_verdicts(tmp_path).parent
    other = {"folder": run, "file": run / VERDICTS, "latest": run.parent / "latest"}[again]
    assert main(["report", str(run), "--out", str(tmp_path / "out"), "--run-id", "once"]) == 0
    assert main(["report", str(run), str(other), "--out", str(tmp_path / "out"), "--run-id", "twice"]) == 0
    once, twice = (json.loads((tmp_path / "out" / name / "summary.json").read_text()) for name in ("once", "twice"))
    assert twice["arena"]["verdicts"] == once["arena"]["verdicts"] == len(read_verdicts(run))
    assert len(read_verdicts(tmp_path / "out" / "twice")) == len(read_verdicts(run))


def test_a_family_named_like_a_path_is_spilled_inside_the_spill_folder(tmp_path):
    spill_folder = tmp_path / "spill"
    spill_folder.mkdir()
    path = write_lines(tmp_path / "v.jsonl", [record("../../escaped", "c1"), record("a/b", "c2")])
    spill = VerdictSpill([path], spill_folder)
    assert spill.families == ["../../escaped", "a/b"]
    assert sorted(p.name for p in spill_folder.iterdir()) == ["family-0.jsonl", "family-1.jsonl"]
    assert not (tmp_path.parent / "escaped").exists()


def test_a_report_built_a_family_at_a_time_writes_the_files_of_one_built_from_held_verdicts(tmp_path):
    """Summary, tables, the families' own files, summary.md and report.html, byte for byte."""
    arena = arena_verdicts(tmp_path)
    others = write_lines(tmp_path / "others.jsonl", [record("custom", f"k{i}", passed=i % 3 > 0) for i in range(7)]
                         + [record("toy", f"t{i}", valid=i != 2, text=f"answer {i}") for i in range(5)])
    families, prices, run = discover(), PriceTable.load(), {"id": "same", "judge": "recorded"}
    records = read_verdicts(arena) + read_verdicts(others)
    typed = aggregate.typed_verdicts(records, families)
    summary = aggregate.summarize(records, run, {}, prices, families, (), typed)
    write_run(tmp_path / "held", summary, records, [], families, typed)
    spill = VerdictSpill([arena, others], tmp_path)
    streamed, results, run_dir = write_by_family(tmp_path / "streamed", spill, run, families, [],
                                                 uncertain="inconclusive", prices=prices)
    assert streamed == summary and results == [] and run_dir == tmp_path / "streamed" / "same"
    held = tmp_path / "held" / "same"
    names = sorted(str(p.relative_to(held)) for p in held.rglob("*") if p.is_file())
    assert {"arena.csv.gz", "custom.csv.gz", "toy.csv.gz", "report.html", "summary.json"} <= set(names)
    assert any("/" in name for name in names)  # arena's files of its own, in folders
    assert sorted(str(p.relative_to(run_dir)) for p in run_dir.rglob("*") if p.is_file()) == names
    for name in names:
        assert (run_dir / name).read_bytes() == (held / name).read_bytes(), name
    assert (tmp_path / "streamed" / "latest").resolve() == run_dir.resolve()


def test_a_report_holds_one_familys_verdicts_at_a_time(tmp_path):
    """Two families of the same size: a report of held verdicts peaks above both families' texts; one
    built a family at a time peaks lower by most of a family's."""
    rng = random.Random(7)
    text = "".join(rng.choices(string.ascii_letters, k=6000))
    records = [record(family, f"c{i:04d}", text=f"{family} {i} {text}", passed=i % 2 == 0)
               for family in ("custom", "toy") for i in range(600)]
    path = write_lines(tmp_path / "v.jsonl", records)
    one_family = sum(len(r["attributes"]["text"]) for r in records) / 2
    del records
    families, prices = discover(), PriceTable.load()

    def peak(build) -> float:
        build(tmp_path / "warm")  # imports and templates first: the peak is the verdicts'
        tracemalloc.start()
        try:
            build(tmp_path / "measured")
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    def held(out: Path) -> None:
        held_records = read_verdicts(path)
        typed = aggregate.typed_verdicts(held_records, families)
        summary = aggregate.summarize(held_records, {"id": out.name}, {}, prices, families, (), typed)
        write_run(out, summary, held_records, [], families, typed)

    def by_family(out: Path) -> None:
        spill = VerdictSpill([path], tmp_path)
        write_by_family(out, spill, {"id": out.name}, families, [], uncertain="inconclusive", prices=prices)

    held_peak, by_family_peak = peak(held), peak(by_family)
    assert held_peak > 2 * one_family  # both families' texts, and more
    assert by_family_peak < held_peak - 0.8 * one_family  # the other family's are not held


def test_a_csv_table_of_long_answers_is_written_in_parts_of_about_a_megabyte(tmp_path):
    """Before: a StringIO of a thousand rows, four bytes a character (24 MB for 6 KB answers)."""
    from llmjury.reporting.reports import verdict_table

    rows = [record("toy", f"c{i}", text="x" * 6000) for i in range(400)]
    parts = list(verdict_table(rows))
    assert len(parts) >= 2 and max(map(len, parts)) < 1_100_000
    assert gzip.decompress(gzip.compress("".join(parts).encode())).decode().count("\n") == 401


@pytest.mark.parametrize("change, cause", [
    ({"valid": "maybe"}, "a custom verdict record has valid 'maybe', not true or false"),
    ({"judge": {"model": "m"}}, "a custom verdict record names no judge provider (judge.provider)"),
    ({"case_id": 7}, "a custom verdict record has no case_id (a string)"),
    ({"error": ["refused"]}, "a custom verdict record has error ['refused'], not a string or null"),
])
def test_a_record_without_what_every_report_counts_is_named_before_anything_is_written(tmp_path, capsys, change,
                                                                                        cause):
    path = write_lines(tmp_path / "v.jsonl", [record("custom", "c1"), {**record("custom", "c2"), **change}])
    assert main(["report", str(path), "--out", str(tmp_path / "out")]) == 4
    assert capsys.readouterr().err == f"llmjury report: {path} line 2: {cause}\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("change, cause", [
    ({"result": {"passed": "often"}}, "passed: Input should be a valid boolean, unable to interpret input"),
    ({"kind": "nonsense"}, "family 'custom' has no verdict kind 'nonsense'"),
])
def test_a_record_its_familys_model_refuses_is_named_with_its_file_and_line_and_no_folder_is_left(
        tmp_path, capsys, change, cause):
    """Before: a pydantic traceback naming neither, and a half-written run folder."""
    good = write_lines(tmp_path / "good.jsonl", [record("toy", "t1")])
    path = write_lines(tmp_path / "v.jsonl", [record("custom", f"c{i}") for i in range(3)]
                       + [{**record("custom", "c3"), **change}])
    assert main(["report", str(good), str(path), "--out", str(tmp_path / "out"), "--run-id", "r"]) == 4
    err = capsys.readouterr().err
    assert err.startswith(f"llmjury report: {path} line 4: not a custom verdict record ({cause}")
    assert list((tmp_path / "out").iterdir()) == []  # the toy family's table was written, then taken back


def test_a_cut_gzip_stream_or_a_cut_line_is_named_with_where_it_stops(tmp_path, capsys):
    whole = gzip.compress("".join(json.dumps(record("toy", f"c{i}")) + "\n" for i in range(400)).encode())
    cut = tmp_path / "cut" / VERDICTS
    cut.parent.mkdir()
    cut.write_bytes(whole[: len(whole) // 2])
    assert main(["report", str(cut.parent), "--out", str(tmp_path / "out")]) == 4
    assert f"{cut}: cannot be read after line" in capsys.readouterr().err
    half = tmp_path / "half.jsonl"
    half.write_text(json.dumps(record("toy", "c1")) + "\n" + json.dumps(record("toy", "c2"))[:40] + "\n")
    assert main(["report", str(half), "--out", str(tmp_path / "out")]) == 4
    assert capsys.readouterr().err == (f"llmjury report: {half} line 2: not a JSON verdict record "
                                       "(Invalid control character at column 41)\n")


def test_report_reads_a_reports_folder_by_its_latest_run(tmp_path):
    arena = arena_verdicts(tmp_path)
    assert main(["report", str(arena.parents[1]), "--out", str(tmp_path / "out"), "--run-id", "r"]) == 0
    assert json.loads((tmp_path / "out" / "r" / "summary.json").read_text())["arena"]["verdicts"] == \
        len(read_verdicts(arena))


def test_reports_made_in_the_same_second_get_folders_of_their_own(tmp_path, monkeypatch):
    """Before: both wrote into one `<time>-reaggregated` folder."""
    monkeypatch.setattr("time.strftime", lambda _: "20261203-120000")
    path = write_lines(tmp_path / "v.jsonl", [record("toy", "c1")])
    for _ in range(3):
        assert main(["report", str(path), "--out", str(tmp_path / "out")]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "20261203-120000-reaggregated", "20261203-120000-reaggregated-2", "20261203-120000-reaggregated-3", "latest"]


def test_a_bad_record_in_a_run_folder_is_named_by_its_verdicts_file(tmp_path, capsys):
    folder = tmp_path / "run"
    folder.mkdir()
    lines = [json.dumps(record("toy", "c1")), json.dumps({**record("toy", "c2"), "valid": None})]
    (folder / VERDICTS).write_bytes(gzip.compress("".join(line + "\n" for line in lines).encode()))
    assert main(["report", str(folder), "--out", str(tmp_path / "out")]) == 4
    assert capsys.readouterr().err == (f"llmjury report: {folder / VERDICTS} line 2: a toy verdict record has "
                                       "valid None, not true or false\n")


def test_typing_a_familys_records_can_let_each_go_as_its_verdict_comes(tmp_path):
    path = write_lines(tmp_path / "v.jsonl", [record("custom", f"c{i}", passed=i % 2 == 0) for i in range(5)])
    spill, custom = VerdictSpill([path], tmp_path / "spill"), discover()["custom"]
    records = spill.records("custom")
    typed = spill.typed(custom, records)
    assert records == [] and [v.case_id for v in typed] == [f"c{i}" for i in range(5)]
    assert [v.result.passed for v in typed] == [True, False, True, False, True]
