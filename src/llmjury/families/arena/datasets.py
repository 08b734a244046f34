"""The arena's data sources and where a run finds them: the option's path, else the copy a suite
ships under its data root (`llm_data`); with neither, a ConfigError names the option to set.

Each source has a name that labels its case ids, markers, leaderboards and report rows: the
`*_name` option, else the file's stem (the shipped MRBench file keeps the name `mrbench`).
"""

from __future__ import annotations

from pathlib import Path

from llmjury.cases import slug
from llmjury.errors import ConfigError
from llmjury.families.arena.options import ArenaOptions
from llmjury.family import Dataset
from llmjury.running.settings import Settings

QUESTIONS = Dataset("questions", "data", "seed 002's data folder: <dataset>/questions.csv (`question` column)",
                    default="arena/data", formats=("seed-002 questions.csv",))
ANSWERS = Dataset("answers", "answers", "seed 002's q_and_as.csv files (`question` + one column per model), "
                  "';'-separated; default: <data root>/arena/cache/<dataset>/q_and_as.csv",
                  default="arena/cache/mtbench/q_and_as.csv", formats=("seed-002 q_and_as.csv",))
MRBENCH = Dataset("mrbench", "mrbench", "MRBench tutor replies with human annotations",
                  default="mrbench/MRBench_V1.json", formats=("mrbench-v1", "mrbench-v3"))
PAIRS = Dataset("pairs", "pairs", "pairwise items: prompt, two answers, optional systems, human label and "
                "recorded verdicts per order", formats=("jsonl", "json", "csv"))
VERDICTS_AB = Dataset("pairs_verdicts_ab", "pairs_verdicts_ab", "a judge's recorded verdicts on the pairwise items "
                      "with answer A shown first, one row per item", formats=("jsonl", "json", "csv"))
VERDICTS_BA = Dataset("pairs_verdicts_ba", "pairs_verdicts_ba", "the same judge's verdicts with answer B shown first, "
                      "in the frame arena.pairs_ba_frame declares", formats=("jsonl", "json", "csv"))
PRD = Dataset("prd", "prd", "PRD Vicuna80: human votes (ratings-human/) and reviewers' verdicts (reviewers/)",
              default="prd", formats=("prd",))
LLMBAR = Dataset("llmbar", "llmbar", "LLMBar judges' verdicts recorded in both orders (judges/)",
                 default="llmbar", formats=("llmbar",))
DATASETS = (QUESTIONS, ANSWERS, MRBENCH, PAIRS, VERDICTS_AB, VERDICTS_BA, PRD, LLMBAR)
SHIPPED_MRBENCH_NAME = "mrbench"


def find(dataset: Dataset, options: ArenaOptions, settings: Settings) -> Path | None:
    """The dataset's path for this run, or None when neither the option nor a shipped copy names one."""
    return dataset.path(options, settings)


def require(dataset: Dataset, options: ArenaOptions, settings: Settings) -> Path:
    """The dataset's path, or a ConfigError naming the option to set."""
    path = find(dataset, options, settings)
    if path is None:
        raise ConfigError(f"arena: no {dataset.name} data; set --llm-option arena.{dataset.option}=PATH "
                          f"({dataset.description}) or the data root (llm_data / --llm-data)")
    return path


def questions_file(options: ArenaOptions, settings: Settings) -> Path:
    return require(QUESTIONS, options, settings) / options.dataset / "questions.csv"


def answer_files(options: ArenaOptions, settings: Settings) -> list[Path]:
    """The q_and_as files named by `arena.answers`, else the dataset's cache file under the data
    root if it has one; none when every model answers live (their answers are generated)."""
    if options.answers:
        return options.answer_files()
    shipped = find(ANSWERS, options, settings)
    if shipped is None or options.all_live():
        return []
    cached = shipped.parents[2] / "cache" / options.dataset / "q_and_as.csv"  # <data root>/arena/cache
    return [cached] if cached.is_file() else []


def mrbench_name(options: ArenaOptions, settings: Settings) -> str:
    if options.mrbench_name:
        return slug(options.mrbench_name)
    return SHIPPED_MRBENCH_NAME if not options.mrbench else slug(Path(options.mrbench).stem)


def pairs_name(options: ArenaOptions, path: Path) -> str:
    return slug(options.pairs_name or path.stem)
