"""Your own Q&A pairs through the suite's eval module, from a folder outside this repository: the
dataset's name in case ids, markers (under --strict-markers) and report labels; what was left
out in the report; the data loaded once per process."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

EVAL = Path(__file__).resolve().parents[3] / "evals" / "test_qa_quality.py"
INI = """
[pytest]
addopts = -p no:deepeval -p no:asyncio -p no:benchmark -p no:cacheprovider --strict-markers
llm_options = qa_quality.pairs=team_wiki.jsonl
"""
ROWS = [
    {"id": "w1", "question": "How do I pin a dependency?", "answer": "Use `pip install pkg==1.2` and commit "
     "requirements.txt; see https://pip.pypa.io/en/stable/ docs.", "course": "tooling"},
    {"id": "w2", "question": "Where is the staging server?", "answer": "저도 궁금해요, 아까 그거요", "course": "ops"},
    {"id": "w2", "question": "Where is the staging server?", "answer": "duplicate", "course": "ops"},
    {"id": "w3", "question": "Which Python do we use?", "answer": "  ", "course": "tooling"},
    {"id": "l1", "question": "Is pandas row order stable?", "answer": "It keeps insertion order; "
     "`df.sort_index()` restores it.", "label": "Good"},
    {"id": "l2", "question": "Why is my loss NaN?", "answer": "저도 궁금해요", "label": "Bad"},
    {"id": "l3", "question": "What does `git rebase -i` do?", "answer": "It rewrites commits: reorder, squash or "
     "edit them interactively, see the git docs.", "label": "PotentiallyUseful"},
]


@pytest.fixture
def own_pairs(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    # Another basename than this package's test_qa_quality.py, so in-process runs import it afresh.
    shutil.copy(EVAL, pytester.path / "test_qa_suite.py")
    (pytester.path / "team_wiki.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS),
                                                  encoding="utf-8")
    return pytester


def summary(pytester: pytest.Pytester) -> dict:
    return json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text(encoding="utf-8"))


# Two xdist workers are processes of their own: e2e (tests/datasets/test_loading.py merges loading across
# workers in the quick run).
@pytest.mark.parametrize("workers", ["0", pytest.param("2", marks=pytest.mark.e2e)])
def test_own_pairs_run_under_strict_markers_with_their_name_everywhere(own_pairs, workers):
    result = own_pairs.runpytest_inprocess("-n", workers, "-rs", "--llm-option", "qa_quality.on_remove=xfail")
    result.assert_outcomes(passed=4, xfailed=1, skipped=1)  # no Slack export given: its rules test has no case
    result.stdout.fnmatch_lines(["*qa_quality dataset team_wiki (*team_wiki.jsonl): 5 items; "
                                 "left out 2 (1 duplicate id, 1 empty answer)*"])
    section = summary(own_pairs)["qa_quality"]
    assert section["cases"] == 5
    assert list(section["datasets"]) == ["team_wiki"] and section["grades"]["remove"] == 1
    assert set(section["courses"]) == {"tooling", "ops"}
    validity = section["judge_validity"]["team_wiki"]
    assert validity["dataset"] == "team_wiki, human Good / PotentiallyUseful / Bad"
    assert validity["spearman_avg_score_vs_label"]["n"] == 3 and "semeval" not in json.dumps(section).lower()
    assert section["loading"][0]["dropped"] == {"duplicate id": 1, "empty answer": 1}
    scored = json.loads((own_pairs.path / "reports" / "latest" / "qa_quality" / "tooling.json").read_text())
    assert [p["question"]["timestamp"] for p in scored["qa_pairs"]] == ["w1"]


def test_own_pairs_are_selected_by_their_dataset_marker(own_pairs):
    result = own_pairs.runpytest_inprocess("-m", "qa_team_wiki and course_ops", "--collect-only", "-q",
                                           "-p", "no:xdist")
    result.stdout.fnmatch_lines(["*test_pair_is_worth_keeping[[]team_wiki-w2[]]*"])
    assert "team_wiki-w1" not in result.stdout.str()


def test_the_data_is_loaded_once_per_process(own_pairs, monkeypatch):
    from llmjury.families.qa_quality import datasets

    calls: list[Path] = []
    real = datasets.labelled_file

    def counted(path, dataset, shape):
        calls.append(path)
        return real(path, dataset, shape)

    monkeypatch.setattr(datasets, "labelled_file", counted)
    own_pairs.runpytest_inprocess("--collect-only", "-q", "-p", "no:xdist")
    assert len(calls) == 1


def test_an_empty_pairs_file_stops_the_run_naming_it(own_pairs):
    (own_pairs.path / "team_wiki.jsonl").write_text("", encoding="utf-8")
    result = own_pairs.runpytest_inprocess("--collect-only", "-p", "no:xdist")
    assert result.ret != 0  # a collection error now; a usage error once data files are checked at start-up
    assert "team_wiki.jsonl: empty file" in result.stdout.str() + result.stderr.str()
