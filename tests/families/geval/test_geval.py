from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from llmjury.chat import Sample, TokenLogprob, TopLogprob
from llmjury.datasets.dialogue_items import dstc9, topical_chat
from llmjury.errors import DatasetError, JudgeParseError, NoLogprobsError
from llmjury.families.geval.cases import GEvalCase, geval_cases
from llmjury.families.geval.meta import evaluate, per_context
from llmjury.families.geval.options import GEvalOptions
from llmjury.families.geval.pipeline import judge_item
from llmjury.judgement.geval_scoring import frequency_weighted, logprob_weighted, parse_score
from llmjury.judgement.jury import Jury
from llmjury.pricing import PriceTable
from llmjury.prompts import PromptLibrary
from llmjury.running.settings import Settings
from llmjury.testing import FakeChoice, ServerBehaviour

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
TOPICAL_CHAT = FIXTURES / "topical_chat_usr" / "topical_chat.json"
SHIPPED = Settings(data_root=FIXTURES)

SEED_RESPONSE_LINES = [
    "Your task is to rate the response on one metric. Provide only the final score as an integer—do not include "
    "summaries or conclusions.",
    "- Overall Quality (1-5): The response should be coherent, engaging, and contextually relevant.",
    "- Credibility and Informativeness: Response should provide meaningful and well-formed contributions.",
    "- Overall Quality (1-5):",
]


def test_shipped_samples_load_with_every_human_dimension():
    items = topical_chat(TOPICAL_CHAT)
    assert len(items) == 360 and len({i.context_id for i in items}) == 60
    assert set(items[0].human) == {"understandability", "naturalness", "coherence", "engagingness",
                                   "groundedness", "overall"}
    sample = dstc9(FIXTURES / "dstc9" / "dstc9_sample.json")
    assert len(sample) == 220 and len({i.system_id for i in sample}) == 11
    assert sample[0].turns[0][0] == "user" and "flowscore" in sample[0].extra


def test_restructured_forms_load(tmp_path):
    (tmp_path / "d.json").write_text(json.dumps([{"dialog_id": "7", "turns": [
        {"speaker": "user", "utterance": "hi"}, {"speaker": "system", "utterance": "hello!"}],
        "score": 4.25, "system_id": "bot3"}]))
    (item,) = dstc9(tmp_path / "d.json")
    assert (item.id, item.response, item.turns) == ("dstc9-7", "hello!", [("user", "hi")])
    assert item.human == {"overall": 4.25}
    (tmp_path / "t.json").write_text(json.dumps([{"dialogue": "1", "turns": [{"speaker": "A", "utterance": "x"}],
                                                  "score": 3.0, "system_id": "s", "system_output": "y",
                                                  "context": "fact"}]))
    (tc,) = topical_chat(tmp_path / "t.json")
    assert (tc.response, tc.fact, tc.human) == ("y", "fact", {"overall": 3.0})


def test_malformed_item_names_file_and_position(tmp_path):
    (tmp_path / "bad.json").write_text(json.dumps({"contexts": [["a"]], "responses": ["b"], "references": ["c"],
                                                   "scores": ["n/a"]}))
    with pytest.raises(DatasetError, match=r"bad\.json \[item 0\]: score 'n/a' is not a number"):
        dstc9(tmp_path / "bad.json")


def test_score_parsing_and_seed_frequency_formula():
    assert parse_score("Overall Quality: 4", range(1, 6)) == 4
    assert parse_score("- Naturalness (1-3): 2", range(1, 4)) == 2  # the scale's own "1-3" is not an answer
    assert parse_score("Score: 4/5", range(1, 6)) == 4
    # a score stated in prose competes only in the judge's final words (the decision's paragraph and the one before)
    assert parse_score("Rating 2 at first glance.\n\nThen I read it again.\n\nOverall Quality: 5", range(1, 6)) == 5
    for unread in ("excellent", "Rating 2.\nOverall Quality: 5"):
        with pytest.raises(JudgeParseError):
            parse_score(unread, range(1, 6))
    score, distribution = frequency_weighted([3, 3, 4, 5], range(1, 6))
    assert score == pytest.approx(3.75) and distribution[3] == 0.5


def test_a_fraction_on_the_scale_is_read_and_counts_toward_its_two_neighbours():
    """Chiang & Lee's gpt-3.5 answered "2.5" on 1-3: the sampled score is the mean of what the
    judge said, and the distribution stays on the scale's whole numbers."""
    assert parse_score("2.5", range(1, 4)) == 2.5
    assert parse_score("Coerenza: 3,5", range(1, 6)) == 3.5
    for off in ("3.5", "0.5"):
        with pytest.raises(JudgeParseError) as raised:
            parse_score(off, range(1, 4) if off == "3.5" else range(1, 6))
        assert raised.value.kind == "out_of_scale"
    score, distribution = frequency_weighted([2.5, 3, 1.25], range(1, 4))
    assert score == pytest.approx((2.5 + 3 + 1.25) / 3)
    assert distribution == pytest.approx({1: 0.75 / 3, 2: 0.75 / 3, 3: 1.5 / 3})


def test_a_fraction_has_no_score_token_to_weigh_and_says_so(make_engine, openai_server, frozen_dir):
    def reply(body, index):
        if body["messages"][-1]["content"].startswith("Evaluate the quality"):
            return "Read. Score."
        return FakeChoice("2.5", logprobs=[("2", math.log(0.9), [("2", math.log(0.9))]),
                                           (".5", math.log(0.9), [(".5", math.log(0.9))])])

    openai_server.reply = reply
    jury = jury_for(make_engine, openai_server, frozen_dir, scoring="logprobs")
    verdict = jury.engine.run(judge_item(cases(count=1)[0], jury)).verdict
    assert verdict.valid is False and "is a fraction, and logprobs weigh whole-number score tokens" in verdict.error


def test_logprob_weighting_renormalises_over_the_scale():
    top = [TopLogprob(token="4", logprob=math.log(0.6)), TopLogprob(token=" 3", logprob=math.log(0.2)),
           TopLogprob(token="four", logprob=math.log(0.2))]
    sample = Sample(text="4", logprobs=[TokenLogprob(token="4", logprob=math.log(0.6), top=top)])
    score, distribution = logprob_weighted(sample, range(1, 6))
    assert distribution[4] == pytest.approx(0.75) and distribution[1] == 0
    assert score == pytest.approx((4 * 0.6 + 3 * 0.2) / 0.8)
    assert logprob_weighted(Sample(text="4"), range(1, 6)) is None


@pytest.fixture(autouse=True)
def frozen_dir(tmp_path):
    """Frozen steps go to a temporary folder, never into the repository's fixtures."""
    folder = tmp_path / "frozen"
    return folder


def jury_for(make_engine, server, frozen: Path, cache: Path | None = None, **options):
    options.setdefault("frozen_steps", frozen)
    engine = make_engine(roles={"judge": f"openai:judge;base_url={server.base_url}"}, cache=cache,
                         options={f"geval.{k}": str(v) for k, v in options.items()})
    return Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())


def reply_by_prompt(body, index):
    text = body["messages"][-1]["content"]
    if text.startswith("Evaluate the quality"):
        return "Read the dialogue. Check the criterion. Score it."
    return FakeChoice("4", logprobs=[("4", math.log(0.7), [("4", math.log(0.7)), ("5", math.log(0.3))])])


def cases(criterion="overall", task="response", count=3):
    return [GEvalCase(id=f"{item.id}-{task}-{criterion}", item=item, task=task, criterion=criterion)
            for item in topical_chat(TOPICAL_CHAT)[:count]]


def test_logprobs_give_a_weighted_score_and_steps_are_asked_once(make_engine, openai_server, frozen_dir):
    openai_server.reply = reply_by_prompt
    jury = jury_for(make_engine, openai_server, frozen_dir)
    verdicts = [jury.engine.run(judge_item(case, jury)).verdict for case in cases()]
    assert {v.result.method for v in verdicts} == {"logprobs"} and {v.kind for v in verdicts} == {"judge"}
    assert verdicts[0].result.score == pytest.approx(4.3)
    cot_calls = [r for r in openai_server.requests if r["messages"][-1]["content"].startswith("Evaluate the quality")]
    assert len(cot_calls) == 1
    judged = openai_server.requests[-1]
    assert judged["logprobs"] is True and "Read the dialogue. Check the criterion." in judged["messages"][-1]["content"]
    for line in SEED_RESPONSE_LINES:
        assert line in judged["messages"][-1]["content"]


def test_without_logprobs_it_samples_n_and_weights_by_frequency(make_engine, openai_server, frozen_dir):
    openai_server.behaviour = ServerBehaviour(logprobs=False)
    answers = iter(["4", "4", "5", "3", "x", "2"] * 10)
    openai_server.reply = lambda body, i: ("Steps." if body["messages"][-1]["content"].startswith("Evaluate")
                                           else next(answers))
    jury = jury_for(make_engine, openai_server, frozen_dir, n=5)
    verdict = jury.engine.run(judge_item(cases(count=1)[0], jury)).verdict
    assert verdict.result.method == "sampling" and verdict.judge.n == 5
    sampled = [r for r in openai_server.requests if r.get("n", 1) > 1]
    assert sampled[0]["n"] == 5 and sampled[0]["temperature"] == 1.0 and sampled[0]["top_p"] == 1.0
    assert 2 <= verdict.result.score <= 5


def test_forced_logprobs_on_a_server_without_them_name_the_server_and_the_auto_setting(make_engine, openai_server,
                                                                                      frozen_dir):
    openai_server.behaviour = ServerBehaviour(logprobs=False)
    openai_server.reply = lambda body, i: "Steps." if body["messages"][-1]["content"].startswith("Evaluate") else "4"
    jury = jury_for(make_engine, openai_server, frozen_dir, scoring="logprobs")
    with pytest.raises(NoLogprobsError) as raised:  # a clean score in the text: the server is the cause
        jury.engine.run(judge_item(cases(count=1)[0], jury))
    error = str(raised.value)
    assert error.startswith(f"no logprobs: openai:judge at {openai_server.base_url} answered without "
                            "logprobs, and geval.scoring=logprobs forces them")
    assert "set geval.scoring=auto" in error and "unparseable" not in error


def test_hand_written_steps_replace_generation(make_engine, openai_server, tmp_path, frozen_dir):
    (tmp_path / "response-overall.txt").write_text("Check relevance. Check fluency.")
    openai_server.reply = reply_by_prompt
    jury = jury_for(make_engine, openai_server, frozen_dir, steps_dir=tmp_path)
    verdict = jury.engine.run(judge_item(cases(count=1)[0], jury)).verdict
    assert verdict.attributes["steps_source"] == "file:response-overall.txt"
    assert all(not r["messages"][-1]["content"].startswith("Evaluate the quality") for r in openai_server.requests)


def test_case_selection_follows_options():
    selected, (loaded,) = geval_cases(GEvalOptions(datasets="dstc9", tasks_dstc9="dialogue",
                                                   criteria_dstc9="overall"), SHIPPED)
    assert loaded.dataset == "dstc9" and loaded.kept == 220
    assert len(selected) == 220 and selected[0].id == "dstc9-0000-dialogue-overall"
    assert "whole_dialogue" in selected[0].marks() and "system_chatbot10" in selected[0].marks()


def test_per_context_skips_constant_groups_and_averages():
    predicted = np.array([1, 2, 3, 1, 1, 1, 3, 2, 1.0])
    human = np.array([1, 2, 3, 2, 3, 1, 1, 2, 3.0])
    out = per_context(predicted, human, ["a"] * 3 + ["b"] * 3 + ["c"] * 3)
    assert out["contexts_used"] == 2  # "b" is constant on the predicted side
    assert out["pearson"]["value"] == pytest.approx(0.0)  # +1 in "a", -1 in "c"


def test_meta_evaluation_reports_pooled_context_and_system_views():
    rng = np.random.default_rng(0)
    human = rng.integers(1, 6, size=60).astype(float)
    out = evaluate(human + rng.normal(0, 1, size=60), human, [f"c{i // 6}" for i in range(60)],
                   [f"s{i % 6}" for i in range(60)])
    assert out.pooled is not None and out.per_context is not None and out.system_level is not None
    assert out.items == 60 and (out.pooled.pearson.value or 0) > 0.5
    low, high = out.pooled.pearson.low, out.pooled.pearson.high
    assert low is not None and high is not None and low < out.pooled.pearson.value < high
    assert out.per_context.contexts == 10 and out.system_level.pearson.n == 6


def test_generated_steps_are_frozen_and_reused_by_later_runs(make_engine, openai_server, frozen_dir, tmp_path):
    openai_server.reply = reply_by_prompt
    first = jury_for(make_engine, openai_server, frozen_dir)
    first.engine.run(judge_item(cases(count=1)[0], first))
    (frozen,) = frozen_dir.rglob("response-overall@*.txt")
    assert frozen.read_text().strip() == "Read the dialogue. Check the criterion. Score it."
    frozen.write_text("Reviewed steps.\n")  # a reviewer edits the frozen file
    later = jury_for(make_engine, openai_server, frozen_dir, cache=tmp_path / "other.sqlite")
    calls = len(openai_server.requests)
    verdict = later.engine.run(judge_item(cases(count=1)[0], later)).verdict
    cot = [r for r in openai_server.requests[calls:] if r["messages"][-1]["content"].startswith("Evaluate")]
    assert cot == [] and verdict.attributes["steps_text"] == "Reviewed steps."


def test_a_run_never_writes_steps_into_the_data_root(make_engine, openai_server, tmp_path):
    openai_server.reply = reply_by_prompt
    data_root = tmp_path / "data"
    (data_root / "geval" / "steps").mkdir(parents=True)
    engine = make_engine(roles={"judge": f"openai:judge;base_url={openai_server.base_url}"},
                         cache=tmp_path / "run" / "cache.sqlite", cache_path=tmp_path / "run" / "cache.sqlite",
                         data_root=data_root)
    jury = Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())
    engine.run(judge_item(cases(count=1)[0], jury))
    assert list((data_root / "geval" / "steps").rglob("*.txt")) == []
    (written,) = (tmp_path / "run" / "geval-steps").rglob("response-overall@*.txt")
    shipped = data_root / "geval" / "steps" / written.parent.name / written.name  # a suite ships it: read first
    shipped.parent.mkdir(parents=True)
    shipped.write_text("Shipped steps.\n")
    written.unlink()
    later = Jury(make_engine(roles={"judge": f"openai:judge;base_url={openai_server.base_url}"},
                             cache=tmp_path / "run" / "other.sqlite", cache_path=tmp_path / "run" / "o.sqlite",
                             data_root=data_root),
                 engine.settings, PromptLibrary(), PriceTable.load())
    assert later.engine.run(judge_item(cases(count=1)[0], later)).verdict.attributes["steps_text"] == "Shipped steps."


def test_an_empty_answer_is_never_frozen_as_the_rubric(make_engine, openai_server, frozen_dir):
    openai_server.reply = lambda body, index: "" if body["messages"][-1]["content"].startswith("Evaluate") else "4"
    jury = jury_for(make_engine, openai_server, frozen_dir)
    verdict = jury.engine.run(judge_item(cases(count=1)[0], jury)).verdict
    assert not verdict.valid and "evaluation steps" in verdict.error and "empty answer" in verdict.error
    assert list(frozen_dir.rglob("*.txt")) == []
