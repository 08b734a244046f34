"""A sample of every family end to end through `openai:` against llama.cpp's server: no case errors,
every request is answered, the unscored rate is reported with each unscored verdict's cause, and every
raw judge answer is recorded with its finish reason and the reader's outcome (`answers.py`; printed
with -rP). A 135M model judges badly; what is checked is the machinery on a real server's real answers."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from llmjury.prompts import BUNDLED_PROMPTS, PromptLibrary
from llmjury.results.causes import CAUSES
from llmjury.runfiles import read_verdicts
from real_server.answers import judged_answers, record, table

REPO = Path(__file__).resolve().parents[2]
FAMILY_TESTS = {
    "socratic": "evals/test_socratic.py::test_ours_against_baseline",
    "arena": "evals/test_arena.py::test_battle",
    "geval": "evals/test_geval.py::test_geval_item",
    "qa_quality": "evals/test_qa_quality.py::test_pair_is_worth_keeping",
}
SHORT = 48  # tokens an answer may take here: the server answers one request at a time on 2 cores


@pytest.fixture(scope="module")
def short_prompts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A prompts directory whose generation.toml keeps every bundled template's temperature and
    caps its answer at SHORT tokens (JSON answers get a little more room)."""
    folder = tmp_path_factory.mktemp("prompts")
    library = PromptLibrary()
    lines = []
    for path in sorted(BUNDLED_PROMPTS.rglob("*.j2")):
        name = str(path.relative_to(BUNDLED_PROMPTS))
        generation = library.generation(name)
        if generation:
            tokens = 160 if name in ("qa_quality/judge.j2", "core/score.j2") else SHORT
            lines += [f'["{name}"]', f"temperature = {generation['temperature']}", f"max_tokens = {tokens}", ""]
    (folder / "generation.toml").write_text("\n".join(lines), encoding="utf-8")
    return folder


@pytest.mark.parametrize("family", sorted(FAMILY_TESTS))
def test_a_family_runs_end_to_end_on_a_real_server(family, llama_server, short_prompts, tmp_path):
    spec = f"openai:smollm2;base_url={llama_server};timeout=300"
    roles = [arg for role in ("candidate", "baseline", "teacher", "student")
             for arg in ("--llm-role", f"{role}={spec}")]
    options = ["socratic.dialogues=1", "socratic.subsets=1", "socratic.turns=1",
               f"geval.frozen_steps={tmp_path}/steps"]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", FAMILY_TESTS[family], "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
         "-n", "0", "--llm-sample", "1", "--llm-runs", "1", "--llm-judge", spec, *roles, "--llm-concurrency", "1",
         "--llm-cache-path", str(tmp_path / "cache.sqlite"), "--llm-reports", str(tmp_path / "reports"),
         "-o", f"llm_prompts={short_prompts}", *[a for o in options for a in ("--llm-option", o)]],
        cwd=REPO, capture_output=True, text=True, timeout=900)
    tail = result.stdout[-3000:]
    assert "error" not in result.stdout.splitlines()[-1], tail  # no test errored: failures are unscored cases
    assert result.returncode in (0, 1), tail
    assert (tmp_path / "reports" / "latest" / "summary.json").is_file(), result.stdout[-6000:] + result.stderr[-3000:]
    summary = json.loads((tmp_path / "reports" / "latest" / "summary.json").read_text())
    section = summary[family]
    verdicts = read_verdicts(tmp_path / "reports" / "latest")
    live = [v for v in verdicts if v["judge"]["provider"] == "openai:smollm2"]
    assert live, tail
    causes = Counter((v["error"] or "").split(":")[0] for v in live if not v["valid"])
    assert "call failed" not in causes, [v["error"] for v in live if not v["valid"]]  # every request was answered
    assert all(v["judge"]["max_tokens"] and v["judge"]["temperature"] is not None for v in live)
    assert sum(section["unscored_causes"].values()) == section["unscored"]
    assert all(v["cause"] in CAUSES for v in live if not v["valid"]), [v["error"] for v in live if not v["valid"]]
    answers = judged_answers(verdicts, tmp_path / "cache.sqlite", family)
    assert answers and all(a["finish_reason"] in ("stop", "length") for a in answers), answers
    path = record(answers, tmp_path / f"answers-{family}.jsonl")
    print(table(family, answers))
    print(f"recorded in {path}")
    usage = summary["usage"]["providers"]["openai:smollm2"]
    print(f"{family}: {len(live)} live verdicts, unscored {section['unscored']} ({section['unscored_causes']}); "
          f"{usage['calls']} calls, {usage['failures']} failed, {usage['latency_s']:.1f}s answering; "
          f"adaptations {summary['run'].get('adaptations', {})}")
