"""`llmjury replay geval PATH`: recorded judge scores into typed verdicts, with no model call.

Shapes, told apart by content:

* rated items (README "Rated items") with a judge's saved scores in `judge_<dimension>` fields or a
  `judge_scores` object (the judge named by a `judge` field): one `recorded` verdict per item and
  scored criterion, plus the human ceiling on the same items where they have several annotators;
* Chiang & Lee's recorded G-Eval answers (`gpt3.5_<dim>_<mode>.json[.xz]`: 20 sampled answers per
  item), parsed with the paper's rule and with ours;
* UniEval's `predict_scores` file;
* a run's `verdicts.jsonl.gz` or plain `verdicts.jsonl` (its geval verdicts, re-aggregated);
* a folder of published outputs: each data file in it by the shapes above (Chiang & Lee's folder of
  `gpt3.5_<dim>_geval.json[.xz]` files, as `geval.closer_look` names it), and DEP's CSVs
  (`dstc9_dep_step2_eval.csv`, `fed_dep_step2_eval.csv`, as `geval.dep` names their folder);
  notices, licenses and READMEs are passed over, and a data file of no shape is named.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeAlias

from llmjury.cases import slug
from llmjury.datasets import dialogue_items
from llmjury.datasets.files import read_jsonl, read_records
from llmjury.errors import DatasetError
from llmjury.families.geval import dep
from llmjury.families.geval.ceiling import annotator_verdicts
from llmjury.families.geval.closer_look import DIMENSIONS, recorded_answers
from llmjury.families.geval.criteria import CRITERIA
from llmjury.families.geval.datasets import FAMILY, to_criteria
from llmjury.families.geval.options import GEvalOptions
from llmjury.families.geval.recorded import judge_config, recorded_verdict, unieval_scores
from llmjury.judgement.verdicts import Verdict

#: Files a folder replay reads; the rest (NOTICE.md, LICENSE, README) are not outputs.
DATA_SUFFIXES = (".json", ".jsonl", ".csv", ".json.xz", ".jsonl.gz", ".json.gz")
#: A verdict record (plain JSON data) into a verdict with its typed result: `Family.typed`.
Typed: TypeAlias = Callable[[Mapping[str, Any]], Verdict]


def read(path: Path, options: GEvalOptions, typed: Typed) -> list[Verdict]:
    """Every verdict `path` records, whatever its shape (see the module docstring); `typed` is the
    family's own `Family.typed`, handed in so this module does not import its package back."""
    if path.is_dir():
        return folder(path, options, typed)
    if path.name.startswith("gpt3.5_"):
        return closer_look(path)
    first = read_records(path)[0][1]
    if {"family", "case_id", "judge"} <= set(first):
        return run_verdicts(path, typed)
    if "predict_scores" in first:
        return [verdict for criterion in CRITERIA for verdict in unieval(path, criterion)]
    if "all_responses" in first:
        return closer_look(path)
    return rated_items(path, options)


def folder(path: Path, options: GEvalOptions, typed: Typed) -> list[Verdict]:
    """Every published output in a folder, each file read by its shape."""
    verdicts = dep.folder_verdicts(path)
    files = [f for f in sorted(path.iterdir()) if f.is_file() and f.name not in dep.FILES.values()
             and any(f.name.endswith(s) for s in DATA_SUFFIXES) and not f.name.startswith(".")]
    for file in files:
        verdicts += read(file, options, typed)
    if not verdicts:
        raise DatasetError(str(path), None, "no published outputs in this folder: it should hold Chiang & Lee's "
                                            "gpt3.5_<dim>_geval.json[.xz] files, DEP's *_dep_step2_eval.csv, "
                                            "UniEval's predictions, rated items with judge scores or a run's "
                                            "verdicts.jsonl.gz")
    return verdicts


def run_verdicts(path: Path, typed: Typed) -> list[Verdict]:
    """The geval verdicts of an earlier run's `verdicts.jsonl.gz`, their results typed by kind."""
    verdicts = []
    for number, record in read_jsonl(path):
        if record.get("family") != FAMILY:
            continue
        try:
            verdicts.append(typed(record))
        except ValueError as exc:
            raise DatasetError(str(path), number, f"not a geval verdict ({exc})") from None
    if not verdicts:
        raise DatasetError(str(path), None, "no geval verdicts in this file")
    return verdicts


def unieval(path: Path, criterion: str) -> list[Verdict]:
    judge = judge_config("unieval")
    return [recorded_verdict(f"{item.id}-response-{criterion}", judge, item, "response", criterion, score)
            for item, score in unieval_scores(path, criterion)]


def closer_look(path: Path) -> list[Verdict]:
    """Both parsers over one dimension's recorded answers (the dimension is in the file's name)."""
    short = path.name.removeprefix("gpt3.5_").split("_")[0]
    if short not in DIMENSIONS:
        raise DatasetError(str(path), None, f"cannot tell the dimension: name the file gpt3.5_<dim>_geval.json with "
                                            f"<dim> one of {', '.join(DIMENSIONS)}")
    criterion = DIMENSIONS[short]
    return [verdict for parser in ("paper", "ours")
            for verdict in recorded_answers(path, criterion, parser, f"closer-look-{criterion}-{parser}")]


def rated_items(path: Path, options: GEvalOptions) -> list[Verdict]:
    """A rated-items file's recorded judge scores, and its annotators against each other."""
    name = slug(options.items_name or path.name.split(".")[0])
    items = [to_criteria(item, path, options) for item in dialogue_items.rated_items(path, name)]
    verdicts = []
    for item in items:
        judge = judge_config(item.judge or "judge")
        verdicts += [recorded_verdict(f"{item.id}-response-{criterion}-{slug(item.judge or 'judge')}", judge, item,
                                      "response", criterion, score) for criterion, score in item.recorded.items()]
        verdicts += [v for criterion in item.ratings for v in annotator_verdicts([item], criterion)]
    if not any(v.kind == "recorded" for v in verdicts):
        raise DatasetError(str(path), None, "no recorded judge scores to replay: give each item judge_<dimension> "
                                            "fields (or a judge_scores object) and, optionally, the judge's name "
                                            "in a judge field")
    return verdicts
