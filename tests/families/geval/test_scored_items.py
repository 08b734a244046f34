"""The human ceiling and the recorded reference judges rest on the items the judge scored, and the
report says so: a judge that scored 5 of 12 rated items is set beside a ceiling on those 5."""

from __future__ import annotations

from llmjury.families.geval import FAMILY
from llmjury.judgement.verdicts import JudgeConfig, Verdict


def verdict(kind: str, provider: str, item: int, score: float | None, human: float) -> Verdict:
    attributes = {"dataset": "support", "item": f"t{item}", "context_id": f"c{item // 3}", "system_id": "bot",
                  "task": "response", "criterion": "overall", "human": human}
    result = None if score is None else {"score": score, "method": "annotator" if kind == "annotator" else "x"}
    return FAMILY.typed({"case_id": f"{kind}-{provider}-{item}", "family": "geval", "kind": kind,
                         "judge": JudgeConfig(provider=provider).model_dump(), "result": result,
                         "valid": score is not None, "error": None if score is not None else "unparseable: x",
                         "attributes": attributes})


def rated(judged: range) -> list[Verdict]:
    out: list[Verdict] = []
    for i in range(12):
        ratings = [1 + (i + k) % 5 for k in range(3)]
        for who, own in enumerate(ratings):
            others = [r for k, r in enumerate(ratings) if k != who]
            out.append(verdict("annotator", f"human:annotator-{who}", i, own, sum(others) / 2))
        out.append(verdict("recorded", "recorded:unieval", i, sum(ratings) / 3 + 0.1 * (i % 3), sum(ratings) / 3))
        out.append(verdict("judge", "openai:judge", i, (1 + (i * 7) % 5) if i in judged else None, sum(ratings) / 3))
    return out


def test_the_ceiling_and_references_rest_on_the_items_the_judge_scored():
    section = FAMILY.aggregate(rated(range(5)))
    ceiling = section.human_ceiling["support/response/overall"]
    assert (ceiling.items, ceiling.judged_items) == (5, 5)
    assert section.meta["recorded:unieval/support/response/overall"].items == 5
    judge = section.meta["openai:judge/support/response/overall"]
    assert (judge.items, judge.unscored) == (5, 7)
    assert section.judge_validity["openai:judge/support/response/overall"].human_ceiling_items == 5
    assert "| `support/response/overall` | 5 (the judge's) | 3 |" in FAMILY.markdown(section)


def test_without_a_judge_the_ceiling_rests_on_every_rated_item():
    section = FAMILY.aggregate([v for v in rated(range(0)) if v.kind == "annotator"])
    ceiling = section.human_ceiling["support/response/overall"]
    assert (ceiling.items, ceiling.judged_items) == (12, None)


def test_a_recorded_judge_sharing_no_item_with_the_live_judge_keeps_its_own_items():
    """Before: set aside whole, Chiang & Lee's recorded answers vanished from the offline suite's report."""
    live = [verdict("judge", "openai:judge", i, 1 + i % 5, 3.0) for i in range(5)]
    elsewhere = [verdict("recorded", "recorded:gpt-3.5", i, 1 + i % 4, 3.0) for i in range(20, 32)]
    section = FAMILY.aggregate([*live, *elsewhere])
    assert section.meta["recorded:gpt-3.5/support/response/overall"].items == 12
