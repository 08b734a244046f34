from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llmjury.cli import main
from llmjury.errors import DatasetError
from llmjury.families.qa_quality.cases import QACase
from llmjury.families.qa_quality.evaluation import EvaluationInput, extract_for_evaluation, grade, token_saving
from llmjury.families.qa_quality.export import answer_rule, load_export, question_rule
from llmjury.families.qa_quality.pipeline import grade_pair
from llmjury.families.qa_quality.results import GradeResult
from llmjury.judgement.jury import Jury
from llmjury.pricing import PriceTable
from llmjury.prompts import PromptLibrary

EXPORT = Path(__file__).resolve().parents[3] / "fixtures" / "qa_quality" / "slack_export"

PAIR = {"question": {"text": " transformer에서 positional encoding은 왜 필요한가요? ", "user": "U123",
                     "timestamp": "1699123456.789", "metadata": {"reactions": [{"name": "eyes", "count": 2}]}},
        "answers": [{"text": "RNN과 달리 transformer는 순서 정보가 없어서...", "user": "U456"},
                    {"text": "   "}, {"text": "추가로 sin/cos 함수를 쓰는 이유는...", "user": "U789"}]}


def test_evaluation_input_matches_the_seed_format_exactly():
    evaluation_input = extract_for_evaluation(PAIR)
    assert evaluation_input == EvaluationInput(
        question="transformer에서 positional encoding은 왜 필요한가요?",
        answers=["RNN과 달리 transformer는 순서 정보가 없어서...", "추가로 sin/cos 함수를 쓰는 이유는..."],
        original_id="1699123456.789", source_file="")
    assert evaluation_input.to_prompt_format() == (
        "## 질문\ntransformer에서 positional encoding은 왜 필요한가요?\n\n## 답변들\n"
        "[답변 1]\nRNN과 달리 transformer는 순서 정보가 없어서...\n\n[답변 2]\n추가로 sin/cos 함수를 쓰는 이유는...")
    raw, compact = token_saving(PAIR, evaluation_input)
    assert compact < raw


@pytest.mark.parametrize(("scores", "expected"), [
    ([5, 4, 4], "high"), ([5, 4, 3], "high"), ([4, 4, 3], "medium"), ([5, 5, 2], "medium"), ([3, 3, 3], "medium"),
    ([4, 4, 1], "low"), ([2, 2, 3], "low"), ([1, 1, 5], "remove"), ([2, 1, 2], "remove"), ([1, 2, 2], "remove"),
])
def test_grade_rules_of_section_4(scores, expected):
    assert grade(scores) == expected


@pytest.mark.parametrize(("text", "rule"), [
    ("ㅋㅋㅋㅋ", "filler"), ("넵", "acknowledgement"), ("ok!", "acknowledgement"), ("감사합니다!", "short_thanks"),
    ("thanks a lot", "short_thanks"), ("", "empty"), ("enumerate 써보세요", None)])
def test_answer_rules(text, rule):
    assert answer_rule(text) == rule


def test_question_rules():
    assert question_rule("[공지] 휴강입니다") == "announcement_or_recruiting"
    assert question_rule("스터디원 모집합니다!") == "announcement_or_recruiting"
    assert question_rule("BERT lr은?") is None


def test_shipped_export_is_filtered_and_every_rule_counted():
    export = load_export(EXPORT)
    nlp = export.courses["level2_nlp"]
    assert nlp.removed == {"announcement_or_recruiting": 2, "short_thanks": 1, "system_message": 1}
    assert nlp.removed_answers == {"filler": 1, "system_message": 1}
    python = export.courses["level1_python"]
    assert python.removed_answers["system_message"] == 2
    texts = [p.question["text"] for p in nlp.pairs]
    assert not any("[공지]" in t for t in texts)


def test_malformed_export_names_file_and_thread(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "x.json").write_text(json.dumps([{"answers": []}]))
    with pytest.raises(DatasetError, match=r"x\.json \[item 0\]: thread lacks 'question'"):
        load_export(tmp_path)


def case():
    return QACase(id="qa-x", dataset="d", course="c", source_file="f.json", generation="7", date="2024-10-15",
                  pair=PAIR)


GOOD = {"completeness": {"score": 4, "reasoning": "covers it"},
        "context_independence": {"score": 5, "reasoning": "self-contained"},
        "technical_accuracy": {"score": 5, "reasoning": "correct"}, "overall_quality": "medium"}


def jury_for(make_engine, spec):
    engine = make_engine(roles={"judge": spec})
    return Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())


def test_structured_output_via_openai_and_disagreement_kept(make_engine, openai_server):
    openai_server.reply = lambda body, i: json.dumps(GOOD, ensure_ascii=False)
    jury = jury_for(make_engine, f"openai:gpt-4o-mini;base_url={openai_server.base_url}")
    verdict = jury.engine.run(grade_pair(case(), jury)).verdict
    sent = openai_server.requests[0]["response_format"]
    assert sent["json_schema"]["name"] == "QualityEvaluation"
    assert "completeness" in sent["json_schema"]["schema"]["properties"]
    assert verdict.kind == "grade" and isinstance(verdict.result, GradeResult)
    result = verdict.result
    assert (result.grade, result.judge_grade, result.grade_disagrees) == ("high", "medium", True)
    assert verdict.cost_usd is not None and verdict.cost_usd > 0


def test_invalid_output_is_asked_again_then_recorded_invalid(make_engine, gemini_server):
    texts = ['{"completeness": {"score": 9, "reasoning": "x"}}', "not json", "still not json"]
    answers = iter(texts)
    gemini_server.reply = lambda body, i: next(answers)
    jury = jury_for(make_engine, f"gemini:gemini-2.0-flash;base_url={gemini_server.origin}")
    verdict = jury.engine.run(grade_pair(case(), jury)).verdict
    assert not verdict.valid and verdict.error.startswith("unparseable")
    assert verdict.raw == texts and len(gemini_server.requests) == 3  # every attempt's text is kept
    assert gemini_server.requests[0]["generationConfig"]["responseMimeType"] == "application/json"


def test_dry_run_estimates_before_any_call(capsys):
    assert main(["qa-estimate", "--export", str(EXPORT), "--model", "gpt-4o-mini"]) == 0
    out = capsys.readouterr().out
    assert "14 items; left out 5 (2 announcement_or_recruiting thread" in out
    assert "14 pairs to grade (0 with a human label)" in out and "$" in out


KILLABLE = '''
from pathlib import Path

import llmjury
from llmjury.families.qa_quality.datasets import export_cases
from llmjury.families.qa_quality.pipeline import grade_pair

pairs, _, _ = export_cases(Path({export!r}))

@llmjury.pipeline(grade_pair)
@llmjury.parametrize(pairs)
def test_pair(outcome):
    assert outcome.verdict.valid
'''


@pytest.mark.e2e  # kill -9 of a pytest process mid-run
def test_killed_run_resumes_without_repeating_finished_calls(pytester, openai_server):
    openai_server.reply = lambda body, i: json.dumps(GOOD)
    openai_server.latency = 0.3
    pytester.makepyfile(test_resume=KILLABLE.format(export=str(EXPORT)))
    pytester.makeini("[pytest]\naddopts = -p no:deepeval -p no:cacheprovider\n")
    args = [sys.executable, "-m", "pytest", "-q", "--llm-concurrency", "2",
            "--llm-judge", f"openai:gpt-4o-mini;base_url={openai_server.base_url}"]
    proc = subprocess.Popen(args, cwd=pytester.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.time() + 60
    while len(openai_server.requests) < 6 and time.time() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = len(openai_server.requests)
    assert 6 <= before < 14
    done = subprocess.run(args, cwd=pytester.path, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:]
    again = len(openai_server.requests) - before
    # At most the two calls in flight at the kill are asked again; every pair ends up graded.
    assert again <= 14 - before + 2
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    assert summary["qa_quality"]["verdicts"] == 14 and summary["qa_quality"]["unscored"] == 0
