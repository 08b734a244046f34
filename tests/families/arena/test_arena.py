from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from pydantic import ValidationError

from llmjury.errors import ConfigError, DatasetError, JudgeParseError
from llmjury.families.arena import FAMILY, layout
from llmjury.families.arena.agreement import agreement
from llmjury.families.arena.arrangement import arrange
from llmjury.families.arena.files import files
from llmjury.families.arena.importers import by_judge, chatbot_arena, mtbench_judgements
from llmjury.families.arena.judge import parse_pair, parse_scores, score_text, winner_from_scores
from llmjury.families.arena.options import ArenaOptions
from llmjury.families.arena.pipeline import battle
from llmjury.families.arena.report import aggregate
from llmjury.families.arena.results import BattleResult
from llmjury.running.settings import Settings


def test_seed_score_lines_and_winner_rules():
    text = "- Score of Model 1: 0\n- Score of Model 2: 1\n- Brief Explanation: Model 1 repeats itself."
    assert parse_scores(text) == (0, 1)
    assert [winner_from_scores(*s) for s in [(1, 0), (0, 1), (1, 1), (0, 0)]] == \
        ["model_a", "model_b", "tie", "tie (bothbad)"]
    assert score_text("model_b") == "{'model_a': '0', 'model_b': '1'}"
    with pytest.raises(JudgeParseError, match="arena-score/5"):
        parse_scores("Model 1 is better.")


def test_mtbench_verdict_ends_the_answer_and_stands_alone():
    assert parse_pair("Assistant B is clearer. Final verdict: [[B]]") == "model_b"
    assert parse_pair("[[C]]") == "tie"
    # a self-correction decides; a label alone corrects nothing (a candidate can plant one)
    assert parse_pair("I initially considered [[A]], but on reflection Assistant B is better: [[B]]") == "model_b"
    for ambiguous in ("I considered [[A]] but final: [[B]]", "[[B]]\nAssistant A wrote [[A]] at its end."):
        with pytest.raises(JudgeParseError, match="mtbench-pair/5"):
            parse_pair(ambiguous)


def write_dataset(tmp_path: Path, questions, answers: dict[str, dict[str, str]]) -> ArenaOptions:
    (tmp_path / "data" / "toy").mkdir(parents=True)
    pd.DataFrame({"question": questions}).to_csv(tmp_path / "data" / "toy" / "questions.csv", index=False)
    rows = [{"question": q, **answers.get(q, {})} for q in dict.fromkeys(questions)]
    pd.DataFrame(rows).to_csv(tmp_path / "q_and_as.csv", index=False)
    return ArenaOptions(data=str(tmp_path / "data"), dataset="toy", answers=str(tmp_path / "q_and_as.csv"),
                        models="m1,m2,m3")


NO_ROOT = Settings()


def test_arrangement_pairs_only_models_that_answered_in_question_then_combination_order(tmp_path):
    options = write_dataset(tmp_path, ["q1", "q2", "q1"], {"q1": {"m1": "x", "m2": "y", "m3": "z"},
                                                          "q2": {"m1": "x", "m3": "z"}})
    cases, report = arrange(options, NO_ROOT)
    assert [(c.question, c.model_a, c.model_b) for c in cases] == [
        ("q1", "m1", "m2"), ("q1", "m1", "m3"), ("q1", "m2", "m3"), ("q2", "m1", "m3")]
    # m2 did not answer q2: its two battles there are counted, as is the repeated q1 row.
    assert report.kept == 4 and report.dropped == {
        "battle left out: a model has no (or an empty) recorded answer": 2, "repeated question": 1}


def test_more_rounds_draw_new_battles_and_keep_the_earlier_ones(tmp_path):
    options = write_dataset(tmp_path, ["q1", "q2", "q3"], {q: {"m1": "x", "m2": "y", "m3": "z"}
                                                           for q in ("q1", "q2", "q3")})
    grid = arrange(options, NO_ROOT)[0]
    base = options.model_dump() | {"battles_per_round": 3}
    one, _ = arrange(ArenaOptions(**base), NO_ROOT)
    two, report = arrange(ArenaOptions(**base | {"rounds": 2}), NO_ROOT)
    assert [c.id for c in two[:3]] == [c.id for c in one] and [c.round for c in two] == [0, 0, 0, 1, 1, 1]
    assert len({(c.question, c.model_a, c.model_b) for c in two}) == 6  # new pairings and questions, no repeat
    assert {c.id for c in two} <= {c.id for c in grid}
    assert report.dropped["battle not drawn in any round (rounds x battles_per_round)"] == 3
    with pytest.raises(ValidationError, match=r"rounds need arena\.battles_per_round=N"):
        ArenaOptions(**options.model_dump() | {"rounds": 2})


def test_a_given_arrangement_file_is_reproduced(tmp_path):
    options = write_dataset(tmp_path, ["q1"], {"q1": {"m1": "x", "m2": "y"}})
    pd.DataFrame([{"question": "q1", "model_a": "m2", "model_b": "m1", "winner": "model_a"}]).to_csv(
        tmp_path / "arr.csv", index=False)
    cases, _ = arrange(options.model_copy(update={"arrangement": str(tmp_path / "arr.csv")}), NO_ROOT)
    assert [(c.model_a, c.model_b) for c in cases] == [("m2", "m1")]


def test_missing_column_names_the_file(tmp_path):
    (tmp_path / "q.csv").write_text("prompt\nhello\n")
    with pytest.raises(DatasetError, match=r"q\.csv: missing column\(s\) \['question'\]"):
        layout.questions(tmp_path / "q.csv")


def test_battle_judged_in_both_orders_ties_when_orders_disagree(tmp_path, make_engine, openai_server):
    options = write_dataset(tmp_path, ["Which is bigger, 2 or 3?"],
                            {"Which is bigger, 2 or 3?": {"m1": "THREE-IS-BIGGER", "m2": "TWO-IS-BIGGER"}})
    # Always prefers the first answer shown: the two orders disagree, so the battle is a tie.
    def first_shown(body, i):
        return body["messages"][0]["content"].split("[Model 1's Answer]\n")[1][:5]

    openai_server.reply = lambda body, i: ("- Score of Model 1: 1\n- Score of Model 2: 0\n"
                                           f"- Brief Explanation: first shown {first_shown(body, i)}")
    from llmjury.judgement.jury import Jury
    from llmjury.pricing import PriceTable
    from llmjury.prompts import PromptLibrary

    opts = {f"arena.{k}": str(v) for k, v in options.model_dump().items() if v is not None}
    engine = make_engine(roles={"judge": f"openai:judge;base_url={openai_server.base_url}"}, options=opts)
    jury = Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())
    case = arrange(options, engine.settings)[0][0]
    verdict = engine.run(battle(case, jury)).verdict
    assert isinstance(verdict.result, BattleResult) and verdict.kind == "battle"
    assert verdict.result.winner == "tie" and verdict.result.consistent is False
    assert [r.winner for r in verdict.result.runs] == ["model_a", "model_b"]
    assert (verdict.result.by_order("ab"), verdict.result.by_order("ba")) == ("model_a", "model_b")
    shown_first = sorted(first_shown(b, 0) for b in openai_server.requests)
    assert shown_first == ["THREE", "TWO-I"]
    typed = FAMILY.typed(verdict.record())
    written = files(aggregate([typed]), [typed])
    table = pd.read_csv(pd.io.common.StringIO(written["arena/results/default/battle_records.csv"]))
    assert list(table.columns) == layout.RECORD_COLUMNS
    assert table.loc[0, "gpt_4_score"] == "{'model_a': '1', 'model_b': '1'}"
    # Both orders' judge responses are kept, each beside the winner it gave.
    assert (table.loc[0, "winner_ab"], table.loc[0, "winner_ba"]) == ("model_a", "model_b")
    assert table.loc[0, "judge_response_ab"].endswith("first shown THREE")
    assert table.loc[0, "judge_response_ba"].endswith("first shown TWO-I")
    assert "arena/cache/toy/q_and_as.csv" in written


def test_a_dataset_of_questions_alone_is_answered_by_the_models_it_names(tmp_path):
    (tmp_path / "data" / "mine").mkdir(parents=True)
    (tmp_path / "data" / "mine" / "questions.csv").write_text("question\nq1\nq2\n")
    root = Settings(data_root=tmp_path)  # a data root without any cache of answers
    options = ArenaOptions(data=str(tmp_path / "data"), dataset="mine",
                           models="small=openai:smol;base_url=http://127.0.0.1:9,openai:big-model,offline:")
    assert options.model_list() == ["small", "big-model", "offline:"]
    cases, report = arrange(options, root)
    assert [(c.model_a, c.model_b) for c in cases[:3]] == [("small", "big-model"), ("small", "offline:"),
                                                           ("big-model", "offline:")]
    assert report.kept == 6 and not report.dropped
    recorded = ArenaOptions(data=str(tmp_path / "data"), dataset="mine", models="small=openai:smol,m-recorded")
    with pytest.raises(ConfigError, match=r"arena.models: m-recorded need\(s\) recorded answers.*no q_and_as.csv "
                                          r"for dataset 'mine'.*NAME=openai:MODEL"):
        arrange(recorded, root)


def test_two_contestants_under_one_name_stop_at_start_up():
    with pytest.raises(ValidationError, match=r"'openai:gpt-4o' and 'gemini:gpt-4o' are both named 'gpt-4o'"):
        ArenaOptions(models="openai:gpt-4o,gemini:gpt-4o")


def test_chatbot_arena_logs_and_mtbench_judgements_import(tmp_path):
    (tmp_path / "arena.json").write_text(json.dumps([
        {"model_a": "x", "model_b": "y", "winner": "model_a", "question_id": "q1"},
        {"model_a": "y", "model_b": "x", "winner": "tie (bothbad)", "question_id": "q2"}]))
    rows = chatbot_arena(tmp_path / "arena.json")
    assert [r["winner"] for r in rows] == ["model_a", "tie (bothbad)"]
    (tmp_path / "bad.json").write_text(json.dumps([{"model_a": "x", "model_b": "y", "winner": "draw"}]))
    with pytest.raises(DatasetError, match=r"bad\.json \[item 0\]: winner 'draw'"):
        chatbot_arena(tmp_path / "bad.json")

    human = [{"question_id": 81, "model_a": "x", "model_b": "y", "winner": "model_a", "judge": "expert_1", "turn": 1},
             {"question_id": 82, "model_a": "y", "model_b": "x", "winner": "model_b", "judge": "expert_1", "turn": 1},
             {"question_id": 83, "model_a": "x", "model_b": "y", "winner": "tie", "judge": "expert_1", "turn": 1}]
    gpt4 = [{"question_id": 81, "model_1": "y", "model_2": "x", "g1_winner": "model_2", "g2_winner": "model_2",
             "judge": ["gpt-4", "pair-v2"], "turn": 1},
            {"question_id": 82, "model_1": "x", "model_2": "y", "g1_winner": "model_1", "g2_winner": "model_2",
             "judge": ["gpt-4", "pair-v2"], "turn": 1},
            {"question_id": 83, "model_1": "x", "model_2": "y", "g1_winner": "model_1", "g2_winner": "model_1",
             "judge": ["gpt-4", "pair-v2"], "turn": 1}]
    (tmp_path / "human.jsonl").write_text("\n".join(json.dumps(r) for r in human))
    (tmp_path / "gpt4.jsonl").write_text("\n".join(json.dumps(r) for r in gpt4))
    rows = mtbench_judgements(tmp_path / "human.jsonl") + mtbench_judgements(tmp_path / "gpt4.jsonl")
    judges = by_judge(rows)
    result = agreement(judges["gpt-4-pair-v2"], judges["expert_1"])
    # q81: both say x; q82: humans say x, GPT-4 inconsistent -> tie; q83: humans tie, GPT-4 says x.
    assert result.with_ties.value == pytest.approx(1 / 3)
    assert (result.without_ties.value, result.without_ties.n) == (1.0, 1)


def test_seed_files_hold_one_datasets_battles_judged_in_this_run():
    def verdict(case_id, dataset, kind="battle", provider="openai:gpt-4o", a="m1", b="m2", **result):
        return FAMILY.typed({"case_id": case_id, "family": "arena", "kind": kind, "judge": {"provider": provider},
                             "result": {"winner": "model_a", **result}, "attributes": {
                                 "dataset": dataset, "question": f"{dataset} question", "question_index": 0,
                                 "model_a": a, "model_b": b, "experiment": "default", "answer_a": "x",
                                 "answer_b": "yy"}})

    verdicts = [verdict(f"mt-{i}", "mtbench") for i in range(3)] + [verdict("mine-1", "mine", a="s1", b="s2"),
                                                                    verdict("mine-1", "mine", "human_label", "human:x"),
                                                                    verdict("prd-1", "prd", "prd_replay",
                                                                            "recorded:prd-gpt4", "claude-v1", "claude",
                                                                            parsed_matches_recorded=True)]
    written = files(aggregate(verdicts), verdicts)
    models = pd.read_csv(pd.io.common.StringIO(written["arena/results/default/models.csv"]))["model"].tolist()
    assert models == ["m1", "m2"]  # the PRD reviewer's claude-v1 / claude battles are not this run's
    assert pd.read_csv(pd.io.common.StringIO(written["arena/results/default-mine/models.csv"]))["model"].tolist() \
        == ["s1", "s2"]
    assert {name.split("/")[2] for name in written if name.startswith("arena/cache/")} == {"mtbench", "mine"}
    assert len(pd.read_csv(pd.io.common.StringIO(written["arena/cache/mtbench/battle_records.csv"]))) == 3


def test_leaderboard_files_of_a_recorded_judge_or_a_jury_have_no_colon_in_their_name():
    def recorded(case_id, provider, a, b, winner):
        return FAMILY.typed({"case_id": case_id, "family": "arena", "kind": "recorded", "judge": {"provider": provider},
                             "result": {"winner": winner}, "attributes": {
                                 "dataset": "prd", "question": case_id, "question_index": 0, "model_a": a,
                                 "model_b": b}})

    battles = [("m1", "m2", "model_a"), ("m2", "m3", "model_b"), ("m1", "m3", "tie")]
    verdicts = [recorded(f"q{i}-{who}", provider, *battle) for who, provider in
                (("gpt4", "recorded:prd-gpt4"), ("jury", "jury(openai:gpt-4o, gemini:flash)"))
                for i, battle in enumerate(battles)]
    leaderboards = sorted(name for name in files(aggregate(verdicts), verdicts) if "leaderboard_" in name)
    assert leaderboards == ["arena/leaderboard_prd_jury_openai_gpt-4o_gemini_flash.csv",
                            "arena/leaderboard_prd_recorded_prd-gpt4.csv"]


def test_a_jury_judges_a_battle_and_records_each_jurors_vote(tmp_path, make_engine, openai_server):
    options = write_dataset(tmp_path, ["Which is bigger, 2 or 3?"],
                            {"Which is bigger, 2 or 3?": {"m1": "THREE-IS-BIGGER", "m2": "TWO-IS-BIGGER"}})
    # Every juror prefers the right answer in both orders: a unanimous jury for m1.
    openai_server.reply = lambda body, i: ("- Score of Model 1: 1\n- Score of Model 2: 0" if "[Model 1's Answer]\nTHREE"
                                           in body["messages"][0]["content"] else
                                           "- Score of Model 1: 0\n- Score of Model 2: 1")
    from llmjury.judgement.jury import Jury
    from llmjury.pricing import PriceTable
    from llmjury.prompts import PromptLibrary

    opts = {f"arena.{k}": str(v) for k, v in options.model_dump().items() if v is not None}
    engine = make_engine(roles={"judge": f"openai:judge;base_url={openai_server.base_url}*3"}, options=opts)
    jury = Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())
    case = arrange(options, engine.settings)[0][0]
    verdict = engine.run(battle(case, jury)).verdict
    assert verdict.valid and isinstance(verdict.result, BattleResult)
    winner = "model_a" if case.model_a == "m1" else "model_b"
    assert (verdict.result.winner, verdict.result.confidence, verdict.result.consistent) == (winner, "unanimous", True)
    assert [(v.judge, v.winner, v.counted_runs) for v in verdict.result.jurors] == [
        (f"openai:judge#{n}", winner, 2) for n in (1, 2, 3)]
    assert len(verdict.result.runs) == 6 and verdict.judge.provider.startswith("jury(")
    typed = FAMILY.typed(verdict.record())
    assert typed.result == verdict.result
    jury = aggregate([typed]).jury
    assert sorted(jury) == [f"openai:judge#{n}" for n in (1, 2, 3)]
    assert (jury["openai:judge#1"].agreement_with_jury.value, jury["openai:judge#1"].agreement_with_jury.n) == (1.0, 1)


def test_the_offline_judge_answers_mtbenchs_pair_prompt(tmp_path, make_engine):
    # Its answer is keyed by the user prompt's template (the request's task), not the system prompt's.
    options = write_dataset(tmp_path, ["Which is bigger, 2 or 3?"],
                            {"Which is bigger, 2 or 3?": {"m1": "3 is bigger than 2.", "m2": "No idea."}})
    from llmjury.judgement.jury import Jury
    from llmjury.pricing import PriceTable
    from llmjury.prompts import PromptLibrary

    opts = {f"arena.{k}": str(v) for k, v in options.model_dump().items() if v is not None}
    engine = make_engine(options=opts | {"arena.judge_prompt": "mtbench-pair-v2"})
    jury = Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())
    case = arrange(options, engine.settings)[0][0]
    verdict = engine.run(battle(case, jury)).verdict
    assert verdict.valid, verdict.error
    assert verdict.judge.parser == "mtbench-pair/5" and all("[[" in text for text in verdict.raw)
