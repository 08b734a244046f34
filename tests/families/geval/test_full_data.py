"""Reproductions that need full upstream files the suite does not ship (their licenses are unclear).
They run when the shared data folder sits beside the repository, as in CI, and skip elsewhere."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from infrastructure import needs

from llmjury.datasets.dialogue_items import dstc9, topical_chat
from llmjury.families.geval.meta import meta_evaluate
from llmjury.families.geval.recorded import judge_config, recorded_verdict

SHARED = Path(__file__).resolve().parents[4] / "shared" / "data"
FULL_DSTC9 = SHARED / "dstc9" / "dstc9_data.json"
MODELS = SHARED / "dstc9" / "dstc9_models_and_flowscore.json"

needs_full_dstc9 = needs(FULL_DSTC9.is_file() and MODELS.is_file(), "the full DSTC9 file is not beside the repository")


@needs_full_dstc9
def test_flowscore_reproduces_dialevalmetrics_published_row():
    items = dstc9(FULL_DSTC9, MODELS)
    assert len(items) == 2200 and len({i.system_id for i in items}) == 11
    judge = judge_config("flowscore")
    meta = meta_evaluate([recorded_verdict(i.id, judge, i, "dialogue", "overall", -float(i.extra["flowscore"]))
                          for i in items])
    assert meta.pooled is not None and meta.system_level is not None
    got = [meta.pooled.pearson.value, meta.pooled.spearman.value,
           meta.system_level.pearson.value, meta.system_level.spearman.value]
    assert np.round(got, 4).tolist() == [0.1465, 0.1396, 0.9071, 0.9000]


USR = SHARED / "topical_chat_usr" / "tc_usr_data.json"


@needs(USR.is_file(), "USR's per-annotator file is not beside the repository")
def test_human_ceiling_is_computed_per_annotator_and_bounds_the_shipped_judges():
    from llmjury.families.geval.ceiling import annotator_verdicts
    from llmjury.families.geval.datasets import to_criteria
    from llmjury.families.geval.options import GEvalOptions
    from llmjury.families.geval.report import aggregate

    items = [to_criteria(item, USR, GEvalOptions()) for item in topical_chat(USR)]  # the full file as Topical-Chat
    verdicts = annotator_verdicts(items, "naturalness") + annotator_verdicts(items, "overall")
    ceiling = aggregate(verdicts).human_ceiling
    assert ceiling is not None
    overall = ceiling["topical_chat/response/overall"]
    # Five people, named by the file, each rated some of the 60 contexts (three a context).
    assert overall.annotators == 5 and overall.items == 360 and overall.pooled is not None
    # Humans agree with each other better than UniEval (0.633) does with them on overall quality.
    assert 0.633 < overall.pooled.pearson <= 1.0


CLOSER_LOOK = SHARED / "closer_look_topical_chat" / "results_topical_chat"


@needs(CLOSER_LOOK.is_dir(), "the recorded gpt-3.5 answers are not beside the repository")
@pytest.mark.parametrize("criterion", ["naturalness", "coherence", "engagingness", "groundedness"])
def test_closer_look_replay_reproduces_the_published_geval_row(criterion):
    import asyncio

    from llmjury.families.geval.closer_look import PUBLISHED, closer_look_cases, replay
    from llmjury.families.geval.options import GEvalOptions
    from llmjury.running.settings import Settings

    (case,) = [c for c in closer_look_cases(GEvalOptions(closer_look=str(CLOSER_LOOK)), Settings())
               if c.criterion == criterion and c.parser == "paper"]
    meta = meta_evaluate(asyncio.run(replay(case, None)).verdicts)
    assert meta.pooled is not None and meta.per_context is not None
    pearson_all, kendall_per_context = PUBLISHED[criterion]
    assert round(meta.pooled.pearson.value or 0, 3) == pearson_all
    assert round(meta.per_context.kendall.value or 0, 3) == kendall_per_context


def test_paper_parser_rule():
    from llmjury.families.geval.closer_look import paper_parse

    assert paper_parse("2") == 2.0 and paper_parse("Naturalness: 3") == 3.0
    assert paper_parse("Rating: 1-3\nRationale... Rating: 2") == 2.0
    assert paper_parse("no digits here") == 0.0  # the paper counts it as 0
    assert paper_parse("at least 40 % of the music") == 4.0 and paper_parse("0.75") == 0.0  # its quirks
