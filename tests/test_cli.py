"""Re-aggregating saved verdicts reproduces the run's summary without calling a model."""

from __future__ import annotations

import json

import pytest

from llmjury.cli import main
from llmjury.results.exit_status import GATE_FAILED_EXIT
from llmjury.runfiles import VERDICTS


def test_report_reaggregates_several_verdict_files(tmp_path):
    def record(case, valid):
        return {"case_id": case, "family": "toy", "judge": {"provider": "openai:m"}, "result": {},
                "valid": valid, "error": None if valid else "refused: policy", "raw": [], "attributes": {}}

    (tmp_path / "a.jsonl").write_text("\n".join(json.dumps(record(f"c{i}", True)) for i in range(3)) + "\n")
    (tmp_path / "b.jsonl").write_text(json.dumps(record("c9", False)) + "\n")
    code = main(["report", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--out", str(tmp_path / "out"),
                 "--run-id", "again", "--gate", "toy.unscored<=0"])
    assert code == GATE_FAILED_EXIT == 10
    summary = json.loads((tmp_path / "out" / "again" / "summary.json").read_text())
    assert summary["toy"]["verdicts"] == 4 and summary["toy"]["unscored_reasons"] == {"refused": 1}
    assert summary["gates"][0]["status"] == "fail"


PAIRS = [
    {"id": "p1", "prompt": "Same prompt?", "answer_a": "A careful answer.", "answer_b": "short", "model_a": "sysA",
     "model_b": "sysB", "label": "a", "verdict_ab": "a", "verdict_ba": "a", "judge": "gpt-4"},
    {"id": "p2", "prompt": "Same prompt?", "answer_a": "Another", "answer_b": "Better", "model_a": "sysA",
     "model_b": "sysB", "label": "b", "verdict_ab": "a", "verdict_ba": "b", "judge": "gpt-4"},
    {"id": "p3", "prompt": "Q3", "answer_a": "x", "answer_b": "y", "model_a": "sysB", "model_b": "sysA",
     "label": "tie", "verdict_ab": "tie", "verdict_ba": "tie", "judge": "gpt-4"},
]


def test_replay_writes_a_report_from_recorded_pairwise_verdicts_without_a_model(tmp_path, capsys):
    (tmp_path / "judged.jsonl").write_text("".join(json.dumps(r) + "\n" for r in PAIRS))
    # Three pairs: too few for an interval, so the gate is inconclusive (exit 11), never passed on its value.
    gate = "arena.judge_validity[mine].recorded[recorded:gpt-4].swap_consistency>=0.5"
    code = main(["replay", "arena", str(tmp_path / "judged.jsonl"), "--option", "pairs_name=mine",
                 "--name", "again", "--out", str(tmp_path / "out"), "--gate", gate])
    assert code == 11
    summary = json.loads((tmp_path / "out" / "again" / "summary.json").read_text())
    judge = summary["arena"]["judge_validity"]["mine"]["recorded"]["recorded:gpt-4"]
    # p2's orders disagree: a tie, wrong against its label in one order, inconsistent under swap.
    assert judge["correct_both_orders"]["value"] == pytest.approx(2 / 3)
    assert judge["swap_consistency"]["value"] == pytest.approx(2 / 3)
    assert judge["agreement"]["with_ties"]["value"] == pytest.approx(2 / 3)
    assert set(summary["arena"]["leaderboards"]) == {"mine/human", "mine/recorded:gpt-4"}
    assert summary["run"]["replayed_from"].endswith("judged.jsonl") and not summary["usage"]["providers"]
    assert "Judges against human labels (`mine`)" in (tmp_path / "out" / "again" / "summary.md").read_text()
    assert "reports:" in capsys.readouterr().out


def test_replay_reads_seed_002_outcomes_with_the_seeds_tie_all_bad(tmp_path):
    (tmp_path / "battle_outcomes.csv").write_text(
        "model_a,model_b,winner\nx,y,model_a\ny,x,tie(all bad)\nx,y,tie\nx,z,model_b\n")
    assert main(["replay", "arena", str(tmp_path / "battle_outcomes.csv"), "--name", "seed",
                 "--out", str(tmp_path / "out")]) == 0
    summary = json.loads((tmp_path / "out" / "seed" / "summary.json").read_text())
    board = summary["arena"]["leaderboards"]["battle_outcomes/recorded:battle_outcomes"]
    assert board["battles"] == 4 and board["tie_rate"]["value"] == 0.5


@pytest.mark.parametrize(("argv", "message"), [
    (["replay", "arenna", "x.jsonl"], "unknown family 'arenna' (did you mean 'arena'?); known families: "),
    (["replay", "arena", "missing.jsonl"], "missing.jsonl: no such file"),
    (["replay", "arena", "PAIRS", "--option", "pairs_nam=x"],
     "llmjury replay: --option pairs_nam=x: unknown option arena.pairs_nam (did you mean 'pairs_name'?); arena knows "),
    (["replay", "arena", "PAIRS", "--option", "mrbench_pairs=0"],
     "llmjury replay: --option mrbench_pairs=0: Input should be greater than or equal to 1"),
])
def test_replay_usage_errors_exit_4_naming_the_cause(tmp_path, capsys, argv, message):
    (tmp_path / "pairs.jsonl").write_text(json.dumps(PAIRS[0]) + "\n")
    argv = [str(tmp_path / "pairs.jsonl") if a == "PAIRS" else str(tmp_path / a) if a.endswith(".jsonl") else a
            for a in argv]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 4
    assert message in capsys.readouterr().err


def test_replay_of_a_family_without_recorded_files_is_a_usage_error(tmp_path, capsys, monkeypatch):
    from llmjury import cli
    from llmjury.family import Family, FamilyOptions, Result, Section

    class Plain(Family):
        name, options, results, section = "plain", FamilyOptions, {"x": Result}, Section

        def offline(self):
            return {}

        def aggregate(self, verdicts):
            return Section()

    monkeypatch.setattr(cli, "discover", lambda: {"plain": Plain()})
    (tmp_path / "x.jsonl").write_text("{}\n")
    assert main(["replay", "plain", str(tmp_path / "x.jsonl"), "--out", str(tmp_path / "out")]) == 4
    assert "family 'plain' replays no recorded verdict files" in capsys.readouterr().err


def test_replay_of_a_runs_seed_battle_records_reproduces_its_leaderboard(tmp_path):
    from llmjury.families.arena import FAMILY
    from llmjury.families.arena.files import files
    from llmjury.families.arena.report import aggregate

    def battle(i, a, b, winner):
        return FAMILY.typed({"case_id": f"q{i:02d}-{a}-{b}", "family": "arena", "kind": "battle",
                             "judge": {"provider": "openai:gpt-4o"}, "result": {"winner": winner},
                             "attributes": {"dataset": "toy", "question": f"Q{i}; why, really?", "model_a": a,
                                            "model_b": b, "experiment": "exp1", "answer_a": "line one,\nline; two",
                                            "answer_b": "\"quoted\", answer"}})

    outcomes = ["model_a", "model_b", "tie", "tie (bothbad)", "model_a"]
    verdicts = [battle(i, a, b, outcomes[(i + k) % 5]) for i in range(12)
                for k, (a, b) in enumerate([("x", "y"), ("x", "z"), ("y", "z")])]
    section = aggregate(verdicts)
    (tmp_path / "battle_records.csv").write_text(files(section, verdicts)["arena/results/exp1/battle_records.csv"])
    assert main(["replay", "arena", str(tmp_path / "battle_records.csv"), "--name", "again",
                 "--out", str(tmp_path / "out")]) == 0
    summary = json.loads((tmp_path / "out" / "again" / "summary.json").read_text())
    board = summary["arena"]["leaderboards"]["battle_records/recorded:gpt-4o"]
    assert board["battles"] == 36
    assert {m: round(r["value"], 6) for m, r in board["rating"].items()} == \
        {m: round(r.value, 6) for m, r in section.rating.items()}


def test_replay_shows_what_loading_left_out(tmp_path, capsys):
    rows = [*PAIRS, {**PAIRS[0], "id": "empty", "answer_b": ""}]
    (tmp_path / "judged.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["replay", "arena", str(tmp_path / "judged.jsonl"), "--option", "pairs_name=mine",
                 "--name", "again", "--out", str(tmp_path / "out")]) == 0
    summary = json.loads((tmp_path / "out" / "again" / "summary.json").read_text())
    (loaded,) = summary["arena"]["loading"]
    assert loaded["dataset"] == "mine" and sum(loaded["dropped"].values()) == 1
    assert "left out 1" in capsys.readouterr().out


def test_report_of_a_run_folder_keeps_what_loading_left_out(tmp_path, capsys):
    rows = [*PAIRS, {**PAIRS[0], "id": "empty", "answer_b": ""}]
    (tmp_path / "judged.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["replay", "arena", str(tmp_path / "judged.jsonl"), "--option", "pairs_name=mine",
                 "--name", "first", "--out", str(tmp_path / "out")]) == 0
    run = tmp_path / "out" / "first"
    original = json.loads((run / "summary.json").read_text())["loading"]
    capsys.readouterr()
    # A run folder and a verdicts file in one: both read the summary beside them; one load report.
    assert main(["report", str(run), str(run / VERDICTS), "--out", str(tmp_path / "out"),
                 "--run-id", "again"]) == 0
    summary = json.loads((tmp_path / "out" / "again" / "summary.json").read_text())
    assert summary["loading"] == original and len(original) == 1
    assert summary["arena"]["loading"] == original
    assert "data: arena dataset mine" in (tmp_path / "out" / "again" / "summary.md").read_text()
    assert "left out 1" in capsys.readouterr().out


def test_report_of_verdicts_without_a_summary_has_no_load_counts(tmp_path):
    (tmp_path / "v.jsonl").write_text(json.dumps({"case_id": "c", "family": "toy", "judge": {"provider": "m"},
                                                  "result": {}, "valid": True, "raw": [], "attributes": {}}) + "\n")
    assert main(["report", str(tmp_path / "v.jsonl"), "--out", str(tmp_path / "out"), "--run-id", "r"]) == 0
    assert json.loads((tmp_path / "out" / "r" / "summary.json").read_text())["loading"] == []


def test_report_refuses_a_summary_that_is_not_one(tmp_path, capsys):
    (tmp_path / "verdicts.jsonl").write_text("")
    (tmp_path / "summary.json").write_text('{"loading": [{"family": "arena"}]}')
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "out")]) == 4
    err = capsys.readouterr().err
    assert err.startswith("llmjury report: ") and "summary.json: not a run summary (run: Field required)" in err


@pytest.mark.parametrize(("argv", "usage", "message"), [
    (["report", "--ou", "elsewhere", "run"], "usage: llmjury report",
     "llmjury report: error: unrecognized argument '--ou' (did you mean '--out'?)"),
    (["merge", "--gat=x>=1", "a"], "usage: llmjury merge",
     "llmjury merge: error: unrecognized argument '--gat=x>=1' (did you mean '--gate'?)"),
    (["batch", "status", "--stor", "postgres"], "usage: llmjury batch status",
     "llmjury batch status: error: unrecognized argument '--stor' (did you mean '--store'?)"),
    (["export", "--too", "x.jsonl"], "usage: llmjury export",  # before `--to` is missing
     "llmjury export: error: unrecognized argument '--too' (did you mean '--to'?)"),
    (["report", "--ou", "x", "--gat", "y", "run"], "usage: llmjury report",
     "llmjury report: error: unrecognized arguments '--ou' (did you mean '--out'?), '--gat' (did you mean '--gate'?)"),
    (["compare", "--allow", "a", "b"], "usage: llmjury compare",  # the option it begins, not the nearest
     "llmjury compare: error: unrecognized argument '--allow' (did you mean '--allow-judge-change'?)"),
    (["--out", "x", "report", "run"], "usage: llmjury",
     "llmjury: error: unrecognized argument '--out' (a command's options go after it: llmjury COMMAND --OPTION)"),
], ids=["prefix-of-an-option", "with-a-value", "nested-command", "beside-a-missing-required-one", "two-of-them",
        "a-prefix-of-a-long-one", "before-the-command"])
def test_a_mistyped_option_is_refused_by_its_command_naming_the_option_meant(capsys, argv, usage, message):
    """No option is taken by its prefix (`--ou` ran as `--out`), and the command that was given it
    refuses it under its own usage (it was the top-level usage, with no hint)."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    err = capsys.readouterr().err
    assert stopped.value.code == 2
    assert err.startswith(usage) and err.rstrip().endswith(message)


@pytest.mark.parametrize(("argv", "message"), [
    (["reprot", "run"], "llmjury: error: argument command: invalid choice: 'reprot' (did you mean 'report'?); "
                        "choose from 'report', "),
    (["batch", "stat"], "llmjury batch: error: argument action: invalid choice: 'stat' (did you mean 'status'?); "
                        "choose from 'export', 'import', 'status'"),
    (["report", "--gate-uncertain", "pas", "run"], "llmjury report: error: argument --gate-uncertain: invalid choice: "
                                                   "'pas' (did you mean 'pass'?); choose from 'inconclusive', 'pass'"),
], ids=["command", "nested-command", "option-value"])
def test_a_mistyped_command_or_choice_is_named_with_the_one_meant(capsys, argv, message):
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize(("command", "gate", "message"), [
    ("report", "custom.score.helpful.meen>=3", "custom.score.helpful has no 'meen' (did you mean 'mean'?)"),
    ("merge", "socratic.win_rat>=0.5", "socratic has no metric 'win_rat' (did you mean 'win_rate'?)"),
    ("replay", "arena.swap_consistensy>=0.5", "no metric 'swap_consistensy' (did you mean 'swap_consistency'?)"),
    ("report", "socratic.win_rate.delta>=0", "a difference needs a baseline run: compare two runs with llmjury"),
])
def test_saved_verdict_commands_refuse_a_gate_on_an_unknown_metric_before_reading_a_verdict(
        tmp_path, capsys, command, gate, message):
    """Before: `llmjury report` read every verdict, wrote the report and failed the gate as "no metric"
    (exit 10), where `llmjury merge` refused it at start-up; and every command's delta hint named the
    pytest option."""
    (tmp_path / "pairs.jsonl").write_text(json.dumps(PAIRS[0]) + "\n")
    source = {"report": [str(tmp_path / "pairs.jsonl")], "merge": [str(tmp_path)],
              "replay": ["arena", str(tmp_path / "pairs.jsonl")]}[command]
    assert main([command, *source, "--out", str(tmp_path / "out"), "--gate", gate]) == 4
    err = capsys.readouterr().err
    assert err.startswith(f"llmjury {command}: gate {gate!r}: ") and message in err
    assert "--llm-baseline" not in err and not (tmp_path / "out").exists()


def test_a_saved_runs_gate_on_the_family_your_cases_name_points_at_custom():
    """Before, `llmjury report RUN --gate recipes.win_rate>=0.5` only said to register a family named
    recipes, where the user's own tests' verdicts are under custom (a user trial)."""
    from llmjury.cli import check_known
    from llmjury.errors import ConfigError
    from llmjury.results.gates import Gate
    from llmjury.session.projectini import ProjectFamilies

    with pytest.raises(ConfigError, match=r"unknown family 'recipes'.* your own cases name reads custom, "):
        check_known({"custom"}, [Gate.parse("recipes.win_rate>=0.5")], ProjectFamilies({}, None), "report",
                    undefined=["custom"])
