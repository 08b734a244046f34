"""One G-Eval judgement: evaluation steps (generated once per task x criterion, or given by hand),
the form-filling prompt, and a probability- or frequency-weighted score."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from llmjury.cases import slug
from llmjury.errors import ProviderError
from llmjury.families.geval.cases import GEvalCase
from llmjury.families.geval.criteria import CRITERIA
from llmjury.families.geval.datasets import FAMILY, shipped_steps, steps_folder
from llmjury.families.geval.options import GEvalOptions
from llmjury.families.geval.results import ScoreResult
from llmjury.judgement.geval_scoring import PARSER_VERSION
from llmjury.judgement.judges import geval_score
from llmjury.judgement.jury import Jury, Outcome
from llmjury.judgement.verdicts import JudgeConfig, Verdict
from llmjury.prompts import RenderedPrompt


async def evaluation_steps(jury: Jury, opts: GEvalOptions, task: str, criterion: str) -> tuple[str, str]:
    """(steps, where they came from). Hand-written steps win. Otherwise the steps are frozen: the
    seed's CoT prompt is asked once per judge x task x criterion x CoT prompt version, the answer
    is written to a reviewable file, and every later case and run reads that file, so the rubric
    never changes under the judge. The steps are part of every judge prompt, hence of its cache key."""
    if opts.steps_dir:
        path = Path(opts.steps_dir) / f"{task}-{criterion}.txt"
        if path.is_file():
            return path.read_text(encoding="utf-8").strip(), f"file:{path.name}"
    prompt = jury.render("geval/cot.j2", task=task, criterion=criterion, part="line")
    version = hashlib.sha256(prompt.text.encode()).hexdigest()[:12]  # the rendered prompt: includes count too
    judge = slug(jury.label("judge", FAMILY)).replace(":", "_")
    name = f"{task}-{criterion}@{version}.txt"
    frozen = steps_folder(opts, jury.settings) / judge / name
    shipped = shipped_steps(jury.settings)
    for folder in (frozen.parent, *([shipped / judge] if shipped is not None else [])):
        if (folder / name).is_file():
            return (folder / name).read_text(encoding="utf-8").strip(), f"frozen:{name}"
    completion = await jury.complete("judge", FAMILY, jury.request(prompt))
    steps = completion.answer()  # an empty or refused answer raises: it is never frozen as the rubric
    freeze(frozen, steps)
    return frozen.read_text(encoding="utf-8").strip() if frozen.is_file() else steps, f"frozen:{frozen.name}"


def freeze(path: Path, text: str) -> None:
    """Write `path` once: the first writer wins, even across xdist workers (hard link of a temp file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text + "\n", encoding="utf-8")
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)


def render_judge_prompt(jury: Jury, case: GEvalCase, steps: str) -> RenderedPrompt:
    item, criterion = case.item, CRITERIA[case.criterion]
    if case.task == "dialogue":
        dialogue = "\n".join(f"{speaker}: {text}" for speaker, text in item.whole_dialogue())
        return jury.render("geval/dialogue.j2", task="dialogue", criterion=criterion.name, steps=steps,
                           dialogue=dialogue, form=criterion.label)
    dialogue = "\n".join(f"{speaker}: {text}" for speaker, text in item.turns)
    fact = item.fact if criterion.name == "groundedness" else ""
    return jury.render("geval/response.j2", task="response", criterion=criterion.name, steps=steps,
                       dialogue=dialogue, response=item.response, fact=fact,
                       form=f"{criterion.label} ({criterion.low}-{criterion.high})")


async def judge_item(case: GEvalCase, jury: Jury) -> Outcome:
    opts = jury.options(FAMILY, GEvalOptions)
    criterion = CRITERIA[case.criterion]
    item = case.item
    attributes: dict[str, Any] = {"dataset": item.dataset, "item": item.id, "context_id": item.context_id,
                                  "system_id": item.system_id, "task": case.task, "criterion": case.criterion,
                                  "human": item.human.get(case.criterion), **item.extra}
    attributes.pop("source", None)
    provider = jury.label("judge", FAMILY)
    try:
        steps, steps_source = await evaluation_steps(jury, opts, case.task, case.criterion)
    except ProviderError as exc:
        return Outcome([Verdict(case_id=case.id, family=FAMILY, kind="judge", judge=JudgeConfig(provider=provider),
                                valid=False,
                                error=f"call failed: evaluation steps: {exc}", attributes=attributes)])
    prompt = render_judge_prompt(jury, case, steps)
    attributes["steps_source"] = steps_source
    attributes["steps_text"] = steps
    scored = await geval_score(jury, FAMILY, prompt, criterion.scale, scoring=opts.scoring, n=opts.n,
                               temperature=opts.temperature, top_p=opts.top_p, top_logprobs=opts.top_logprobs,
                               prefix=f"{FAMILY}.")
    result = None if scored.result is None else ScoreResult(**scored.result.model_dump())
    error, raw = scored.error, scored.raw
    prompt_tokens, completion_tokens = scored.prompt_tokens, scored.completion_tokens
    sampled = result is not None and result.method == "sampling"
    config = JudgeConfig(provider=provider, prompt=prompt.task, parser=PARSER_VERSION,
                         scoring=result.method if result is not None else opts.scoring,
                         n=opts.n if sampled else 1, **scored.sampling)
    common: dict[str, Any] = dict(case_id=case.id, family=FAMILY, kind="judge", judge=config, raw=raw,
                                  attributes=attributes, prompt_tokens=prompt_tokens,
                                  completion_tokens=completion_tokens, latency_s=scored.latency_s,
                                  cached=scored.cached, cost_usd=jury.cost(provider, prompt_tokens, completion_tokens),
                                  repaired=scored.repaired, repair_failed=scored.repair_failed)
    if result is None:
        return Outcome([Verdict(valid=False, error=error, cause=scored.cause, **common)], details={"steps": steps})
    return Outcome([Verdict(result=result, **common)], details={"steps": steps, "prompt": prompt.text})
