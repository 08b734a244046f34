"""`llmjury batch export|import|status`: the file lane, and what the run store holds in batches.

The file lane (a spec's `;batch=file`) queues requests in the run store instead of sending them.
`export` writes them as an OpenAI batch input file, the format `vllm run-batch` and Ray Data
pipelines read; `import` reads such a tool's output file (`custom_id` is the cache key) into the
cache, and the next run replays the answers with no call. No vLLM or Ray is needed here.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from llmjury.arguments import Parser
from llmjury.errors import ConfigError
from llmjury.running.batch_queue import BatchQueue
from llmjury.store.location import KINDS, StoreLocation
from llmjury.store.postgres import DSN_VARIABLE


def add_batch_commands(commands: argparse._SubParsersAction[Parser]) -> None:
    batch = commands.add_parser("batch", help="the Batch API lanes: export and import files, see what is pending")
    actions = batch.add_subparsers(dest="action", required=True)
    export = actions.add_parser("export", help="the file lane's queued requests as an OpenAI batch input file")
    export.add_argument("--to", type=Path, required=True, help="the JSONL file to write")
    export.add_argument("--provider", metavar="KIND:MODEL",
                        help="only this provider's requests (one model a file), e.g. openai:Qwen/Qwen2.5-7B")
    imported = actions.add_parser("import", help="a batch output file (vllm run-batch, OpenAI) into the cache")
    imported.add_argument("output", type=Path, help="the JSONL output file; custom_id is the cache key")
    status = actions.add_parser("status", help="requests queued or in batches, by provider and state")
    for action, handler in ((export, export_file), (imported, import_file), (status, show_status)):
        action.add_argument("--cache", type=Path, default=Path(".llmjury/cache.sqlite"), help="the SQLite store's file")
        action.add_argument("--store", choices=KINDS, default="sqlite",
                            help=f"postgres: the store at {DSN_VARIABLE} (or libpq's PG* variables)")
        action.set_defaults(handler=_with_queue(handler))


def _with_queue(handler: Callable[[argparse.Namespace, BatchQueue], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            location = StoreLocation.parse(args.store, args.cache, "--store")
            if location.kind == "sqlite" and not location.path.exists():
                if args.action == "status":
                    print(f"nothing queued or in batches: no run store at {args.cache}")
                    return 0
                raise ConfigError(f"--cache {args.cache}: no run store there (a run with ;batch=file makes one)")
            queue = BatchQueue(location)
            try:
                return handler(args, queue)
            finally:
                queue.close()
        except ConfigError as exc:
            print(f"llmjury batch {args.action}: {exc}", file=sys.stderr)
            return 4

    return run


def export_file(args: argparse.Namespace, queue: BatchQueue) -> int:
    from llmjury.batch.openai_lines import input_line, write_input  # the openai SDK's types: only when exporting

    everything = queue.queued_for_file()
    queued = [(provider, item) for provider, item in everything if args.provider is None or provider == args.provider]
    if not queued:
        there = sorted({provider for provider, _ in everything})
        if args.provider is not None and there:
            raise ConfigError(f"--provider {args.provider}: nothing of it is queued; queued for the file lane: "
                              f"{', '.join(there)}")
        print("nothing is queued for the file lane: a run with a ;batch=file spec queues its calls")
        return 0
    args.to.parent.mkdir(parents=True, exist_ok=True)
    write_input(args.to, (input_line(item.request, provider.partition(":")[2], item.sample_index, item.key)
                          for provider, item in queued))
    models = sorted({provider.partition(":")[2] for provider, _ in queued})
    print(f"wrote {len(queued)} request(s) to {args.to} for {', '.join(models) or 'no model'}; run them (e.g. "
          f"`vllm run-batch -i {args.to} -o OUT --model {models[0] if len(models) == 1 else 'MODEL'}`), then "
          "`llmjury batch import OUT`")
    if len(models) > 1:
        print("the file holds several models' requests: `--provider KIND:MODEL` writes one model's")
    return 0


def import_file(args: argparse.Namespace, queue: BatchQueue) -> int:
    from llmjury.batch.openai_lines import read_output  # the openai SDK's types: only when importing

    if not args.output.is_file():
        raise ConfigError(f"{args.output}: no such file")
    results = read_output(args.output)
    stored = queue.import_answers(results.samples)
    print(f"{args.output}: stored {len(stored)} of its {len(results.samples)} answer(s) in the cache")
    for key in sorted(set(results.samples) - stored):
        print(f"{args.output}: custom_id {key} answers no queued request; skipped")
    for failure in results.failures.values():
        print(f"{args.output}: {failure.key}: no answer ({failure.code}: {failure.message}); still queued")
    for malformed in results.malformed:
        print(f"{malformed}; skipped")
    return 1 if results.malformed else 0


def show_status(args: argparse.Namespace, queue: BatchQueue) -> int:
    pending = queue.pending()
    if not pending:
        print("nothing queued or in batches")
    for provider, states in pending.items():
        print(f"{provider}: " + ", ".join(f"{count} {state}" for state, count in states.items()))
    return 0
