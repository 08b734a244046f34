"""Shards: `--llm-shard I/N` parsed at start-up, the partition by case, the manifest, and each set of
shards `llmjury merge` refuses, named."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from llmjury.cases import Case
from llmjury.cli import main
from llmjury.errors import ConfigError
from llmjury.jurors import JurySpec
from llmjury.results.shard_manifest import (
    MANIFEST,
    ShardManifest,
    fingerprint,
    read_manifest,
    suite_digest,
    verdict_settings,
)
from llmjury.running.settings import Settings
from llmjury.running.shard import Shard
from llmjury.session.sharding import select, shard_key


# -- the option --------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "shard"), [("1/4", Shard(1, 4)), ("4/4", Shard(4, 4)), (" 2 / 3 ", Shard(2, 3)),
                                             ("1/1", Shard(1, 1))])
def test_a_shard_is_its_number_from_one_of_a_count(text, shard):
    assert Shard.parse(text) == shard and str(shard) == f"{shard.index}/{shard.count}"


@pytest.mark.parametrize(("text", "cause"), [
    ("0/4", "between 1 and 4"), ("5/4", "between 1 and 4"), ("1/0", "at least 1"), ("a/b", "write I/N"),
    ("2", "write I/N"), ("-1/4", "write I/N"), ("", "write I/N"),
])
def test_a_bad_shard_is_a_config_error_naming_the_option_and_the_value(text, cause):
    with pytest.raises(ConfigError, match=rf"^--llm-shard {text!r}: .*{cause}"):
        Shard.parse(text)


# -- the partition -----------------------------------------------------------------------------------
def item(nodeid: str, case: Case | None = None) -> SimpleNamespace:
    """What the selection reads of a pytest item: its node id and the case it was parametrized with."""
    return SimpleNamespace(nodeid=nodeid, callspec=SimpleNamespace(params={} if case is None else {"case": case}))


def suite(cases: int = 200, plain: int = 40) -> list[SimpleNamespace]:
    """Two tests per case (as a family's eval has), and tests without a case."""
    made = [Case(id=f"c{i}", family="fam") for i in range(cases)]
    return ([item(f"evals/test_fam.py::test_{kind}[c{i}]", case) for kind in ("a", "b") for i, case in enumerate(made)]
            + [item(f"tests/test_own.py::test_{i}") for i in range(plain)])


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_every_test_lands_in_exactly_one_shard_with_every_other_test_of_its_case(count):
    items = suite()
    held: Counter[str] = Counter()
    shard_of_case: dict[str, set[int]] = {}
    for index in range(1, count + 1):
        kept, dropped, selected = select(items, Shard(index, count))
        assert len(kept) + len(dropped) == len(items) and selected.node_ids == sorted(i.nodeid for i in kept)
        assert selected.tests == len(items)
        held.update(i.nodeid for i in kept)
        for kept_item in kept:
            case = kept_item.callspec.params.get("case")
            if case is not None:
                shard_of_case.setdefault(case.id, set()).add(index)
    assert set(held) == {i.nodeid for i in items} and set(held.values()) == {1}
    assert all(len(shards) == 1 for shards in shard_of_case.values()) and len(shard_of_case) == 200


def test_the_partition_is_sha256_of_the_case_not_pythons_hash_and_spreads_evenly():
    items = suite(cases=400, plain=0)
    sizes = [len(select(items, Shard(index, 4))[0]) for index in range(1, 5)]
    assert sum(sizes) == 800 and min(sizes) >= 2 * 70  # 100 cases a shard on average, two tests each
    # Pinned to the planner's hash of the case's family and id, the same on every machine and run.
    expected = int.from_bytes(hashlib.sha256(b"case::fam::c7").digest()[:8], "big") % 4 + 1
    assert shard_key(items[7]) == "case::fam::c7"
    assert [i for i in range(1, 5) if items[7] in select(items, Shard(i, 4))[0]] == [expected]
    assert shard_key(item("tests/test_own.py::test_3")) == "test::tests/test_own.py::test_3"


def test_the_suite_digest_ignores_collection_order_but_not_a_test_more():
    ids = [f"t{i}" for i in range(10)]
    assert suite_digest(ids) == suite_digest(reversed(ids)) != suite_digest([*ids, "t10"])


# -- the manifest ------------------------------------------------------------------------------------
def manifest(shard: int = 1, count: int = 2, node_ids: tuple[str, ...] = ("a",), **changes: object) -> ShardManifest:
    settings = verdict_settings(Settings())
    return ShardManifest.model_validate({
        "shard": shard, "count": count, "run_id": f"run-{shard}", "suite": suite_digest(["a", "b"]), "tests": 2,
        "settings": settings, "fingerprint": fingerprint(suite_digest(["a", "b"]), settings),
        "node_ids": list(node_ids), **changes})


def test_the_manifest_round_trips_through_shard_json(tmp_path):
    written = manifest(2, 3, ("x", "y"), spend_usd=0.25)
    (tmp_path / MANIFEST).write_text(written.model_dump_json(indent=2))
    assert read_manifest(tmp_path) == written and written.label == "2/3"


def test_a_manifest_of_another_version_or_shape_is_refused_naming_the_file(tmp_path):
    (tmp_path / MANIFEST).write_text(manifest().model_dump_json().replace('"version":1', '"version":2'))
    with pytest.raises(ConfigError, match=rf"^{tmp_path / MANIFEST}: not a shard manifest \(version: "):
        read_manifest(tmp_path)
    with pytest.raises(ConfigError, match=rf"^{tmp_path / 'nothing'}: no shard.json: not the run folder of a shard"):
        read_manifest(tmp_path / "nothing")


def test_the_fingerprint_covers_the_settings_that_change_verdicts_with_specs_redacted(tmp_path):
    base = Settings()
    suite_id = suite_digest(["a"])
    same = fingerprint(suite_id, verdict_settings(replace(base, concurrency=3, gates=("x.y>=1",))))
    assert same == fingerprint(suite_id, verdict_settings(base))  # how fast, and what is gated, change no verdict
    for changed in (replace(base, seed=1), replace(base, judge_runs=5), replace(base, sample=10),
                    replace(base, options={"socratic.dialogues": "3"}), replace(base, judge_output="text")):
        assert fingerprint(suite_id, verdict_settings(changed)) != same
    prompts = tmp_path / "prompts"
    (prompts / "polite").mkdir(parents=True)
    (prompts / "polite" / "judge.j2").write_text("Is it polite?")
    shadowed = fingerprint(suite_id, verdict_settings(replace(base, prompts=prompts)))
    (prompts / "polite" / "judge.j2").write_text("Is it rude?")
    assert len({same, shadowed, fingerprint(suite_id, verdict_settings(replace(base, prompts=prompts)))}) == 3
    secret = verdict_settings(replace(base, judge=JurySpec.parse("openai:gpt-4o;api_key=sk-live-123")))
    assert secret["judge"] == "openai:gpt-4o;api_key=***"


# -- the refusals ------------------------------------------------------------------------------------
def shard_dir(root: Path, name: str, written: ShardManifest | None) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    if written is not None:
        (folder / MANIFEST).write_text(written.model_dump_json())
    return folder


def refused(capsys: pytest.CaptureFixture[str], *folders: Path) -> str:
    assert main(["merge", *map(str, folders), "--out", str(folders[0].parent / "out")]) == 4
    message: str = capsys.readouterr().err
    assert message.startswith("llmjury merge: ")
    return message.strip()


def test_merge_refuses_a_folder_without_a_manifest(tmp_path, capsys):
    one, other = shard_dir(tmp_path, "one", manifest(1)), shard_dir(tmp_path, "plain", None)
    assert refused(capsys, one, other) == (f"llmjury merge: {other}: no shard.json: not the run folder of a shard "
                                           "(run pytest with --llm-shard I/N to make one)")


def test_merge_refuses_a_missing_shard_naming_it(tmp_path, capsys):
    one, three = shard_dir(tmp_path, "one", manifest(1, 3)), shard_dir(tmp_path, "three", manifest(3, 3, ("c",)))
    assert refused(capsys, three, one) == (f"llmjury merge: shard 2/3 missing: given shard 1/3 ({one}), "
                                           f"shard 3/3 ({three})")


def test_merge_refuses_a_repeated_shard_naming_both_folders(tmp_path, capsys):
    one, again = shard_dir(tmp_path, "one", manifest(1)), shard_dir(tmp_path, "again", manifest(1))
    assert refused(capsys, one, again) == f"llmjury merge: shard 1/2 given twice: {one} and {again}"


def test_merge_refuses_shards_that_ran_the_same_test(tmp_path, capsys):
    one, two = shard_dir(tmp_path, "one", manifest(1, node_ids=("a",))), shard_dir(
        tmp_path, "two", manifest(2, node_ids=("a", "b")))
    assert refused(capsys, one, two) == (f"llmjury merge: shard 2/2 ({two}) and shard 1/2 ({one}) both ran a: "
                                         "not shards of one split")


def test_merge_refuses_a_shard_of_another_count(tmp_path, capsys):
    one, two = shard_dir(tmp_path, "one", manifest(1, 2)), shard_dir(tmp_path, "two", manifest(2, 3, ("b",)))
    assert refused(capsys, one, two) == f"llmjury merge: shard 2/3 ({two}): one of 3 shards, but shard 1/2 ({one}) " \
                                        "is one of 2"


def test_merge_refuses_a_shard_run_with_other_settings_naming_what_differs(tmp_path, capsys):
    settings = {**verdict_settings(Settings()), "seed": 7}
    other = manifest(2, node_ids=("b",), settings=settings, fingerprint=fingerprint(suite_digest(["a", "b"]), settings))
    one, two = shard_dir(tmp_path, "one", manifest(1)), shard_dir(tmp_path, "two", other)
    assert refused(capsys, one, two) == (f"llmjury merge: shard 2/2 ({two}): run with other settings than "
                                         f"shard 1/2 ({one}) (seed 7 against 0)")


def test_merge_refuses_a_shard_of_another_suite(tmp_path, capsys):
    other = manifest(2, node_ids=("b",), suite=suite_digest(["a", "b", "c"]), tests=3)
    one, two = shard_dir(tmp_path, "one", manifest(1)), shard_dir(tmp_path, "two", other)
    assert refused(capsys, one, two).startswith(f"llmjury merge: shard 2/2 ({two}): collected other tests than "
                                                f"shard 1/2 ({one}) (3 against 2, or different ones)")


def test_merge_refuses_a_shard_whose_run_stopped_early(tmp_path, capsys):
    one, two = shard_dir(tmp_path, "one", manifest(1)), shard_dir(tmp_path, "two", manifest(2, node_ids=("b",),
                                                                                            complete=False))
    assert refused(capsys, one, two) == (f"llmjury merge: shard 2/2 ({two}): its run stopped early (incomplete): "
                                         "run that shard again")


def test_merge_finds_the_run_folder_in_a_reports_folder_holding_one(tmp_path, capsys):
    """A CI artifact holds the shard's reports folder with its one run folder (no `latest` link)."""
    shard_dir(tmp_path / "artifact-1", "20260101-run", manifest(1))
    shard_dir(tmp_path / "artifact-2", "20260101-run", manifest(2, node_ids=("b",)))
    assert main(["merge", str(tmp_path / "artifact-1"), str(tmp_path / "artifact-2"), "--out", str(tmp_path / "out"),
                 "--run-id", "merged"]) == 0
    assert "merged 2 shards: 0 verdicts" in capsys.readouterr().out


def test_merge_refuses_a_reports_folder_holding_several_shard_runs(tmp_path, capsys):
    shard_dir(tmp_path / "reports", "run-a", manifest(1))
    shard_dir(tmp_path / "reports", "run-b", manifest(2, node_ids=("b",)))
    assert refused(capsys, tmp_path / "reports") == (f"llmjury merge: {tmp_path / 'reports'}: holds 2 shard runs "
                                                     "(run-a, run-b); name each run folder")
