"""Judges against people, pair by pair: agreement with and without ties, correct in both answer
orders, swap consistency; PRD's human-majority rule and LLMBar's published replay figures.

Shared by the live judge, recorded judges and the importers; pure functions of typed verdicts
or of plain vote tables, computed at report time (scipy is imported through `stats`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

from llmjury.families.arena.results import (
    Agreement,
    BattleResult,
    LLMBarReplay,
    PRDReplay,
    PRDReviewer,
    RecordedVerdict,
    Winner,
)
from llmjury.intervals import cluster_rate
from llmjury.judgement.verdicts import Verdict
from llmjury.model import Metric
from llmjury.stats import proportion

FLIP: dict[str, str] = {"model_a": "model_b", "model_b": "model_a"}
PRD_MAJORITY_RULE = "strict plurality of all annotator votes from both orders, else tie"
PRD_REFERENCE: dict[str, str | tuple[float, float, float]] = {
    "note": "PRD SOURCE.md, computed by the data's curators (not the paper): agreement with the human "
            "majority incl. ties / excl. ties / same verdict under order swap",
    "gpt4": (0.643, 0.793, 0.689), "gpt35": (0.627, 0.797, 0.691), "claude": (0.600, 0.734, 0.549),
    "bard": (0.549, 0.638, 0.369), "vicuna-13b": (0.500, 0.586, 0.374)}


def rate(successes: int, trials: int) -> Metric:
    """A share with its Wilson interval, as a typed Metric."""
    return Metric.model_validate(proportion(successes, trials))


def _tie(winner: str) -> str:
    return "tie" if "tie" in winner else winner


def agreement(first: Mapping[str, str], second: Mapping[str, str]) -> Agreement:
    """Agreement of two judges on the pairs both decided, as the MT-Bench paper reports it: with
    ties (any label containing "tie" is a tie) and without (pairs where either says tie dropped)."""
    pairs = [(_tie(first[k]), _tie(second[k])) for k in sorted(set(first) & set(second))]
    decisive = [(a, b) for a, b in pairs if a != "tie" and b != "tie"]
    return Agreement(with_ties=rate(sum(a == b for a, b in pairs), len(pairs)),
                     without_ties=rate(sum(a == b for a, b in decisive), len(decisive)))


def correct_both_orders(orders: Mapping[str, tuple[str | None, str | None]], labels: Mapping[str, str]) -> Metric:
    """Share of labelled pairs whose verdict matches the label in both answer orders (a tie label
    needs a tie in both); a missing or unparsed order counts as wrong."""
    keys = sorted(set(orders) & set(labels))
    right = sum(all(w is not None and _tie(w) == _tie(labels[k]) for w in orders[k]) for k in keys)
    return rate(right, len(keys))


def swap_consistency(orders: Mapping[str, tuple[str | None, str | None]]) -> Metric:
    """Share of pairs, among those judged in both orders, with the same verdict in both (exactly:
    `tie` and `tie (bothbad)` differ, as in the section's `swap_consistency`)."""
    both = [(ab, ba) for ab, ba in orders.values() if ab is not None and ba is not None]
    return rate(sum(ab == ba for ab, ba in both), len(both))


def order_verdicts(verdicts: Sequence[Verdict]) -> dict[str, tuple[str | None, str | None]]:
    """Per case, the verdict with answer_a shown first and with answer_b shown first."""
    out: dict[str, tuple[str | None, str | None]] = {}
    for v in verdicts:
        if isinstance(v.result, BattleResult | RecordedVerdict):
            ab, ba = v.result.by_order("ab"), v.result.by_order("ba")
            if ab is not None or ba is not None:
                out[v.case_id] = (ab, ba)
    return out


def winners(verdicts: Sequence[Verdict]) -> dict[str, str]:
    """Case id → decided winner of every scored verdict."""
    return {v.case_id: winner_of(v) for v in verdicts if v.valid and winner_of(v) is not None}  # type: ignore[misc]


def winner_of(verdict: Verdict) -> Winner | None:
    return getattr(verdict.result, "winner", None)


def canonical(model_1: str, model_2: str, winner: str) -> tuple[str, str, str]:
    """The pair in alphabetical order, with the winner flipped to match."""
    if model_1 <= model_2:
        return model_1, model_2, winner
    return model_2, model_1, FLIP.get(winner, winner)


def _pair_key(v: Verdict) -> tuple[tuple[str, str, str], str]:
    a, b, w = canonical(v.attributes["model_a"], v.attributes["model_b"], winner_of(v) or "")
    return (v.attributes["question"], a, b), w


def human_majority(human: Sequence[Verdict]) -> dict[tuple[str, str, str], str]:
    """PRD's rule, per unordered model pair and question: every annotator vote from both answer
    orders, mapped to the alphabetical order of the pair; strictly the most votes wins, else a tie."""
    votes: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    for v in human:
        key, w = _pair_key(v)
        votes[key][w] += 1
    majority = {}
    for key, counter in votes.items():
        ranked = counter.most_common()
        majority[key] = ranked[0][0] if len(ranked) == 1 or ranked[0][1] > ranked[1][1] else "tie"
    return majority


def reviewer_agreement(reviewer: Sequence[Verdict], majority: Mapping[tuple[str, str, str], str],
                       order: list[str], spearman: float | None, models: int) -> PRDReviewer:
    """A PRD reviewer against the human majority, counted per verdict (each order separately, as the
    curators' figures are), with ties and without (a tie on either side drops the verdict), and its
    swap consistency over the unordered pairs both orders of which it judged. A pair's two orders are
    one case: the intervals are over pairs (`llmjury.intervals.cluster_rate`), not over verdicts."""
    by_pair: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for v in reviewer:
        key, w = _pair_key(v)
        by_pair[key].append(w)
    judged = [(ws, majority[key]) for key, ws in by_pair.items() if key in majority]
    with_ties = cluster_rate([sum(w == m for w in ws) for ws, m in judged], [len(ws) for ws, _ in judged],
                             "agreement with ties")
    untied = [([w for w in ws if w != "tie"], m) for ws, m in judged if m != "tie"]
    without = cluster_rate([sum(w == m for w in ws) for ws, m in untied], [len(ws) for ws, _ in untied],
                           "agreement without ties")
    both = [ws for ws in by_pair.values() if len(ws) >= 2]
    parsed = [v.result.parsed_matches_recorded for v in reviewer if isinstance(v.result, PRDReplay)]
    return PRDReviewer(agreement_with_ties=Metric.model_validate(with_ties),
                       agreement_without_ties=Metric.model_validate(without),
                       swap_consistency=rate(sum(ws[0] == ws[1] for ws in both), len(both)),
                       parser_matches_recorded=rate(sum(parsed), len(parsed)), order=order,
                       spearman_with_human_ranking=spearman, models=models)


def llmbar_counts(results: Sequence[LLMBarReplay]) -> dict[str, Metric | float | int | None]:
    """Accuracy per order, Acc. (their mean), correct in both, and Agr., for one judge file.

    LLMBar counts two unparsed verdicts as agreeing (None == None); kept so the replay is exact,
    with the agreement among fully parsed pairs reported beside it. An unparsed verdict is wrong."""
    n = len(results)
    right = [r.original == r.gold for r in results]
    right_swapped = [r.swapped == r.gold for r in results]
    parsed = [r for r in results if r.original is not None and r.swapped is not None]
    return {
        "accuracy_original": rate(sum(right), n),
        "accuracy_swapped": rate(sum(right_swapped), n),
        "accuracy": (sum(right) + sum(right_swapped)) / (2 * n) if n else None,
        "correct_both": rate(sum(a and b for a, b in zip(right, right_swapped, strict=True)), n),
        "positional_agreement": rate(sum(r.original == r.swapped for r in results), n),
        "positional_agreement_parsed": rate(sum(r.original == r.swapped for r in parsed), len(parsed)),
        "unparsed": sum(r.original is None for r in results) + sum(r.swapped is None for r in results),
    }
