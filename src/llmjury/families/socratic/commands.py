"""`llmjury socratic-aggregate`: seed 003's robust majority over existing evaluation files, no model call."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from llmjury.errors import DatasetError
from llmjury.family import Command


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", type=Path, metavar="PATH",
                        help="seed 003's judge_evaluations_*.json files, or our socratic_run_N.json files")
    parser.add_argument("--output-dir", type=Path, default=Path("reports/socratic"))
    parser.add_argument("--ours", default="ours", help="label of our system in the files (seed 003: chat)")
    parser.add_argument("--baseline", default="baseline", help="label of the baseline (seed 003: simple-chat)")


def aggregate(args: argparse.Namespace) -> int:
    """Seed 003's `--existing_files`: combine single-run evaluation files, any number of them."""
    from llmjury.families.socratic.evaluations import read_run
    from llmjury.families.socratic.report import robust_summary

    try:
        runs = [read_run(path, ours=args.ours, baseline=args.baseline) for path in args.files]
    except DatasetError as exc:
        raise SystemExit(f"llmjury socratic-aggregate: {exc}") from None
    result = robust_summary(runs, ours=args.ours, baseline=args.baseline)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    out = args.output_dir / "robust_evaluation.json"
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    print(json.dumps(result["summary"], indent=2, ensure_ascii=False))
    print(f"wrote {out}")
    return 0


COMMANDS = (Command("socratic-aggregate", "robust majority over existing single-run evaluation files (seed 003)",
                    arguments, aggregate),)
