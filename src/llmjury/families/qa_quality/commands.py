"""`llmjury qa-estimate`: tokens and cost of grading Q&A pairs, before any call (seed 001, section 8)."""

from __future__ import annotations

import argparse
from pathlib import Path

from llmjury.errors import CommandLineError, ConfigError, DatasetError
from llmjury.family import Command


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--export", type=Path,
                        help="a Slack export folder, as Slack writes it or seed 001's processed threads "
                             "(qa_quality.export)")
    parser.add_argument("--pairs", type=Path, help="your Q&A pairs, JSONL / JSON / CSV (qa_quality.pairs)")
    parser.add_argument("--semeval", type=Path, help="SemEval-2016 question-comment pairs (qa_quality.semeval)")
    parser.add_argument("--name", help="dataset name of --pairs (qa_quality.pairs_name; default: the file's stem)")
    parser.add_argument("--format", choices=["auto", "pairs", "semeval"], default="auto",
                        help="shape of --pairs (qa_quality.format; default: told by its fields)")
    parser.add_argument("--model", default="gpt-4o-mini")
    parser.add_argument("--output-tokens", type=int, default=150)
    parser.add_argument("--prices", type=Path)
    parser.add_argument("--prompts", type=Path)


def estimate(args: argparse.Namespace) -> int:
    """Dry run for Q&A grading: tokens and cost for a model, before any call.
    Reads the same files as the suite's `qa_quality.export`, `.semeval` and `.pairs` options."""
    from llmjury.families.qa_quality.datasets import EXPORT, PAIRS, SEMEVAL, load
    from llmjury.families.qa_quality.evaluation import estimate_tokens, extract_for_evaluation
    from llmjury.families.qa_quality.options import QAOptions
    from llmjury.pricing import PriceTable
    from llmjury.prompts import PromptLibrary

    given = {EXPORT: args.export, SEMEVAL: args.semeval, PAIRS: args.pairs}
    paths = {name: path for name, path in given.items() if path is not None}
    if not paths:
        raise CommandLineError("give --export DIR, --pairs FILE or --semeval FILE")
    try:
        options = QAOptions(pairs_name=args.name, format=args.format, output_tokens=args.output_tokens)
        data = load(paths, options)
    except (ConfigError, DatasetError, ValueError) as exc:
        raise SystemExit(f"llmjury qa-estimate: {exc}") from None
    pairs = data.pairs + data.labelled
    prompts = PromptLibrary([args.prompts] if args.prompts else [])
    input_tokens = sum(estimate_tokens(prompts.render("qa_quality/judge.j2",
                                                      qa=extract_for_evaluation(c.pair).to_prompt_format()).text)
                       for c in pairs)
    output_tokens = len(pairs) * options.output_tokens
    cost = PriceTable.load(args.prices).cost(f"openai:{args.model}", input_tokens, output_tokens)
    for report in data.loaded:
        print(report.line())
    print(f"{len(pairs)} pairs to grade ({len(data.labelled)} with a human label)")
    print(f"estimated input tokens: {input_tokens}; output tokens: {output_tokens} "
          f"({options.output_tokens} a pair)")
    print(f"estimated cost on {args.model}: " + ("unpriced (add it to the price table)" if cost is None
                                                   else f"${cost:.4f}"))
    return 0


COMMANDS = (Command("qa-estimate", "dry run: tokens and cost of grading Q&A pairs", arguments, estimate),)
