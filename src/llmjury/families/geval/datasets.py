"""The files geval reads, where they are found, and how their items become G-Eval items.

A path option the user leaves unset falls back to the copy a suite ships under its data root
(`llm_data`); a dataset the run needs with neither is an error naming the option to set.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from llmjury.datasets import dialogue_items
from llmjury.datasets.dialogue_items import DialogueItem
from llmjury.errors import ConfigError, DatasetError
from llmjury.families.geval.criteria import CRITERIA, criterion_of
from llmjury.families.geval.options import GEvalOptions
from llmjury.family import Dataset
from llmjury.loading import LoadCounter, LoadReport
from llmjury.running.settings import Settings

FAMILY = "geval"
DATASETS = (
    Dataset("topical_chat", "topical_chat", "Topical-Chat USR: 360 rated responses (UniEval's, seed 004's or "
            "USR's per-annotator form)", default="topical_chat_usr/topical_chat.json",
            formats=("unieval", "seed004", "usr")),
    Dataset("dstc9", "dstc9", "DSTC9 rated dialogues (original or seed 004's form)",
            default="dstc9/dstc9_sample.json", formats=("dstc9", "seed004")),
    Dataset("dstc9_models", "dstc9_models", "the chatbot and FlowScore of each full-file DSTC9 dialogue"),
    Dataset("items", "items", "your rated items (name them with geval.items_name)",
            formats=("jsonl", "json", "csv", "usr")),
    Dataset("usr_annotations", "usr_annotations", "USR's per-annotator ratings of Topical-Chat items "
            "(human ceiling)", default="usr_sample/tc_usr_data.json", formats=("usr",)),
    Dataset("unieval", "unieval", "UniEval's recorded scores on the Topical-Chat items",
            default="topical_chat_usr/unieval_predictions.json"),
    Dataset("closer_look", "closer_look", "gpt-3.5's recorded G-Eval answers (folder)",
            default="closer_look_sample"),
    Dataset("dep", "dep", "DEP's recorded ratings of DSTC9 and FED dialogues (folder)", default="dep"),
    Dataset("steps", "steps_dir", "hand-written evaluation steps, <task>-<criterion>.txt (folder)"),
)
#: Frozen evaluation steps (written once per judge, so not a dataset): under the data root, else beside the cache.
SHIPPED_STEPS = "geval/steps"
STEPS_BESIDE_CACHE = "geval-steps"
BY_NAME = {dataset.name: dataset for dataset in DATASETS}


def find(options: GEvalOptions, settings: Settings, name: str) -> Path | None:
    """The file or folder of `name`: the option's path, else the shipped copy under the data root."""
    return BY_NAME[name].path(options, settings)


def locate(options: GEvalOptions, settings: Settings, name: str) -> Path:
    """`find`, for a file the run cannot do without: an error names the option to set."""
    found = find(options, settings, name)
    if found is None:
        dataset = BY_NAME[name]
        where = " or llm_data (the folder a suite ships its data in)" if dataset.default else ""
        raise ConfigError(f"geval: no {dataset.description} to read: set --llm-option geval.{dataset.option}=PATH"
                          + where)
    return found


def steps_folder(options: GEvalOptions, settings: Settings) -> Path:
    """Where generated evaluation steps are frozen: the option, else beside the cache. A run never
    writes into the data root, whose shipped steps (`shipped_steps`) are only read."""
    if options.frozen_steps:
        return Path(options.frozen_steps)
    return settings.cache_path.parent / STEPS_BESIDE_CACHE


def shipped_steps(settings: Settings) -> Path | None:
    """The frozen steps a suite ships under its data root, read before any are generated."""
    return None if settings.data_root is None else settings.data_root / SHIPPED_STEPS


def load(dataset: str, options: GEvalOptions, settings: Settings) -> tuple[list[DialogueItem], LoadReport]:
    """One dataset's items, with human dimensions named by criterion, and what loading left out."""
    counter = LoadCounter()
    if dataset == "dstc9":
        source = locate(options, settings, "dstc9")
        models = find(options, settings, "dstc9_models")
        try:
            items = dialogue_items.dstc9(source, models)
        except DatasetError as exc:
            if models is None or exc.source != str(models):
                raise
            raise ConfigError(f"--llm-option geval.dstc9_models={options.dstc9_models}: {exc}") from None
    elif dataset == "topical_chat":
        source = locate(options, settings, "topical_chat")
        items = dialogue_items.topical_chat(source, counter)
        annotations = find(options, settings, "usr_annotations")
        if annotations is not None and (options.usr_annotations or annotations.exists()):
            items = with_annotations(items, annotations, options)
    elif dataset == options.items_dataset:
        source = locate(options, settings, "items")
        items = dialogue_items.rated_items(source, dataset, counter)
    else:
        raise ConfigError(f"geval.datasets: unknown dataset {dataset!r}")
    items = [to_criteria(item, source, options) for item in items]
    if not items:
        raise DatasetError(str(source), None, "no items left to judge" + _left_out(counter))
    return items, counter.report(FAMILY, dataset, source, len(items))


def _left_out(counter: LoadCounter) -> str:
    return f" (left out: {dict(counter.dropped)})" if counter.dropped else ""


def to_criteria(item: DialogueItem, source: Path, options: GEvalOptions) -> DialogueItem:
    """The item with its dimensions renamed to the criteria they measure; a dimension G-Eval cannot
    judge is an error listing the file's dimensions and the criteria (and how to map them)."""
    mapping = options.dimensions
    names = set(item.human) | set(item.ratings) | set(item.recorded)
    criteria = {name: criterion_of(name, mapping) for name in names}
    strangers = sorted(name for name, criterion in criteria.items() if criterion is None)
    if strangers:
        raise DatasetError(str(source), item.id, f"dimensions {strangers} are no G-Eval criterion; the file rates "
                                                 f"{sorted(names)}, G-Eval judges {list(CRITERIA)}: rename them or "
                                                 "map them with --llm-option geval.items_dimensions="
                                                 f"{strangers[0]}=<criterion>")
    named = {name: criterion for name, criterion in criteria.items() if criterion is not None}  # all, as checked
    return replace(item, human={named[k]: v for k, v in item.human.items()},
                   ratings={named[k]: v for k, v in item.ratings.items()},
                   recorded={named[k]: v for k, v in item.recorded.items()})


def with_annotations(items: list[DialogueItem], annotations: Path, options: GEvalOptions) -> list[DialogueItem]:
    """Topical-Chat items with USR's per-annotator ratings attached where the same response to the same
    context from the same system is rated there (the shipped sample covers 10 of the 60 contexts)."""
    rated = {(i.extra.get("source"), i.response.strip(), i.system_id): i
             for i in dialogue_items.rated_items(annotations, "usr_annotations")}
    out, matched = [], 0
    for item in items:
        other = rated.get((item.extra.get("source"), item.response.strip(), item.system_id))
        if other is None:
            out.append(item)
            continue
        matched += 1
        out.append(replace(item, ratings={**item.ratings, **to_criteria(other, annotations, options).ratings}))
    if rated and not matched:
        raise DatasetError(str(annotations), None, "none of its items is a Topical-Chat item (same context, "
                                                   "response and system): to judge another corpus's rated "
                                                   "items, give them as --llm-option geval.items=PATH")
    return out
