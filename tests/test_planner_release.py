"""A planned case's outcome is held only until every test reading it has reported: memory that
does not grow with the suite. Its verdicts then live in the reports, not in the item or the planner."""

from __future__ import annotations

import pytest

from llmjury.cases import Case
from llmjury.judgement.jury import Jury, Outcome
from llmjury.judgement.planner import Planner
from llmjury.judgement.verdicts import JudgeConfig, Verdict
from llmjury.pricing import PriceTable
from llmjury.prompts import PromptLibrary

pytest_plugins = ["pytester"]


def test_a_case_is_let_go_once_every_test_reading_it_has_reported(make_engine):
    engine = make_engine()
    planner = Planner(Jury(engine, engine.settings, PromptLibrary(), PriceTable.load()))
    runs: list[str] = []

    async def judge(case: Case, jury: Jury) -> Outcome:
        runs.append(case.id)
        return Outcome([Verdict(case_id=case.id, family="toy", judge=JudgeConfig(provider="offline"))])

    case = Case(id="c1", family="toy")
    key = f"{judge.__module__}.{judge.__qualname__}::c1"
    planner.start([(judge, case), (judge, case)])  # two tests read this case
    assert [v.case_id for v in planner.outcome(judge, case).verdicts] == ["c1"]
    assert [r["case_id"] for r in planner.finished()] == ["c1"]
    planner.release(key)  # the first test reported: the second still reads the planned outcome
    planner.outcome(judge, case)
    assert runs == ["c1"] and len(planner.finished()) == 1
    planner.release(key)  # both reported: nothing of the case is held any more
    assert planner.finished() == []
    planner.outcome(judge, case)  # a rerun after that runs the pipeline again
    assert runs == ["c1", "c1"]


@pytest.mark.e2e  # a pytest process of its own
def test_an_item_keeps_no_verdicts_once_its_teardown_report_carries_them(pytester):
    pytester.makeconftest("""
        from llmjury.session.item_verdicts import VERDICTS

        def pytest_sessionfinish(session):
            held = [item.nodeid for item in session.items if VERDICTS in item.stash]
            print(f"HELD={held}")
    """)
    pytester.makepyfile("""
        from llmjury import JudgeConfig, Verdict

        def test_one(record_verdict):
            record_verdict(Verdict(case_id="c1", family="toy", judge=JudgeConfig(provider="offline")))
    """)
    result = pytester.runpytest_subprocess("-n", "0", "-s", "--llm-reports", str(pytester.path / "reports"))
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*HELD=[[][]]"])  # after the progress dot: -s prints on its line
