"""A user's own tutor data through the suite's socratic eval module, end to end under --strict-markers:
an MRBench V3-shaped file and seed 000's pre-collected responses, named after their files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
V3 = ("Mistake_Identification", "Mistake_Location", "Providing_Guidance", "Actionability")
INI = f"""
[pytest]
addopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider -p no:randomly --strict-markers
llm_data = {REPO / "fixtures"}
"""


def annotation(*values: str) -> dict[str, str]:
    return dict(zip(V3, values, strict=True))


def v3_file(path: Path) -> None:
    conversations = []
    for i in range(3):
        conversations.append({
            "conversation_id": f"{i}-{i + 40}", "conversation_history": f"Tutor: What is {i} + 3?\nStudent: {i + 4}",
            "tutor_responses": {
                "Sonnet": {"response": f"Let's check: what is {i} + 3 when you count on your fingers?",
                           "annotation": annotation("Yes", "Yes", "Yes", "Yes")},
                "Phi3": {"response": f"The answer is {i + 3}.", "annotation": annotation("Yes", "No", "No", "No")},
                "Llama31405B": {"response": "Good try!"},  # unannotated, as in the shared task's test split
            }})
    path.write_text(json.dumps(conversations))


def responses_files(folder: Path) -> Path:
    subsets = folder / "subsets"
    subsets.mkdir()
    results = []
    for i in range(4):
        messages = [{"role": "user", "message": "Why does quicksort degrade on sorted input?"},
                    {"role": "assistant", "message": "What pivot does it pick there?"},
                    {"role": "user", "message": f"The first element, number {i}?"}]
        (subsets / f"subset_{i:03d}.json").write_text(json.dumps({"subset_id": f"{i:03d}", "messages": messages}))
        results.append({"subset_id": f"{i:03d}", "success": i != 3,
                        "responses": {"chat": "Consider a sorted input: what would that pivot do?",
                                      "simple-chat": "The answer is that the pivot is always the smallest."}})
    path = folder / "endpoint_responses_20250623_161358.json"
    path.write_text(json.dumps({"summary": {"successful": 3}, "results": results}))
    return path


@pytest.fixture
def own_data(pytester: pytest.Pytester) -> pytest.RunResult:
    pytester.makeini(INI)
    pytester.makepyfile(test_socratic=(REPO / "evals" / "test_socratic.py").read_text(encoding="utf-8"))
    v3_file(pytester.path / "mrbench_v3_mine.json")
    responses = responses_files(pytester.path)
    return pytester.runpytest_inprocess(
        "-k", "human_preferences or collected_replies", "-m", "mrbench_v3_mine or endpoint_responses_20250623_161358",
        "--llm-option", "socratic.mrbench=mrbench_v3_mine.json", "--llm-option", "socratic.mrbench_pairs=3",
        "--llm-option", f"socratic.responses={responses}", "--llm-option", "socratic.subsets_dir=subsets",
        "--llm-option", "socratic.ours_name=chat", "--llm-option", "socratic.baseline_name=simple-chat")


def test_v3_file_and_collected_replies_run_under_strict_markers(own_data, pytester):
    own_data.assert_outcomes(passed=3 * 1 + 3)  # one annotated pair per conversation, three usable replies
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    section = summary["socratic"]
    validity = section["judge_validity"]
    assert validity["dataset"].startswith("mrbench v3 mine (") and "MRBench V1" not in json.dumps(section)
    assert validity["dimensions"] == list(V3) and set(validity["by_dimension"]) == set(V3)
    assert validity["agreement_with_ties"]["n"] == 3
    assert section["responses"]["dataset"] == "endpoint_responses_20250623_161358"
    assert section["responses"]["win_rate"]["n"] == 3 and "win_rate" not in {k for k in section if k != "responses"}
    loading = {r["dataset"]: r for r in section["loading"]}
    assert loading["mrbench_v3_mine"]["dropped"] == {"replies without annotation": 3}
    assert loading["endpoint_responses_20250623_161358"]["dropped"] == {"items the collection marked unsuccessful": 1}
    run = pytester.path / "reports" / "latest"
    robust = json.loads((run / "socratic_endpoint_responses_20250623_161358_robust_evaluation.json").read_text())
    assert robust["summary"]["total_subsets"] == 3
    assert set(robust["summary"]["final_verdict_distribution"]) <= {"chat", "simple-chat", "tie"}
    markdown = (run / "summary.md").read_text()
    assert "### Judge validity (mrbench v3 mine human preferences)" in markdown
    assert "| Providing_Guidance |" in markdown and "### Pre-collected replies: endpoint_responses" in markdown
    own_data.stdout.fnmatch_lines(["*socratic dataset mrbench_v3_mine (*): 3 items; left out 3*"])


def test_without_a_data_root_the_shipped_datasets_skip_naming_their_options(pytester):
    pytester.makeini(INI.replace(f"llm_data = {REPO / 'fixtures'}\n", ""))
    pytester.makepyfile(test_socratic=(REPO / "evals" / "test_socratic.py").read_text(encoding="utf-8"))
    responses = responses_files(pytester.path)
    result = pytester.runpytest_inprocess(
        "-rs", "--llm-option", "socratic.dialogues=1", "--llm-option", "socratic.subsets=1",
        "--llm-option", f"socratic.responses={responses}", "--llm-option", "socratic.subsets_dir=subsets",
        "--llm-option", "socratic.ours_name=chat", "--llm-option", "socratic.baseline_name=simple-chat")
    result.assert_outcomes(passed=1 + 3, skipped=2)
    result.stdout.fnmatch_lines(["*dataset 'mathdial': no file; set --llm-option socratic.mathdial=PATH or point "
                                 "llm_data*mathdial/test.jsonl*",
                                 "*dataset 'mrbench': no file; set --llm-option socratic.mrbench=PATH*"],
                                consecutive=False)


@pytest.mark.parametrize(("option", "content", "cause"), [
    ("mathdial", "", "empty file"),
    ("mrbench", "\n", "empty file"),
    ("responses", b"\xff\xfe", "not UTF-8"),
])
def test_a_bad_file_stops_the_run_at_start_up_naming_it(pytester, option, content, cause):
    pytester.makeini(INI)
    pytester.makepyfile(test_socratic=(REPO / "evals" / "test_socratic.py").read_text(encoding="utf-8"))
    bad = pytester.path / "mine.jsonl"
    bad.write_bytes(content.encode() if isinstance(content, str) else content)
    result = pytester.runpytest_inprocess("--llm-option", f"socratic.{option}=mine.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*socratic.{option}=mine.jsonl*mine.jsonl: {cause}*"])


def test_a_missing_subsets_folder_stops_the_run_at_start_up(pytester):
    pytester.makeini(INI)
    pytester.makepyfile(test_socratic=(REPO / "evals" / "test_socratic.py").read_text(encoding="utf-8"))
    result = pytester.runpytest_inprocess("--llm-option", "socratic.subsets_dir=no_such_folder")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*socratic.subsets_dir=no_such_folder*no such file*"])
