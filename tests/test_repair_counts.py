"""Every family's report says, per judge, how many verdicts were scored directly, how many only after
a repair call (the judge asked for its decision alone), and how many stayed unscored, by cause."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from llmjury.families import discover
from llmjury.judgement.verdicts import ASSERTIONS, JudgeConfig, Verdict
from llmjury.results.exit_status import GATE_FAILED_EXIT
from llmjury.results.repairs import html_table, markdown, repairs_by_judge
from llmjury.testing import FakeOpenAI

GEVAL_ATTRIBUTES = {"dataset": "d", "task": "response", "criterion": "coherence", "item": "i", "context_id": "c",
                    "system_id": "s", "human": None}


def verdict(case: str, family: str, kind: str, *, provider: str = "openai:j", error: str | None = None,
            repaired: int = 0) -> Verdict:
    return Verdict(case_id=case, family=family, kind=kind, judge=JudgeConfig(provider=provider), valid=error is None,
                   error=error, repaired=repaired, attributes=GEVAL_ATTRIBUTES if family == "geval" else {})


def test_counts_split_direct_repaired_and_unscored_by_cause_per_judge():
    from llmjury.custom import CheckResult

    verdicts = [
        verdict("c1", "custom", "compare", error="unparseable: no decision (after 1 repair call(s))", repaired=0),
        verdict("c2", "custom", "compare", error="call failed: HTTP 500"),
        verdict("c3", "custom", "compare", error="unparseable: the final line 'x'"),
        verdict("c4", "custom", "compare", provider="other"),
        verdict("c7", "custom", "compare", provider="human:annotator-1"),
        verdict("c8", "custom", "compare", provider="rules:filters"),
        Verdict(case_id="c5", family="custom", kind="check", judge=JudgeConfig(provider=ASSERTIONS),
                result=CheckResult(passed=True)),
    ]
    # a scored verdict's decision read after a repair (one of its runs repaired)
    verdicts.append(verdict("c6", "custom", "compare", repaired=1))
    counts = repairs_by_judge(verdicts)
    assert list(counts) == ["openai:j", "other"]  # people's labels, rules and a test's assertions asked no judge
    mine = counts["openai:j"]
    assert (mine.verdicts, mine.direct, mine.repaired) == (4, 0, 1)
    assert mine.unscored == {"no_decision": 2, "failed": 1}  # classed by the error where no cause was recorded
    assert (mine.repaired_rate.value, mine.repaired_rate.n) == (0.25, 4)
    assert (counts["other"].direct, counts["other"].repaired, counts["other"].unscored) == (1, 0, {})
    assert "| `openai:j` | 4 | 0 | 1 | 0 | 3 (no_decision: 2, failed: 1) | - |" in markdown(counts)


@pytest.mark.parametrize("family", sorted(discover()))
def test_every_family_section_carries_the_counts_into_summary_md(family):
    shipped = discover()[family]
    kind = next(iter(shipped.results))
    verdicts = [verdict("c1", family, kind, error="unparseable: x"), verdict("c2", family, kind, error="refused: no")]
    section = shipped.aggregate(verdicts)
    assert section.repairs["openai:j"].unscored == {"no_decision": 1, "refused": 1}
    assert "| `openai:j` | 2 | 0 | 0 | 0 | 2 (no_decision: 1, refused: 1) | - |" in shipped.markdown(section)
    dumped = section.model_dump(mode="json")  # what summary.json holds and report.html reads back
    assert "<td>2 (no_decision: 1, refused: 1)</td>" in html_table(dumped)


PROJECT = """
import pytest


@pytest.mark.parametrize("question", ["direct", "repaired", "unrepaired"])
def test_judged(jury, question):
    jury.engine.run(jury.compare("yes", "no", criteria="correct", question=question, runs=1, name=question))
"""


def answer(body: dict, index: int) -> str:
    """A judge that decides at once on `direct`, first answers the other questions ambiguously, and
    when asked for its decision alone gives it on `repaired` but not on `unrepaired`."""
    messages = body["messages"]
    asked = "\n".join(m["content"] for m in messages)
    question = next(q for q in ("unrepaired", "repaired", "direct") if q in asked)  # "repaired" is in "unrepaired"
    if messages[-1]["content"].startswith("Your answer above has no decision"):
        return "### B" if question == "repaired" else "I cannot say."
    if question == "direct":
        return "Plainly better.\n### A"
    return "### A, or ### B: either works."


@pytest.mark.e2e  # two xdist workers
def test_a_run_against_a_judge_answering_ambiguously_then_clearly_reports_each_way(pytester: pytest.Pytester):
    pytester.makeini("[pytest]\naddopts = -p no:deepeval -p no:asyncio -p no:benchmark\n")
    pytester.makepyfile(test_judged=PROJECT)
    with FakeOpenAI(answer) as server:
        result = pytester.runpytest_inprocess("-n", "2", "--llm-judge", f"openai:judge;base_url={server.base_url}",
                                              "--llm-gate", "custom.repairs[openai:judge].repaired_rate<=0.05")
        repair_calls = sum(m[-1]["content"].startswith("Your answer above") for m in
                           (r["messages"] for r in server.requests))
    result.assert_outcomes(passed=3)
    assert result.ret == GATE_FAILED_EXIT  # 1 of 3 repaired: the interval [0.06, 0.79] is above 0.05
    assert repair_calls == 4  # both orders of `repaired` and `unrepaired`, once each
    run = Path(pytester.path) / "reports" / "latest"
    (judge, counts), = json.loads((run / "summary.json").read_text())["custom"]["repairs"].items()
    assert counts["verdicts"] == 3 and counts["direct"] == 1 and counts["repaired"] == 1
    (cause, lost), = counts["unscored"].items()  # the reader's own cause for "I cannot say."
    assert lost == 1 and cause in ("no_decision", "ambiguous") and counts["repair_failed"] == 1
    records = {r["attributes"]["name"]: r for r in
               map(json.loads, gzip.decompress((run / "verdicts.jsonl.gz").read_bytes()).splitlines())}
    repaired = records["repaired"]
    assert repaired["valid"] and repaired["repaired"] == 2
    assert [(r["decision"], r["repaired"]) for r in repaired["result"]["runs"]] == [("b", True), ("b", True)]
    assert records["direct"]["repaired"] == 0 and not records["unrepaired"]["valid"]
    assert f"| `{judge}` | 3 | 1 | 1 | 1 | 1 ({cause}: 1) | 0/" in (run / "summary.md").read_text()
    html = (run / "report.html").read_text()
    assert "<td>scored after a repair</td>" not in html and "<th>scored after a repair</th>" in html
    assert f"<td>1 ({cause}: 1)</td>" in html
