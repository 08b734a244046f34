"""What the real server answered and what the reader made of each answer: every judge answer of a
run (from the run's cache, with its template and finish reason) joined with the outcome of the
verdict it belongs to (the value scored, or the unscored cause), written as JSON lines and printed
as a table per family, so a reader of the CI log sees why real answers fail.

The lines take the reading corpus's shape (`shape`, `text`, `finish_reason`, `prompt`), so answers
worth keeping can be copied into tests/reading/llama_answers.jsonl as they are. `LLMJURY_ANSWERS_DIR`
names a folder (a CI artifact) that receives a copy of every file written."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

#: The answer shape each judge template asks for, as the reading corpus names them.
SHAPES = {"socratic/judge.j2": "choice", "socratic/judge_aspect.j2": "choice", "core/compare.j2": "choice",
          "arena/mtbench_pair_v2.j2": "choice", "arena/judge.j2": "score_pair", "geval/dialogue.j2": "rating",
          "geval/response.j2": "rating", "core/geval.j2": "rating", "qa_quality/judge.j2": "json",
          "core/score.j2": "json", "core/repair.j2": "repair"}


def cached_answers(cache: Path) -> list[dict[str, Any]]:
    """Every answer the run's cache holds: its template (the request's task without its hash), the
    finish reason and the text."""
    with sqlite3.connect(cache) as db:
        rows = db.execute("SELECT task, sample FROM samples ORDER BY created").fetchall()
    answers = []
    for task, sample in rows:
        body = json.loads(sample)
        answers.append({"prompt": task.partition("@")[0], "finish_reason": body.get("finish_reason"),
                        "text": body.get("text", "")})
    return answers


def outcome(verdict: Mapping[str, Any]) -> str:
    """The reader's outcome of a verdict: `scored: <value>`, or `unscored: <cause>`."""
    if not verdict["valid"]:
        return f"unscored: {verdict.get('cause') or (verdict.get('error') or '').split(':')[0]}"
    result = verdict.get("result") or {}
    value = next((result[key] for key in ("winner", "score", "grade", "decision") if key in result), "?")
    return f"scored: {value}"


def judged_answers(verdicts: Iterable[Mapping[str, Any]], cache: Path, family: str) -> list[dict[str, Any]]:
    """Each judge answer of `family`'s verdicts with its template, finish reason, its own outcome (a
    cut-off answer's is `truncated`, the others' their verdict's) and its verdict's (an answer the
    cache does not hold, a refused or empty one, keeps what the verdict recorded)."""
    by_text: dict[str, dict[str, Any]] = {}
    for answer in cached_answers(cache):
        if answer["prompt"] in SHAPES:
            by_text.setdefault(answer["text"], answer)
    lines = []
    for verdict in verdicts:
        if verdict["family"] != family or verdict["judge"]["provider"].startswith(("human:", "rules:")):
            continue
        for text in verdict.get("raw") or []:
            found = by_text.get(text, {"prompt": verdict["judge"].get("prompt", "").partition("@")[0],
                                       "finish_reason": None})
            # A cut-off answer is never read (llmjury.judgement.judging): its own outcome, whatever the verdict's.
            cut = found["finish_reason"] in ("length", "MAX_TOKENS")
            lines.append({"shape": SHAPES.get(found["prompt"], "other"), "text": text,
                          "finish_reason": found["finish_reason"], "prompt": found["prompt"], "family": family,
                          "case_id": verdict["case_id"], "outcome": "unscored: truncated" if cut else outcome(verdict),
                          "verdict": outcome(verdict), "error": verdict.get("error")})
    return lines


def record(lines: list[dict[str, Any]], path: Path) -> Path:
    """Write the lines as JSON lines (and a copy into LLMJURY_ANSWERS_DIR when set); the path."""
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    target = os.environ.get("LLMJURY_ANSWERS_DIR")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(target) / path.name)
    return path


def table(family: str, lines: list[dict[str, Any]]) -> str:
    """Per template: answers, finish reasons, outcomes; then every answer with its outcome."""
    out = [f"{family}: {len(lines)} judge answers",
           f"  {'template':<26} {'answers':>7}  {'finish reasons':<22} outcomes"]
    for prompt in sorted({line["prompt"] for line in lines}):
        mine = [line for line in lines if line["prompt"] == prompt]
        finish = Counter(str(line["finish_reason"]) for line in mine)
        outcomes = Counter("scored" if line["outcome"].startswith("scored") else line["outcome"] for line in mine)
        out.append(f"  {prompt:<26} {len(mine):>7}  {_counts(finish):<22} {_counts(outcomes)}")
    out.append("  answers (text shortened):")
    for line in lines:
        text = " ".join(line["text"].split())
        out.append(f"    [{line['finish_reason']}] {line['outcome']:<24} {text[:110]!r}")
    return "\n".join(out)


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{key} {count}" for key, count in counter.most_common())
