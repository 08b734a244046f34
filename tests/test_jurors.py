from __future__ import annotations

import pytest

from llmjury.chat import chat
from llmjury.errors import ConfigError
from llmjury.judgement.judging import ask_judge
from llmjury.judgement.jury import Jury
from llmjury.jurors import JurySpec
from llmjury.pricing import PriceTable
from llmjury.prompts import PromptLibrary
from llmjury.results.agreement import JurorAgreement, JuryDecision, juror_agreement


def test_jury_specs_number_repeated_jurors_across_the_jury():
    jurors = JurySpec.parse("openai:gpt-4o;base_url=http://x+gemini:flash*2+openai:gpt-4o;base_url=http://x").jurors
    assert [j.label for j in jurors] == ["openai:gpt-4o#1", "gemini:flash#1", "gemini:flash#2", "openai:gpt-4o#2"]
    assert [j.index for j in jurors] == [0, 0, 1, 1]
    assert [j.label for j in JurySpec.parse("offline").jurors] == ["offline:heuristic"]
    for bad in ("openai:a+", "openai:a*two", "openai:a*0"):
        with pytest.raises(ConfigError):
            JurySpec.parse(bad)


def test_jurors_sharing_a_model_draw_distinct_samples(make_engine, openai_server):
    engine = make_engine(roles={"judge": f"openai:m;base_url={openai_server.base_url}*2"})
    jury = Jury(engine, engine.settings, PromptLibrary(), PriceTable.load())
    first, second = jury.jurors("judge", "toy")

    async def both():
        a = await ask_judge(jury, "toy", [chat(("user", "q"))], str, juror=first)
        b = await ask_judge(jury, "toy", [chat(("user", "q"))], str, juror=second)
        return a, b

    engine.run(both())
    # Juror 2 needed a sample index juror 1 never used: a second call, not a cache hit.
    assert len(openai_server.requests) == 2


def test_agreement_with_the_jury_and_with_humans():
    decisions = [JuryDecision("c1", "ours", (("j1", "ours"), ("j2", "baseline"))),
                 JuryDecision("c2", "ours", (("j1", "ours"), ("j2", "ours"))),
                 JuryDecision("c3", "tie", (("j1", None), ("j2", "tie")))]
    out = juror_agreement(decisions, {"c1": "baseline", "c2": "ours"})
    assert isinstance(out["j1"], JurorAgreement)
    assert (out["j1"].agreement_with_jury.value, out["j1"].agreement_with_jury.n) == (1.0, 2)
    assert (out["j2"].agreement_with_jury.value, out["j2"].agreement_with_jury.n) == (2 / 3, 3)
    assert out["j1"].agreement_with_humans.value == 0.5 and out["j2"].agreement_with_humans.value == 1.0
    assert juror_agreement(decisions)["j1"].agreement_with_humans is None
