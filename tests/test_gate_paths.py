"""Every metric path a report prints is one `--llm-gate` accepts and resolves to that very metric."""

from __future__ import annotations

import re

from summaries import summary_of

from llmjury.reporting.reports import markdown
from llmjury.results.decision import metric_rows
from llmjury.results.gates import Gate, resolve


def metric(value: float) -> dict:
    return {"value": value, "low": value - 0.1, "high": value + 0.1, "n": 10, "method": "test"}


SECTION = {
    "win_rate": metric(0.5),
    "recorded": {"recorded:autoj-13b": {"swap_consistency": metric(0.6)}, "gpt-3.5-turbo": metric(0.7)},
    "rating": {"2023 model": metric(0.8), "llama_2": metric(0.9)},
    "by_subject": {"operating systems": {"win_rate": metric(0.4)}},
}


def test_every_path_of_a_sections_metrics_is_a_gate_that_reads_it_back():
    summary = {"arena": SECTION}
    rows = metric_rows(SECTION)
    assert len(rows) == 6
    for path, node in rows:
        gate = Gate.parse(f"arena.{path}>=0")
        assert resolve(summary, gate.left)[0] == node["value"], path


def test_the_paths_summary_md_prints_are_gates_that_parse():
    summary = summary_of({"run": {"id": "r", "judge": "offline", "cache_mode": "record", "families": ["arena"]},
                          "arena": {"cases": 1, "verdicts": 1, "unscored": 0, "unscored_reasons": {},
                                    "judges": ["offline"], "headline": [], **SECTION}})
    text = markdown(summary, [], {})
    printed = re.findall(r"`(arena\.[^`]+)`", text)
    assert "arena.recorded[recorded:autoj-13b].swap_consistency" in printed
    for path in printed:  # each reads its metric back from the typed summary (every value here is >= 0.3)
        result = Gate.parse(f"{path}>=0").check(summary)
        assert (result.status, result.reason) == ("pass", ""), path


def test_the_headline_paths_summary_md_prints_are_gates_that_parse():
    """A headline under a key with `:` and `/` (a G-Eval judge's validity) was printed joined by dots,
    `geval.judge_validity.openai:judge/mini/response/overall.pearson`, which the gate parser refuses."""
    validity = {"openai:judge/mini/response/overall": {"pearson": metric(0.5), "spearman": metric(0.4)}}
    summary = summary_of({"run": {"id": "r", "judge": "openai:judge", "cache_mode": "record", "families": ["geval"]},
                          "geval": {"cases": 1, "verdicts": 1, "unscored": 0, "unscored_reasons": {},
                                    "judges": ["openai:judge"], "headline": ["judge_validity"],
                                    "judge_validity": validity}})
    text = markdown(summary, [], {})
    printed = re.findall(r"`(geval\.judge_validity[^`]*)`", text)
    assert "geval.judge_validity[openai:judge/mini/response/overall].pearson" in printed
    for path in printed:
        result = Gate.parse(f"{path}>=0").check(summary)
        assert (result.status, result.reason) == ("pass", ""), path
