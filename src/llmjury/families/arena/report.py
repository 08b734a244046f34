"""Arena aggregates: leaderboards with intervals, win-rate matrices and judges against people, all
from typed verdicts (seed 002's result and cache files are written by llmjury.families.arena.files).

Bradley-Terry is the primary rating (`arena.rating[model]`, `arena.rank[model]`); online Elo with
FastChat's parameters sits beside it (`arena.elo[model]`): online Elo depends on battle order, so
its value is the mean over ELO_ORDERS seeded random orders, and elo_rating.csv keeps the seed's
single pass in case-id order. Intervals (seed 0): BCa from BT_ROUNDS multinomial bootstrap rounds
and the leave-one-battle-out fits for Bradley-Terry, and ELO_ROUNDS resamples for Elo, each
averaged over ELO_ORDERS random orders as the point is (one estimator); ranks take the resamples'
own ranks as bounds (lower and higher order statistics).

Verdicts form one leaderboard per dataset and judge: `<dataset>/judge` (the live judge),
`<dataset>/human` (human labels) and `<dataset>/recorded:<judge>` (each recorded judge).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from llmjury.correlation import correlations, rank_correlation
from llmjury.families.arena import agreement
from llmjury.families.arena.llmbar import published
from llmjury.families.arena.ratings import (
    Battles,
    bootstrap_bradley_terry,
    bootstrap_elo,
    bradley_terry,
    empirical_win_rates,
    jackknife_bradley_terry,
    permuted_elo,
    predicted_win_rates,
    win_counts,
)
from llmjury.families.arena.results import (
    BATTLE,
    HUMAN,
    LLMBAR,
    PRD,
    RECORDED,
    AgainstHumans,
    ArenaSection,
    BattleResult,
    HumanComparison,
    JudgeValidity,
    Leaderboard,
    LLMBarFigures,
    LLMBarReplay,
    PRDValidity,
    Ranking,
    SelfPreference,
)
from llmjury.intervals import bca_interval, normal_interval, percentile_interval
from llmjury.judgement.verdicts import Verdict
from llmjury.model import Metric
from llmjury.results.agreement import JuryDecision, juror_agreement
from llmjury.results.repairs import repairs_by_judge, with_counts
from llmjury.stats import metric

Verdicts = Sequence[Verdict]
HIDDEN_FROM_TABLES = ("leaderboards", "llmbar", "prd")  # rendered by markdown() below
#: Bootstrap rounds of the Bradley-Terry fit (and its ranks).
BT_ROUNDS = 200
#: Bootstrap rounds of the Elo figure: at 1000 its interval's width over ten seeds spans 8% of its
#: mean (bench/coverage.py prints it); at 500 it spanned 15%, at 20 about 40%.
ELO_ROUNDS = 1000
#: Random orders each Elo estimate (the point and every round) averages over. One: the point is
#: one seeded random order and every round one random order of its resample, which keeps a run's
#: ten leaderboards under a second; averaging k orders would narrow both and cost k times as much.
ELO_ORDERS = 1
winner_of = agreement.winner_of
BT_METHOD = f"bradley-terry, bootstrap (BCa, {BT_ROUNDS} rounds)"
RANK_METHOD = "bradley-terry rank, bootstrap (lower and higher order statistics)"
ELO_METHOD = (f"online elo (k=4) over {ELO_ORDERS} seeded random order(s); normal interval from a bootstrap of "
              f"the same estimator, {ELO_ROUNDS} rounds")


def _metric(value: float | None, low: float | None, high: float | None, n: int, method: str, *,
            discrete: bool = False) -> Metric:
    return Metric.model_validate(metric(value, low, high, n, method, discrete=discrete))


def group_name(v: Verdict) -> str:
    """The leaderboard a verdict belongs to: its dataset, then the live judge, humans or the recorded judge."""
    who = {BATTLE: "judge", HUMAN: "human"}.get(v.kind, v.judge.provider)
    return f"{v.attributes.get('dataset')}/{who}"


def battles_of(verdicts: Verdicts) -> Battles:
    ordered = sorted(verdicts, key=lambda v: v.case_id)
    return Battles.from_rows([v.attributes["model_a"] for v in ordered], [v.attributes["model_b"] for v in ordered],
                             [winner_of(v) for v in ordered])  # type: ignore[misc]


def anchor_of(verdicts: Verdicts, models: list[str]) -> tuple[int, float] | None:
    text = next((v.attributes.get("anchor") for v in verdicts if v.attributes.get("anchor")), None)
    if not text:
        return None
    name, _, rating = text.partition("=")
    return (models.index(name), float(rating)) if name in models else None


def point_ratings(verdicts: Verdicts) -> tuple[Battles, tuple[int, float] | None, np.ndarray]:
    """The battles, their anchor and the Bradley-Terry point ratings a leaderboard starts from."""
    battles = battles_of(verdicts)
    anchor = anchor_of(verdicts, battles.models)
    return battles, anchor, bradley_terry(win_counts(battles), anchor=anchor)


def ordered(models: list[str], bt: np.ndarray) -> list[str]:
    """The models best first by their Bradley-Terry ratings: a leaderboard's `order`."""
    return [models[i] for i in np.argsort(-bt)]


def leaderboard(verdicts: Verdicts) -> Leaderboard:
    """Ratings, ranks, counts and matrices for one set of scored battles."""
    battles, anchor, bt = point_ratings(verdicts)
    models = battles.models
    bt_samples = bootstrap_bradley_terry(battles, rounds=BT_ROUNDS, anchor=anchor)
    bt_low, bt_high = bradley_terry_bounds(battles, bt, bt_samples, anchor)
    elo = permuted_elo(battles, permutations=ELO_ORDERS)
    elo_low, elo_high = normal_interval(elo, bootstrap_elo(battles, rounds=ELO_ROUNDS, orders=ELO_ORDERS))
    ranks = (-bt).argsort().argsort() + 1
    rank_samples = (-bt_samples).argsort(axis=1).argsort(axis=1) + 1
    rank_low, rank_high = percentile_interval(rank_samples, discrete=True)
    games = np.bincount(np.concatenate([battles.a, battles.b]), minlength=len(models))
    winners = [winner_of(v) or "" for v in verdicts]
    return Leaderboard(
        battles=len(battles),
        anchor="mean 1000" if anchor is None else f"{models[anchor[0]]}={anchor[1]:g}",
        rating={m: _metric(bt[i], bt_low[i], bt_high[i], games[i], BT_METHOD)
                for i, m in enumerate(models)},
        elo={m: _metric(elo[i], elo_low[i], elo_high[i], games[i], ELO_METHOD) for i, m in enumerate(models)},
        rank={m: _metric(ranks[i], rank_low[i], rank_high[i], games[i], RANK_METHOD, discrete=True)
              for i, m in enumerate(models)},
        order=ordered(models, bt),
        tie_rate=agreement.rate(sum(w.startswith("tie") for w in winners), len(winners)),
        win_rates=_matrix(empirical_win_rates(battles), models),
        predicted_win_rates=_matrix(predicted_win_rates(bt), models),
    )


def bradley_terry_bounds(battles: Battles, ratings: np.ndarray, samples: np.ndarray,
                         anchor: tuple[int, float] | None) -> tuple[list[float | None], list[float | None]]:
    """Each model's BCa bounds from the bootstrap rounds and the leave-one-battle-out fits: the
    maximum-likelihood rating of a model at either end is biased outwards over few battles, and the
    percentile interval around it covered 92% at a nominal 95% (bench/coverage.py)."""
    loo, weights = jackknife_bradley_terry(battles, anchor=anchor)
    found = [bca_interval(samples[:, i], float(ratings[i]), loo[:, i], items=len(battles), weights=weights)
             for i in range(len(ratings))]
    return [f[0] if f else None for f in found], [f[1] if f else None for f in found]


def _matrix(values: np.ndarray, models: list[str]) -> dict[str, dict[str, float | None]]:
    return {a: {b: (None if np.isnan(values[i, j]) or i == j else round(float(values[i, j]), 4))
                for j, b in enumerate(models)} for i, a in enumerate(models)}


def _correlation(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def ranking(judge_board: Leaderboard, human_board: Leaderboard) -> Ranking | None:
    """Spearman and Kendall correlation of two leaderboards over the models both rate."""
    models = sorted(set(judge_board.rating) & set(human_board.rating))
    if len(models) < 2:
        return None
    judge_r = [judge_board.rating[m].value for m in models]
    human_r = [human_board.rating[m].value for m in models]
    if len(set(judge_r)) < 2 or len(set(human_r)) < 2:  # a constant ranking correlates with nothing
        return Ranking(models=len(models))
    figures = rank_correlation(np.array(judge_r), np.array(human_r))
    return Ranking(models=len(models), **{key: _correlation(value) for key, value in figures.items()})


def against_humans(dataset: str, judge_name: str, judge: Verdicts, human: Verdicts, judge_board: Leaderboard,
                   human_board: Leaderboard) -> AgainstHumans:
    """One judge's verdicts and ranking beside the human labels of the same pairs (the two
    leaderboards are the ones the section already computed)."""
    judge_votes, human_votes = agreement.winners(judge), agreement.winners(human)
    orders = agreement.order_verdicts(judge)
    # the humans' order over the judge's battles: the point ratings alone, not a leaderboard's bootstraps
    same_battles, _, same_bt = point_ratings([v for v in human if v.case_id in judge_votes])
    return AgainstHumans(
        dataset=dataset, judge=judge_name, battles=len(judge_votes),
        agreement=agreement.agreement(judge_votes, human_votes),
        correct_both_orders=agreement.correct_both_orders(orders, human_votes) if orders else None,
        swap_consistency=agreement.swap_consistency(orders) if orders else None,
        ranking=ranking(judge_board, human_board), judge_order=judge_board.order,
        human_order=human_board.order, human_order_same_battles=ordered(same_battles.models, same_bt))


def human_comparison(dataset: str, groups: dict[str, list[Verdict]], boards: dict[str, Leaderboard]
                     ) -> HumanComparison | None:
    """The live judge and every recorded judge of a dataset against its human labels."""
    human_name = f"{dataset}/human"
    human, human_board = groups[human_name], boards[human_name]
    recorded = {name.removeprefix(f"{dataset}/"): against_humans(dataset, name.removeprefix(f"{dataset}/"),
                                                                   groups[name], human, boards[name], human_board)
                for name in sorted(groups) if name.startswith(f"{dataset}/") and groups[name][0].kind == RECORDED}
    live = f"{dataset}/judge"
    if live in groups:
        base = against_humans(dataset, groups[live][0].judge.provider, groups[live], human, boards[live], human_board)
        return HumanComparison(**dict(base), recorded=recorded or None)
    if not recorded:
        return None
    return HumanComparison(dataset=dataset, human_order=human_board.order, recorded=recorded)


def prd_section(groups: dict[str, list[Verdict]], boards: dict[str, Leaderboard]) -> PRDValidity:
    """Each PRD reviewer against the human majority, and its ranking against the humans'."""
    majority = agreement.human_majority(groups["prd/human"])
    human_board = boards["prd/human"]
    reviewers = {}
    for name, vs in sorted(groups.items()):
        if not name.startswith("prd/") or vs[0].kind != PRD:
            continue
        board = boards[name]
        models = sorted(board.rating)
        rho = correlations(np.array([board.rating[m].value for m in models]),
                           np.array([human_board.rating[m].value for m in models]))["spearman"]
        reviewers[name.removeprefix("prd/recorded:prd-")] = agreement.reviewer_agreement(
            vs, majority, board.order, _correlation(rho), len(models))
    return PRDValidity(human_majority_rule=agreement.PRD_MAJORITY_RULE, reference=agreement.PRD_REFERENCE,
                       reviewers=reviewers, human_order=human_board.order)


def llmbar_section(verdicts: Verdicts) -> dict[str, LLMBarFigures]:
    """Replayed LLMBar judges beside the published Acc. / Agr. per set, judge and strategy."""
    groups: dict[str, list[Verdict]] = defaultdict(list)
    for v in verdicts:
        a = v.attributes
        groups[f"{a['set']}/{a['llmbar_judge']}/{a['strategy']}"].append(v)
    out = {}
    for key, vs in sorted(groups.items()):
        reference = published(Path(vs[0].attributes["statistics"]))
        counts = agreement.llmbar_counts([v.result for v in vs if isinstance(v.result, LLMBarReplay)])
        out[key] = LLMBarFigures.model_validate({**counts, "published_accuracy_percent": reference["accuracy_percent"],
                                                 "published_agreement_percent": reference["agreement_percent"]})
    return out


def main_board(judged: list[str], groups: dict[str, list[Verdict]], boards: dict[str, Leaderboard]) -> str:
    """The leaderboard a report leads with: a judged dataset without human labels (seed 002's
    question battles) before one with them, then the one with the most battles."""
    def has_humans(name: str) -> bool:
        return name.replace("/judge", "/human") in groups

    return max(judged, key=lambda name: (not has_humans(name), boards[name].battles))


def aggregate(verdicts: Verdicts) -> ArenaSection:
    llmbar = [v for v in verdicts if v.kind == LLMBAR]
    groups: dict[str, list[Verdict]] = defaultdict(list)
    for v in verdicts:
        if v.kind != LLMBAR and v.valid and winner_of(v) is not None:
            groups[group_name(v)].append(v)
    groups = dict(sorted(groups.items()))
    boards = {name: leaderboard(vs) for name, vs in groups.items()}
    judged = [name for name in boards if name.endswith("/judge")]
    section = ArenaSection(leaderboards=boards, repairs=repairs_by_judge(verdicts))
    if judged:
        main = main_board(judged, groups, boards)
        board, battles = boards[main], groups[main]
        section.main = main
        section.rating, section.elo, section.rank = board.rating, board.elo, board.rank
        section.tie_rate = board.tie_rate
        section.longer_wins_rate = longer_wins(battles)
        section.self_preference = judge_self_preference(battles)
        asked_twice = [v.result for v in battles if isinstance(v.result, BattleResult) and v.result.counted_runs > 1]
        section.swap_consistency = agreement.rate(sum(r.consistent for r in asked_twice), len(asked_twice))
    datasets = sorted({name.split("/")[0] for name in groups if name.endswith("/human")})
    validity = JudgeValidity()
    for dataset in datasets:
        comparison = human_comparison(dataset, groups, boards)
        if comparison is not None:  # a dataset named like a fixed block (prd, llmbar) keeps apart from it
            setattr(validity, f"{dataset}_labels" if dataset in JudgeValidity.model_fields else dataset, comparison)
    if "prd/human" in groups and any(vs[0].kind == PRD for vs in groups.values()):
        validity.prd = prd_section(groups, boards)
    if llmbar:
        validity.llmbar = llmbar_section(llmbar)
    if validity.model_dump(exclude_none=True):
        section.judge_validity = validity
    juried = [JuryDecision(v.case_id, v.result.winner, tuple((j.judge, j.winner) for j in v.result.jurors))
              for name in judged for v in groups[name] if isinstance(v.result, BattleResult) and v.result.jurors]
    if juried:
        humans = {case: w for name in groups if name.endswith("/human") for case, w in
                  agreement.winners(groups[name]).items()}
        section.jury = juror_agreement(juried, humans or None)
    return section


def longer_wins(verdicts: Verdicts) -> Metric:
    """Among decisive battles between answers of different length, how often the longer won."""
    longer = total = 0
    for v in verdicts:
        winner = winner_of(v)
        la, lb = len(v.attributes.get("answer_a") or ""), len(v.attributes.get("answer_b") or "")
        if winner in ("model_a", "model_b") and la != lb:
            total += 1
            longer += (winner == "model_a") == (la > lb)
    return agreement.rate(longer, total)


def judge_self_preference(verdicts: Verdicts) -> SelfPreference | None:
    """When the judge's own model is also a contestant: how often it wins the battles it judges,
    beside how often the other contestants win theirs (half is a fair share against a random
    opponent; ties count half)."""
    judge_model = verdicts[0].judge.provider.partition(":")[2] if verdicts else ""
    own = [v for v in verdicts if judge_model in (v.attributes["model_a"], v.attributes["model_b"])]
    if not judge_model or not own:
        return None
    wins = sum(1.0 if winner_of(v) == ("model_a" if v.attributes["model_a"] == judge_model else "model_b")
               else 0.5 if (winner_of(v) or "").startswith("tie") else 0.0 for v in own)
    return SelfPreference(model=judge_model, own_battles_win_rate=_metric(
        wins / len(own), None, None, len(own), "share of its own battles the judge gave itself"))


def markdown(section: ArenaSection) -> str:
    lines: list[str] = []
    validity = section.judge_validity or JudgeValidity()
    if validity.llmbar:
        lines += ["### LLMBar judges replayed (Acc. / Agr., %): ours beside published", "",
                  "| set / judge / strategy | n | Acc. | published | Agr. | published | unparsed |",
                  "|---|---|---|---|---|---|---|"]
        for key, m in validity.llmbar.items():
            lines.append(f"| `{key}` | {m.positional_agreement.n} | {100 * (m.accuracy or 0):.1f} | "
                         f"{m.published_accuracy_percent:.1f} | {100 * (m.positional_agreement.value or 0):.1f} | "
                         f"{m.published_agreement_percent:.1f} | {m.unparsed} |")
        lines.append("")
    for name, board in section.leaderboards.items():
        lines += [f"### Leaderboard `{name}` ({board.battles} battles; Bradley-Terry anchored at {board.anchor})",
                  "", "| rank | model | Bradley-Terry [95% CI] | online Elo [95% CI] | battles |",
                  "|---|---|---|---|---|"]
        for model in board.order:
            bt, elo, rank = board.rating[model], board.elo[model], board.rank[model]
            lines.append(f"| {rank.value:.0f} | `{model}` | {bt.value:.0f} {_bounds(bt, '.0f')} | "
                         f"{elo.value:.0f} {_bounds(elo, '.0f')} | {bt.n} |")
        lines.append("")
    prd = validity.prd
    if prd:
        lines += ["### PRD reviewers against the human majority (ours | curators' reference)", "",
                  "| reviewer | agreement with ties | without ties | swap consistency | Spearman vs human ranking |",
                  "|---|---|---|---|---|"]
        for reviewer, r in prd.reviewers.items():
            ref = prd.reference.get(reviewer, (None, None, None))
            ours = (r.agreement_with_ties, r.agreement_without_ties, r.swap_consistency)
            cells = [f"{m.value:.3f} \\| {x if x is not None else 'n/a'}" for m, x in zip(ours, ref, strict=True)]
            spearman = "n/a" if r.spearman_with_human_ranking is None else f"{r.spearman_with_human_ranking:.3f}"
            lines.append(f"| {reviewer} | " + " | ".join(cells) + f" | {spearman} |")
        lines += ["", f"Human order: {', '.join(prd.human_order)}", ""]
    for dataset, comparison in (validity.model_extra or {}).items():
        lines += human_lines(dataset, comparison)
    return with_counts("\n".join(lines), section.repairs)


def human_lines(dataset: str, c: HumanComparison) -> list[str]:
    lines = [f"### Judges against human labels (`{dataset}`)", ""]
    if c.agreement is not None:
        order = "" if c.correct_both_orders is None else (
            f" Correct in both answer orders: {_pct(c.correct_both_orders)}; swap consistency "
            f"{_pct(c.swap_consistency)}.")
        ranked = "" if c.ranking is None else (
            f" Ranking of {c.ranking.models} systems: Spearman {_num(c.ranking.spearman)}, "
            f"Kendall {_num(c.ranking.kendall)}.")
        lines += [f"Per battle: {_pct(c.agreement.with_ties)} agreement with ties, {_pct(c.agreement.without_ties)} "
                  f"without ties.{order}{ranked}", "",
                  f"Human order: {', '.join(c.human_order)}  ", f"Judge order: {', '.join(c.judge_order)}", ""]
    if c.recorded:
        lines += ["| recorded judge | pairs | agreement with ties | without ties | correct in both orders | "
                  "swap consistency |", "|---|---|---|---|---|---|"]
        for name, r in c.recorded.items():
            lines.append(f"| `{name}` | {r.battles} | {_pct(r.agreement.with_ties)} | {_pct(r.agreement.without_ties)} "
                         f"| {_pct(r.correct_both_orders)} | {_pct(r.swap_consistency)} |")
        lines.append("")
    return lines


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _pct(m: Metric | None) -> str:
    if m is None or m.value is None:
        return "n/a"
    return f"{m.value:.1%} {_bounds(m, '.1%')} (n={m.n})"


def _bounds(m: Metric, spec: str) -> str:
    """`[low, high]`, or what stands in for an interval too few items could not give."""
    return "[too few to tell]" if m.low is None or m.high is None else f"[{m.low:{spec}}, {m.high:{spec}}]"

