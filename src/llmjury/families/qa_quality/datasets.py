"""The Q&A data a run grades: a Slack export (seed 001), SemEval-2016's labelled community answers,
and your own Q&A pairs, each loaded once into cases with a load report.

Your pairs file (JSON Lines, a JSON list or CSV) holds one pair a record: `id`, `question`,
`answer` (or, in JSON, `answers`: a list of strings), optional `course` (or `topic`) and optional
`label` (Good / PotentiallyUseful / Bad, or a grade high / medium / low / remove). A file in
SemEval's shape (`question_subject`, `question_body`, `comment_id`, `comment_text`, `label`) is
told apart by its fields, or named by `qa_quality.format`. Pairs with an empty question or no
non-empty answer, and a second record with an id already seen, are left out and counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llmjury.cases import slug
from llmjury.datasets.files import read_records
from llmjury.errors import ConfigError, DatasetError
from llmjury.families.qa_quality.cases import FAMILY, CourseRules, QACase
from llmjury.families.qa_quality.export import load_export
from llmjury.families.qa_quality.labels import VOCABULARIES, canonical
from llmjury.families.qa_quality.options import QAOptions
from llmjury.family import Dataset
from llmjury.loading import LoadCounter, LoadReport

EXPORT, SEMEVAL, PAIRS = "slack_export", "semeval", "pairs"
DATASETS = (
    Dataset(EXPORT, "export", "a Slack export: Slack's own (channels.json, users.json, <channel>/<YYYY-MM-DD>.json) "
            "or seed 001's processed threads (<course>/<file>.json)",
            default="qa_quality/slack_export", formats=("slack",)),
    Dataset(SEMEVAL, "semeval", "SemEval-2016 Task 3 subtask A question-comment pairs with human labels",
            default="semeval_cqa/sample.jsonl", formats=("semeval",)),
    Dataset(PAIRS, "pairs", "your Q&A pairs: id, question, answer(s), optional course/topic and label",
            formats=("pairs", "semeval")),
)
SEMEVAL_FIELDS = ("question_subject", "question_body", "comment_id", "comment_text", "label")


@dataclass(frozen=True)
class QAData:
    """Every case of a run's Q&A data: corpus pairs, labelled pairs, course rules, load reports."""

    pairs: list[QACase]
    labelled: list[QACase]
    rules: list[CourseRules]
    loaded: list[LoadReport]


def load(paths: Mapping[str, Path], options: QAOptions) -> QAData:
    """The cases of the datasets in `paths` (by declared dataset name, as `Family.dataset_paths` gives)."""
    if not paths:
        raise ConfigError("qa_quality has no data: set --llm-option qa_quality.pairs=FILE (or export=DIR, "
                          "semeval=FILE), or llm_data to a folder holding qa_quality/slack_export")
    cases: list[QACase] = []
    rules: list[CourseRules] = []
    loaded: list[LoadReport] = []
    names: dict[str, str] = {}
    if EXPORT in paths:
        pairs, rules, report = export_cases(paths[EXPORT])
        cases += pairs
        loaded.append(report)
        names[report.dataset] = "qa_quality.export"
    if SEMEVAL in paths:
        pairs, report = labelled_file(paths[SEMEVAL], SEMEVAL, "semeval")
        cases += pairs
        loaded.append(report)
        names[SEMEVAL] = "qa_quality.semeval"
    if PAIRS in paths:
        path = paths[PAIRS]
        name = slug(options.pairs_name or path.stem)
        if name in names:
            raise ConfigError(f"--llm-option qa_quality.pairs={path}: its dataset name {name!r} is also the name of "
                              f"{names[name]}'s data; name yours with qa_quality.pairs_name=NAME")
        pairs, report = labelled_file(path, name, options.format)
        cases += pairs
        loaded.append(report)
    return QAData(pairs=[c for c in cases if c.label is None], labelled=[c for c in cases if c.label is not None],
                  rules=rules, loaded=loaded)


def export_cases(root: Path) -> tuple[list[QACase], list[CourseRules], LoadReport]:
    """A Slack export's kept pairs, one rules case per course, and the threads the rules removed."""
    dataset = slug(root.name.removesuffix(".zip"))
    export = load_export(root)
    counter = LoadCounter()
    counter.drop("empty channel", len(export.empty_channels))
    counter.drop("empty file", len(export.empty_files))
    pairs, rules = [], []
    for course, filtered in export.courses.items():
        rules.append(CourseRules(id=f"rules-{slug(course)}", dataset=dataset, course=course,
                                 removed=dict(filtered.removed), removed_answers=dict(filtered.removed_answers),
                                 kept=len(filtered.pairs)))
        for reason, count in filtered.removed.items():
            counter.drop(f"{reason} thread", count)
        for pair in filtered.pairs:
            generation = f"-g{slug(pair.generation)}" if pair.generation else ""
            pairs.append(QACase(id=f"qa-{slug(course)}{generation}-{slug(pair.id)}", dataset=dataset,
                                course=course, source_file=pair.source_file, generation=pair.generation,
                                date=pair.date, pair=pair.raw()))
    report = counter.report(FAMILY, dataset, root, len(pairs))
    if not pairs:
        raise DatasetError(str(root), None, f"no Q&A pair left after the rules ({report.line()})")
    return pairs, rules, report


def labelled_file(path: Path, dataset: str, shape: str) -> tuple[list[QACase], LoadReport]:
    """A file of Q&A pairs (`pairs` or SemEval `semeval` shape, or `auto`: told by the first record's fields)."""
    records = read_records(path)
    if not records:
        raise DatasetError(str(path), None, "no records")
    if shape == "auto":
        shape = detect(path, *records[0])
    row_case = semeval_row if shape == "semeval" else pair_row
    counter = LoadCounter()
    cases: list[QACase] = []
    seen: set[str] = set()
    vocabulary: str | None = None
    for number, record in records:
        case = row_case(path, number, record, dataset)
        if isinstance(case, str):
            counter.drop(case)
            continue
        if case.id in seen:
            counter.drop("duplicate id")
            continue
        seen.add(case.id)
        if case.label is not None:
            name, _ = canonical(case.label) or ("", "")
            if vocabulary not in (None, name):
                raise DatasetError(str(path), number, f"label {case.label!r} is from the {name} labels, earlier rows "
                                                      f"use the {vocabulary} labels: use one vocabulary a file")
            vocabulary = name
        cases.append(case)
    report = counter.report(FAMILY, dataset, path, len(cases))
    if not cases:
        raise DatasetError(str(path), None, f"no Q&A pair left ({report.line()})")
    return cases, report


def detect(path: Path, number: int, record: Mapping[str, Any]) -> str:
    if "comment_text" in record:
        return "semeval"
    if "question" in record:
        return "pairs"
    raise DatasetError(str(path), number, f"neither Q&A pairs (id, question, answer) nor SemEval pairs "
                                          f"({', '.join(SEMEVAL_FIELDS)}); its fields: {', '.join(map(str, record))}")


def pair_row(path: Path, number: int, row: Mapping[str, Any], dataset: str) -> QACase | str:
    """One record of your pairs file as a case, or the reason it is left out."""
    missing = [f for f in ("id", "question") if f not in row]
    missing += [] if "answer" in row or "answers" in row else ["answer"]
    if missing:
        raise DatasetError(str(path), number, f"no {', '.join(map(repr, missing))} field: a Q&A pair needs id, "
                                              "question and answer (or answers)")
    item_id, question = _text(row["id"]), _text(row["question"])
    if not item_id:
        raise DatasetError(str(path), number, "empty 'id'")
    given = row["answers"] if "answers" in row else [row["answer"]]
    if not isinstance(given, list):
        raise DatasetError(str(path), number, f"'answers' is a {type(given).__name__}, not a list of strings")
    answers = [_text(a) for a in given]
    if not question:
        return "empty question"
    if not any(answers):
        return "empty answer"
    course = _text(row.get("course") or row.get("topic") or "")
    pair = {"question": {"text": question, "timestamp": item_id}, "answers": [{"text": a} for a in answers if a]}
    return QACase(id=f"{dataset}-{slug(item_id)}", dataset=dataset, course=course, source_file=path.name, pair=pair,
                  label=_label(path, number, row.get("label")))


def semeval_row(path: Path, number: int, row: Mapping[str, Any], dataset: str) -> QACase | str:
    """A SemEval comment as a one-answer pair (subject and body as the question), or why it is left out."""
    try:
        question = f"{row['question_subject']}\n{row['question_body']}".strip()
        comment_id, comment, label = _text(row["comment_id"]), row["comment_text"], row["label"]
    except KeyError as exc:
        raise DatasetError(str(path), number, f"not a SemEval question-comment pair (no {exc} field)") from None
    found = canonical(str(label))
    if found is None or found[0] != "SemEval":
        raise DatasetError(str(path), number, f"unknown label {label!r}: SemEval labels are "
                                              f"{', '.join(VOCABULARIES['SemEval'])}")
    if not _text(comment):
        return "empty answer"
    pair = {"question": {"text": question, "timestamp": comment_id}, "answers": [{"text": comment}]}
    return QACase(id=f"{dataset}-{slug(comment_id)}", dataset=dataset, source_file=path.name, pair=pair,
                  label=found[1])


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _label(path: Path, number: int, value: Any) -> str | None:
    if value is None or not _text(value):
        return None
    found = canonical(str(value))
    if found is None:
        choices = "; ".join(f"{name}: {', '.join(labels)}" for name, labels in VOCABULARIES.items())
        raise DatasetError(str(path), number, f"unknown label {value!r} (labels are {choices})")
    return found[1]
