"""What changed, for the reviewer: a delta gate's row shows the change, the flipped cases follow the
decision, no report holds an absolute path, and report.html's comparison and per-case views show
every judged text as text (checked in headless Chromium)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, ClassVar

import pytest
from infrastructure import needs
from summaries import summary_of

from llmjury.family import Family, Metric, Plot, Result, Section
from llmjury.model import RunSummary
from llmjury.reporting.reports import FLIPS_IN_MARKDOWN, markdown, terminal_lines
from llmjury.results.decision import decide, gate_line
from llmjury.results.gates import Gate

PROJECT = Path(__file__).parent / "projects" / "polite"
INJECTED = ("<script>document.title='pwned'</script>"
            "<img src=x onerror=\"document.title='pwned'\">")


def metric(value: float, low: float | None = None, high: float | None = None, n: int = 60) -> dict[str, Any]:
    return {"value": value, "low": low, "high": high, "n": n, "method": "wilson"}


def compared_summary(changed: list[dict[str, Any]] | None = None, total: int | None = None) -> RunSummary:
    """A polite run compared with its baseline: the rate fell by 0.117 [-0.217, -0.017]."""
    family: dict[str, Any] = {"polite_rate": {
        "current": 0.7, "baseline": 0.817, "shared_cases": 60, "only_current": 0, "only_baseline": 0,
        "delta": {"value": -0.117, "low": -0.217, "high": -0.017, "n": 60, "method": "paired bootstrap",
                  "mde": 0.09}}}
    if changed is not None:
        family |= {"changed_cases": changed, "changed_total": total if total is not None else len(changed)}
    return summary_of({
        "run": {"id": "pr-run", "families": ["polite"], "judge": "offline", "cache_mode": "replay", "seed": 0,
                "workers": 1},
        "polite": {"cases": 60, "verdicts": 60, "unscored": 0, "unscored_reasons": {}, "judges": ["offline"],
                   "headline": ["polite_rate"], "polite_rate": metric(0.7, 0.58, 0.8)},
        "comparison": {"baseline": "baseline/run", "compared": True, "judges_differ": [],
                       "families": {"polite": family}}})


def flip(case_id: str, change: float) -> dict[str, Any]:
    return {"case_id": case_id, "metric": "polite_rate", "baseline": 1.0 if change < 0 else 0.0,
            "current": 0.0 if change < 0 else 1.0, "change": change}


# -- the Decision row of a delta gate -----------------------------------------------------------------
def test_a_gate_on_the_change_s_low_end_shows_the_change_its_interval_and_the_figure_that_decided():
    summary = compared_summary()
    summary.comparison["families"]["polite"]["polite_rate"]["delta"]["high"] = -0.067  # wholly below -0.05
    result = Gate.parse("polite.polite_rate.delta.low>=-0.05").check(summary)
    line = gate_line(result)
    assert (line.status, line.value, line.interval, line.threshold) == ("fail", "-0.117", "[-0.217, -0.067]", "-0.05")
    assert line.decided_by == "high end" and "even the interval's high end -0.067 >= -0.05 does not hold" in line.why
    row = next(r for r in markdown(summary, [result], {}).splitlines() if "delta.low" in r)
    assert "| -0.117 | [-0.217, -0.067] | -0.05 | high end |" in row


def test_an_interval_across_the_threshold_is_inconclusive_and_says_so():
    summary = compared_summary()
    line = gate_line(Gate.parse("polite.polite_rate.delta.low>=-0.05").check(summary))
    assert (line.status, line.value, line.decided_by) == ("inconclusive", "-0.117", "interval straddles")
    assert "[-0.217, -0.017] straddles -0.05" in line.why


def test_a_gate_decided_on_its_bound_alone_names_that_bound():
    summary = compared_summary()
    result = Gate.parse("polite.polite_rate.delta.low>=-0.05").check(summary, uncertain="pass")
    line = gate_line(result)
    assert (line.status, line.decided_by) == ("fail", "low end") and "low end -0.217 >= -0.05 does not hold" in line.why


def test_the_change_column_says_the_smallest_detectable_change():
    text = markdown(compared_summary(), [], {})
    assert "| -0.117 [-0.217, -0.017], 60 shared cases, detects ±0.09 |" in text


# -- the cases that flipped ---------------------------------------------------------------------------
def test_flipped_cases_follow_the_decision_worse_first_and_capped():
    changed = [flip(f"q{i:02d}", -1.0) for i in range(12)] + [flip("better", 1.0)]
    text = markdown(compared_summary(changed[::-1], total=14), [], {})
    head, _, rest = text.partition("### Cases that flipped: polite (14")
    assert "## Decision" in head and "judge:" in rest  # after the decision, before the run's details
    rows = [line for line in rest.split("judge:")[0].splitlines() if line.startswith("| `")]
    assert len(rows) == FLIPS_IN_MARKDOWN and all("(worse)" in row for row in rows)
    assert "10 of 14 shown; report.html lists 13." in rest


def test_the_case_view_lists_flipped_cases_worse_first_then_changed_then_the_rest():
    from llmjury.reporting.report_html import page

    summary = compared_summary([flip("q1", 1.0), flip("q2", -1.0)])
    current = [verdict("q0", "same", True), verdict("q1", "better", True), verdict("q2", "worse", False),
               verdict("q3", "other words", True)]
    baseline = [verdict("q0", "same", True), verdict("q1", "was", False), verdict("q2", "was", True),
                verdict("q3", "different", True)]
    text = page(summary, [], {}, current, baseline)
    shown = re.findall(r'<details (?:open )?class="case"[^>]*><summary><code>(\w+)</code>', text)
    assert shown == ["q2", "q1", "q3", "q0"]


def test_where_a_gate_says_lower_is_better_a_rise_is_listed_first():
    changed = [flip("fell", -1.0), flip("rose", 1.0)]
    summary = compared_summary(changed)
    gate = Gate.parse("polite.polite_rate.delta<=0.05").check(summary)
    flips = decide(summary, [gate]).flips[0]
    assert [(c.case_id, c.worse) for c in flips.cases] == [("rose", True), ("fell", False)]


def test_no_flipped_case_section_without_the_comparison_s_list():
    assert "Cases that flipped" not in markdown(compared_summary(), [], {})
    assert "Cases that flipped" not in markdown(compared_summary([]), [], {})


def test_a_case_id_cannot_break_the_markdown_table():
    text = markdown(compared_summary([flip("a|b`c\nd", -1.0)]), [], {})
    assert "| `a\\|b'c d` |" in text


# -- report.html ----------------------------------------------------------------------------------------
class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def verdict(case_id: str, answer: str, polite: bool | None, raw: str = "yes") -> dict[str, Any]:
    return {"case_id": case_id, "family": "polite", "kind": "polite",
            "judge": {"provider": "offline:heuristic", "prompt": "polite/judge@1"},
            "result": None if polite is None else {"polite": polite, "length": len(answer)},
            "valid": polite is not None, "error": None if polite is not None else "unparseable: 'maybe'",
            "raw": [raw], "attributes": {"question": f"question {case_id}", "answer": answer}}


def test_the_page_shows_each_case_s_texts_on_both_runs_and_the_change_against_each_gate():
    from llmjury.reporting.report_html import page

    summary = compared_summary([flip("q01", -1.0)])
    gates = [Gate.parse("polite.polite_rate.delta.low>=-0.05").check(summary)]
    current = [verdict("q00", "Sure, please.", True), verdict("q01", INJECTED, False, raw=INJECTED),
               verdict("q02", "hm", None, raw="maybe")]
    baseline = [verdict("q00", "Sure, please.", True), verdict("q01", "Yes please.", True)]
    text = page(summary, gates, {}, current, baseline, Path("/nowhere"))
    parser = _Elements()
    parser.feed(text)
    ids = {attrs.get("id") for _, attrs in parser.tags}
    assert {"gates", "headline", "comparison", "flipped-polite", "case-filter", "cases"} <= ids
    comparison = text[text.index('id="comparison"'):text.index("</table>", text.index('id="comparison"'))]
    assert "<svg" in comparison and "&gt;= -0.05" in comparison and "INCONCLUSIVE" in comparison
    cases = [attrs["data-flags"] for tag, attrs in parser.tags if attrs.get("class") == "case"]
    assert cases == ["flipped changed", "changed unscored", ""]  # flipped first, then changed, then the rest
    assert "question q01" in text and "Yes please." in text and "unparseable: &#39;maybe&#39;" in text
    assert "&#34;polite&#34;: false" in text  # the parsed verdict
    # every judged text is escaped: one script (the filter), no element carries an event handler
    assert [tag for tag, _ in parser.tags].count("script") == 1
    assert not [tag for tag, attrs in parser.tags if tag == "img" or any(k.startswith("on") for k in attrs)]
    assert "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;" in text


def test_the_page_lets_only_its_own_filter_script_run():
    from llmjury.reporting.report_cases import SCRIPT, script_hash
    from llmjury.reporting.report_html import page

    text = page(compared_summary(), [], {}, [verdict("q00", "ok", True)])
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', text)
    assert policy is not None and f"script-src '{script_hash()}'" in policy[1] and "default-src 'none'" in policy[1]
    assert f"<script>{SCRIPT}</script>" in text


class _Rated(Result):
    ok: bool


class _RatedSection(Section):
    rate: Metric | None = None


class _Drawn(Family):
    """A user's family with a figure of its own."""

    name = "drawn"
    results: ClassVar[Mapping[str, type[Result]]] = {"rated": _Rated}
    section = _RatedSection
    headline = ("rate",)

    def offline(self) -> Mapping[str, Any]:
        return {}

    def aggregate(self, verdicts: Sequence[Any]) -> _RatedSection:
        return _RatedSection()

    def figures(self, section: Section) -> list[Plot]:
        assert isinstance(section, _RatedSection)
        return [Plot("rate", f"rate {section.rate.value if section.rate else None}", "<svg><path d='M0 0'/></svg>")]


def test_a_family_s_own_figures_are_drawn_with_ids_under_its_name():
    from llmjury.reporting.report_html import page

    summary = summary_of({"run": {"id": "r", "families": ["drawn"]},
                          "drawn": {"cases": 1, "verdicts": 1, "unscored": 0, "rate": metric(0.5, 0.1, 0.9)}})
    text = page(summary, [], {"drawn": _Drawn()})
    assert '<figure id="drawn-rate"><svg>' in text and "rate 0.5" in text


# -- a compared run in a project: no absolute path, and the page in Chromium ----------------------------
@pytest.fixture
def compared(pytester: pytest.Pytester) -> pytest.RunResult:
    """The polite project run, then run again with a candidate prompt whose reply carries markup,
    compared with the first run given by its absolute path."""
    for path in PROJECT.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            target = pytester.path / path.relative_to(PROJECT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    args = ("-n", "0", "--llm-option", "polite.cases=6")
    pytester.runpytest_inprocess(*args).assert_outcomes(passed=6)
    first = pytester.path / "reports" / json.loads((pytester.path / "reports" / "latest" / "summary.json")
                                                   .read_text())["run"]["id"]
    (pytester.path / "prompts" / "polite" / "candidate.j2").write_text(f"You are curt.\n{INJECTED}\n")
    return pytester.runpytest_inprocess(*args, "--llm-baseline", str(first),
                                        "--llm-gate", "polite.polite_rate.delta.low>=-0.05")


def test_no_report_of_a_compared_run_holds_an_absolute_path(pytester, compared):
    root = str(pytester.path)
    run = pytester.path / "reports" / "latest"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["comparison"]["baseline"].startswith("reports/")
    assert summary["polite"]["polite_rate"]["value"] == 0  # the worse prompt was run and compared
    for name in ("summary.md", "summary.json", "report.html"):
        assert root not in (run / name).read_text(), name
    ours = "\n".join(compared.outlines).split(" llmjury ===")[1]  # pytest's own header names its rootdir
    assert root not in ours
    compared.stdout.fnmatch_lines(["reports: reports/* (summary.md, report.html)"])


def test_the_terminal_counts_changed_values_and_names_each_case_once(tmp_path):
    """A case is listed once for each metric whose value it changed: the line said `case(s)` of a
    count of values (9 of 8 cases) and repeated names (first: author, author, capital)."""
    changed = [flip("author", -1.0), {**flip("author", -1.0), "metric": "tone"}, flip("capital", -1.0),
               flip("river", -1.0)]
    lines = terminal_lines(compared_summary(changed), [], tmp_path / "reports" / "r1", {}, tmp_path)
    assert "polite: 4 case value(s) changed against the baseline (first: author, capital, river)" in lines


def test_terminal_paths_are_relative_to_the_root(tmp_path):
    summary = compared_summary()
    summary.comparison["baseline"] = str(tmp_path / "baseline" / "run")
    lines = terminal_lines(summary, [], tmp_path / "reports" / "r1", {}, tmp_path)
    assert "baseline baseline/run" in lines and lines[-1] == "reports: reports/r1 (summary.md, report.html)"


@pytest.mark.e2e  # starts a headless Chromium: seconds of CPU
@needs(shutil.which("chromium") is not None, "no Chromium (Debian package chromium) on this machine")
def test_markup_in_an_answer_or_the_judge_s_text_runs_nothing_in_chromium(pytester, compared):
    report = pytester.path / "reports" / "latest" / "report.html"
    assert "pwned" in report.read_text()  # the candidate's reply carried the markup into the page
    dom = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update", "--disable-sync",
                          f"--user-data-dir={pytester.path / 'profile'}", "--dump-dom", report.resolve().as_uri()],
                         check=True, capture_output=True, text=True, timeout=120).stdout
    assert 'data-filter="ready"' in dom  # the page's own filter script ran
    assert "<title>llmjury run " in dom and "pwned</title>" not in dom  # the injected ones did not
    assert "<img" not in dom and "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in dom


@pytest.mark.e2e  # starts a headless Chromium: seconds of CPU
@needs(shutil.which("chromium") is not None, "no Chromium (Debian package chromium) on this machine")
def test_a_link_s_filter_hides_the_other_cases_in_chromium(tmp_path):
    from llmjury.reporting.report_html import page

    current = [verdict("q00", "fine", True), verdict("q01", "hm", None, raw="maybe"), verdict("q02", "ok", True)]
    report = tmp_path / "report.html"
    report.write_text(page(compared_summary(), [], {}, current), encoding="utf-8")
    dom = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update", "--disable-sync",
                          f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", report.as_uri() + "#unscored=1"],
                         check=True, capture_output=True, text=True, timeout=120).stdout
    case = r'<details (?:open="" )?class="case" data-family="polite" data-flags="([^"]*)"( hidden="")?'
    shown = re.findall(case, dom)
    assert shown == [("unscored", ""), ("", ' hidden=""'), ("", ' hidden=""')]
    assert "1 of 3 cases shown" in dom


@pytest.mark.parametrize(("providers", "says", "never"), [
    (["offline:heuristic"], "**Offline run.** Every response and verdict here came from", "Offline judge"),
    # A team's own service judged by the heuristics: its responses did not come from them.
    (["http:http://127.0.0.1:8931/api/tutor", "offline:heuristic"],
     "**Offline judge.** Every verdict here came from llmjury's built-in offline heuristics, not from an LLM "
     "(the responses came from http:http://127.0.0.1:8931/api/tutor)", "Every response"),
])
def test_an_offline_judged_run_says_which_of_its_numbers_came_from_the_heuristics(providers, says, never):
    summary = summary_of({"run": {"offline": True}, "usage": {"providers": {p: {"calls": 1} for p in providers}}})
    text = markdown(summary, [], {})
    assert says in text and never not in text
