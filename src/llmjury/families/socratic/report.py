"""Socratic aggregates: seed 000's tables, seed 003's JSON, intervals, position bias, and the
judge's agreement with people's preferences (overall and per annotated dimension)."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any, Final

from llmjury.cases import slug
from llmjury.families.socratic.identical import counted_once
from llmjury.families.socratic.results import (
    AspectRates,
    Comparison,
    DimensionAgreement,
    HumanAgreement,
    HumanLabel,
    HumanPreferenceResult,
    JudgedPair,
    PairwiseResult,
    RobustEvaluation,
    Side,
    SignTest,
    SocraticSection,
)
from llmjury.judgement.verdicts import Verdict
from llmjury.majority import robust_verdict
from llmjury.model import Metric
from llmjury.results.agreement import JurorAgreement, JuryDecision, juror_agreement
from llmjury.results.repairs import repairs_by_judge, with_counts

OURS: Final = "ours"
BASELINE: Final = "baseline"
TIE: Final = "tie"
HUMAN_SIDE: dict[Side, HumanLabel] = {OURS: "a", BASELINE: "b", TIE: "tie"}
Pair = tuple[Verdict, JudgedPair]


def _metric(value: dict[str, Any]) -> Metric:
    return Metric.model_validate(value)


def proportion(successes: int, trials: int) -> Metric:
    from llmjury.stats import proportion as wilson  # report time only: keeps scipy out of plugin start-up

    return _metric(wilson(successes, trials))


def pairwise(verdicts: Sequence[Verdict], source: str) -> list[tuple[Verdict, PairwiseResult]]:
    return [(v, v.result) for v in verdicts if isinstance(v.result, PairwiseResult) and v.result.source == source]


def aggregate(verdicts: Sequence[Verdict]) -> SocraticSection:
    """The family's section: simulated comparison at the top, then MathDial, pre-collected
    replies and the judge against people, each present only when its verdicts are."""
    simulated, real, collected = (pairwise(verdicts, s) for s in ("simulated", "mathdial", "responses"))
    human = [(v, v.result) for v in verdicts if isinstance(v.result, HumanPreferenceResult)]
    section = comparison(simulated, subjects=True, seed003=True) if simulated else Comparison()
    return SocraticSection(
        **dict(section),
        mathdial=comparison(real, subjects=False, seed003=False) if real else None,
        responses=comparison(collected, subjects=False, seed003=True) if collected else None,
        judge_validity=agreement_with_humans(human) if human else None,
        repairs=repairs_by_judge(verdicts),
    )


def comparison(pairs: Sequence[tuple[Verdict, PairwiseResult]], *, subjects: bool, seed003: bool) -> Comparison:
    """Win, loss and tie rates with intervals, a sign test, confidence, position and length bias,
    each subset text counted once (`identical`)."""
    pairs, identical = counted_once(pairs)
    valid = [(v, r) for v, r in pairs if v.valid]
    winners = Counter(r.winner for _, r in valid)
    confidence = Counter(r.confidence for _, r in valid)
    n = len(valid)
    names = {r.dataset for _, r in pairs}
    return Comparison(
        dataset=", ".join(sorted(names)) if names != {"simulated"} else None,
        identical=identical or None,
        ours_name=pairs[0][1].ours_name if pairs else None,
        baseline_name=pairs[0][1].baseline_name if pairs else None,
        win_rate=proportion(winners[OURS], n),
        baseline_win_rate=proportion(winners[BASELINE], n),
        tie_rate=proportion(winners[TIE], n),
        decisive_win_rate=proportion(winners[OURS], winners[OURS] + winners[BASELINE]),
        sign_test=sign_test(winners[OURS], winners[BASELINE]),
        unanimous_rate=proportion(confidence["unanimous"], n),
        final_verdicts={OURS: winners[OURS], BASELINE: winners[BASELINE], TIE: winners[TIE]},
        confidence={k: confidence[k] for k in ("unanimous", "majority", "no_consensus")},
        counted_runs={str(k): c for k, c in sorted(Counter(r.counted_runs for _, r in valid).items())},
        position_consistency=position_consistency([r for _, r in valid]),
        longer_wins_rate=longer_wins([r for _, r in valid]),
        length_controlled_win_rate=length_controlled([r for _, r in valid]),
        by_subject=by_subject(valid) if subjects else None,
        seed003=seed003_file(pairs) if seed003 else None,
        aspects=aspect_rates([r for _, r in valid]) or None,
        jury=jury_agreement(valid) or None,
    )


def sign_test(wins: int, losses: int) -> SignTest:
    from llmjury.stats import sign_test as binomial

    return SignTest.model_validate(binomial(wins, losses))


def by_subject(valid: Sequence[tuple[Verdict, PairwiseResult]]) -> dict[str, Metric]:
    groups: dict[str, list[PairwiseResult]] = {}
    for _, r in valid:
        groups.setdefault(str(r.subject), []).append(r)
    return {s: proportion(sum(r.winner == OURS for r in rs), len(rs)) for s, rs in sorted(groups.items())}


def position_consistency(results: Sequence[JudgedPair]) -> Metric:
    """Does the preference survive a swap? Per case, the share of its pairs of runs by one juror
    that put the two replies in opposite slots and agree; then the mean over cases. Runs ABA give
    two such pairs sharing a run, so pairs are not independent: the interval is over cases (Wilson
    where every case has one pair, a t interval over per-case shares otherwise), n counts cases."""
    from llmjury.intervals import case_rate

    shares: list[float] = []
    single = True
    for result in results:
        runs = [run for run in result.runs if run.preferred is not None]
        agree = pairs = 0
        for i, first in enumerate(runs):
            for second in runs[i + 1:]:
                if first.juror == second.juror and first.ours_position != second.ours_position:
                    pairs += 1
                    agree += first.preferred == second.preferred
        if pairs:
            shares.append(agree / pairs)
            single = single and pairs == 1
    if single:
        return proportion(int(sum(shares)), len(shares))
    return _metric(case_rate(shares, "position consistency"))


def longer_wins(results: Sequence[JudgedPair]) -> Metric:
    """Among decisive verdicts between replies of different length, how often the longer won."""
    longer = total = 0
    for r in results:
        ours, base = r.ours_chars, r.baseline_chars
        if r.winner in (OURS, BASELINE) and ours is not None and base is not None and ours != base:
            total += 1
            longer += (r.winner == OURS) == (ours > base)
    return proportion(longer, total)


def length_controlled(results: Sequence[JudgedPair]) -> Metric:
    """Our win rate had both replies been equally long (ties count half)."""
    import numpy as np

    from llmjury.stats import length_controlled_rate

    rows = [(r, ours - base) for r in results
            if (ours := r.ours_chars) is not None and (base := r.baseline_chars) is not None]
    outcome = np.array([{OURS: 1.0, BASELINE: 0.0}.get(r.winner or TIE, 0.5) for r, _ in rows])
    diff = np.array([d for _, d in rows], dtype=float)
    return _metric(length_controlled_rate(outcome, diff))


def aspect_rates(results: Sequence[PairwiseResult]) -> dict[str, AspectRates]:
    rates: dict[str, AspectRates] = {}
    for aspect in sorted({a for r in results for a in (r.aspects or {})}):
        decided = [v for r in results if (v := (r.aspects or {}).get(aspect)) is not None]
        wins = Counter(x.winner for x in decided)
        rates[aspect] = AspectRates(win_rate=proportion(wins[OURS], len(decided)),
                                    baseline_win_rate=proportion(wins[BASELINE], len(decided)),
                                    tie_rate=proportion(wins[TIE], len(decided)))
    return rates


def jury_agreement(pairs: Sequence[tuple[Verdict, JudgedPair]], human: dict[str, str] | None = None
                   ) -> dict[str, JurorAgreement]:
    """Per juror, agreement with the jury (and with people), on the pairs a jury judged."""
    return juror_agreement([JuryDecision(v.case_id, r.winner, tuple((j.judge, j.winner) for j in r.jurors))
                            for v, r in pairs if r.jurors], human)


def per_run_labels(pairs: Sequence[tuple[Verdict, PairwiseResult]]) -> list[dict[str, str | None]]:
    """One dict per judge run: subset id → that run's label (None where the run was unscored)."""
    k = max((len(r.runs) for _, r in pairs), default=0)
    runs: list[dict[str, str | None]] = [{} for _ in range(k)]
    for v, r in pairs:
        labels = {OURS: r.ours_name, BASELINE: r.baseline_name, TIE: TIE}
        for i, run in enumerate(r.runs):
            runs[i][v.case_id] = labels[run.preferred] if run.preferred else None
    return runs


def seed003_file(pairs: Sequence[tuple[Verdict, PairwiseResult]]) -> RobustEvaluation:
    """Seed 003's robust-evaluation file for one comparison's verdicts."""
    first = pairs[0][1]
    return RobustEvaluation.model_validate(robust_summary(per_run_labels(pairs), total_subsets=len(pairs),
                                                          ours=first.ours_name, baseline=first.baseline_name))


def robust_summary(runs: Sequence[dict[str, str | None]], *, total_subsets: int | None = None,
                   ours: str = OURS, baseline: str = BASELINE) -> dict[str, Any]:
    """Seed 003's output from any number of single-run evaluations (subset id → label or None),
    where `ours` and `baseline` are the labels the runs use for the two systems.

    Rates are over successful evaluations; `unanimous_agreement_rate` is over all subsets, as in
    the seed's example (150 of 200).
    """
    subsets = sorted({s for run in runs for s in run})
    aggregated: dict[str, Any] = {}
    for subset in subsets:
        votes = [run.get(subset) for run in runs if subset in run]
        counted = [v for v in votes if v is not None]
        majority = robust_verdict(counted)
        if majority is None:
            continue
        aggregated[subset] = {"verdicts": counted, "verdict_counts": dict(Counter(counted)),
                              "final_verdict": majority.winner, "confidence": majority.confidence}
    total = total_subsets if total_subsets is not None else len(subsets)
    finals = Counter(a["final_verdict"] for a in aggregated.values())
    confidences = Counter(a["confidence"] for a in aggregated.values())
    done = len(aggregated)
    return {
        "summary": {
            "evaluation_completed": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "num_evaluation_runs": len(runs),
            "total_subsets": total,
            "successful_evaluations": done,
            "final_verdict_distribution": dict(finals),
            "confidence_distribution": dict(confidences),
            "ours_win_rate": _rate(finals[ours], done),
            "baseline_win_rate": _rate(finals[baseline], done),
            "tie_rate": _rate(finals[TIE], done),
            "unanimous_agreement_rate": _rate(confidences["unanimous"], total),
        },
        "aggregated_results": aggregated,
    }


def _rate(count: int, done: int) -> float | None:
    """A rate of the seed's JSON; null (not 0.0) when nothing was evaluated."""
    return round(count / done, 3) if done else None


def label(dataset: str) -> str:
    """A dataset's name as a report shows it: `MRBench_V1` → `MRBench V1`."""
    return dataset.replace("_", " ")


def agreement_with_humans(pairs: Sequence[tuple[Verdict, HumanPreferenceResult]]) -> HumanAgreement:
    """The judge against people's preference (tutor A in the "ours" slot), overall and per dimension."""
    decided = [(v, r, HUMAN_SIDE[winner]) for v, r in pairs if v.valid and (winner := r.winner) is not None]
    valid = [(v, r) for v, r, _ in decided]
    judged = [(side, r.human) for _, r, side in decided]
    dimensions = list(dict.fromkeys(d for _, r in pairs for d in r.human_by_dimension))
    humans = {v.case_id: {"a": OURS, "b": BASELINE, "tie": TIE}[r.human] for v, r in valid}
    names = ", ".join(sorted({label(r.dataset) for _, r in pairs}))
    return HumanAgreement(
        jury=jury_agreement(valid, humans) or None,
        dataset=f"{names} (human annotations; preference = higher summed annotation score)",
        **agreement(judged),
        judge_tie_rate=proportion(sum(j == "tie" for j, _ in judged), len(judged)),
        position_consistency=position_consistency([r for _, r in valid]),
        chance_agreement_with_ties=_chance(judged),
        dimensions=dimensions,
        by_dimension={d: DimensionAgreement(**agreement([(side, r.human_by_dimension[d])
                                                         for _, r, side in decided if d in r.human_by_dimension]))
                      for d in dimensions},
    )


def agreement(judged: Sequence[tuple[str, str]]) -> dict[str, Metric]:
    """(judge, people) labels → agreement with ties (three-way), without ties, and the people's tie rate."""
    decisive = [(j, h) for j, h in judged if j != "tie" and h != "tie"]
    return {"agreement_with_ties": proportion(sum(j == h for j, h in judged), len(judged)),
            "agreement_without_ties": proportion(sum(j == h for j, h in decisive), len(decisive)),
            "human_tie_rate": proportion(sum(h == "tie" for _, h in judged), len(judged))}


def _chance(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Agreement expected if judge and humans were independent with these marginals."""
    if not pairs:
        return None
    judge, human = Counter(j for j, _ in pairs), Counter(h for _, h in pairs)
    n = len(pairs)
    return sum(judge[c] * human[c] for c in ("a", "b", "tie")) / (n * n)


def markdown(section: SocraticSection) -> str:
    """Seed 000's two tables for each comparison, then the judge against people."""
    lines: list[str] = []
    if section.final_verdicts is not None:
        lines += tables(section)
    for title, part in (("Real dialogues", section.mathdial), ("Pre-collected replies", section.responses)):
        if part is not None and part.final_verdicts is not None:
            lines += ["", f"### {title}: {part.dataset}", "", *tables(part)]
    jv = section.judge_validity
    if jv is not None:
        chance = jv.chance_agreement_with_ties
        names = jv.dataset.split(" (", 1)[0]
        lines += ["", f"### Judge validity ({names} human preferences)", "",
                  f"Agreement with humans: {_pct(jv.agreement_with_ties)} with ties, "
                  f"{_pct(jv.agreement_without_ties)} without ties; chance level with ties "
                  f"{'n/a' if chance is None else f'{chance:.1%}'}; position consistency "
                  f"{_pct(jv.position_consistency)}."]
        if jv.by_dimension:
            lines += ["", "| annotated dimension | agreement with ties | without ties | human ties |",
                      "|---|---|---|---|"]
            lines += [f"| {d} | {_pct(a.agreement_with_ties)} | {_pct(a.agreement_without_ties)} | "
                      f"{_pct(a.human_tie_rate)} |" for d, a in jv.by_dimension.items()]
    return with_counts("\n".join(lines), section.repairs)


def _ratio(count: int, total: int) -> str:
    """A table's ratio; n/a, not 0.0%, when nothing was scored."""
    return f"{count / total:.1%}" if total else "n/a"


def tables(part: Comparison) -> list[str]:
    v, c, st = part.final_verdicts or {}, part.confidence or {}, part.sign_test
    n = sum(v.values())
    label = {OURS: part.ours_name or OURS, BASELINE: part.baseline_name or BASELINE, TIE: TIE}
    lines = ["| | wins | ratio |", "|---|---|---|"]
    lines += [f"| {label[key]} | {v.get(key, 0)} | {_ratio(v.get(key, 0), n)} |" for key in (OURS, BASELINE, TIE)]
    total = sum(c.values())
    lines += ["", "| verdict confidence | count | ratio |", "|---|---|---|"]
    lines += [f"| {text} | {c.get(key, 0)} | {_ratio(c.get(key, 0), total)} |" for key, text in
              (("unanimous", "unanimous"), ("majority", "majority (two agree)"), ("no_consensus", "no consensus"))]
    if st is not None:
        p = "n/a" if st.p_value is None else f"{st.p_value:.3g}"
        lines += ["", f"Sign test on decisive verdicts: {st.wins} wins, {st.losses} losses, p = {p}."]
    if part.identical:
        merged = "; ".join(f"{kept} = {', '.join(others)}" for kept, others in part.identical.items())
        lines += ["", f"Counted once: {sum(map(len, part.identical.values()))} subsets repeat another's dialogue "
                      f"and replies word for word ({merged})."]
    return lines


def _pct(metric: Metric) -> str:
    if metric.value is None:
        return "n/a"
    ci = "[too few to tell]" if metric.low is None or metric.high is None else f"[{metric.low:.1%}, {metric.high:.1%}]"
    return f"{metric.value:.1%} {ci} (n={metric.n})"


def files(section: SocraticSection, verdicts: Sequence[Verdict]) -> dict[str, str]:
    """Seed 003's robust-evaluation JSON and one seed-style file per judge run, for the simulated
    comparison and for pre-collected replies (named after their dataset)."""
    out: dict[str, str] = {}
    for prefix, part, source in (("socratic", section, "simulated"),
                                 (f"socratic_{slug(section.responses.dataset or 'responses')}" if section.responses
                                  else "", section.responses, "responses")):
        if part is None or part.seed003 is None:
            continue
        out[f"{prefix}_robust_evaluation.json"] = json.dumps(part.seed003.model_dump(mode="json"), indent=2,
                                                             ensure_ascii=False)
        for i, run in enumerate(per_run_labels(pairwise(verdicts, source)), 1):
            out[f"{prefix}_run_{i}.json"] = json.dumps({"run": i, "evaluations": run}, indent=2, ensure_ascii=False)
    return out
