"""llmjury's own time to prepare and read back a batch run, beside a 60 s target for 100,000 requests:
build the request lines of tiny judge calls (each keyed by its cache key), write them as JSONL files
of at most 50,000 lines (OpenAI's cap), and parse an output file of as many answers into samples.
The same for Gemini's inline requests and a result file. Then the batch clients' submit (build,
upload, create) of the same requests in batches of 50,000 to the fake servers through the real SDKs;
the fakes run in this process, so their own parsing is in that figure too (an upper bound). Last,
what the same run costs synchronously and batched, at the bundled price table's rates, for the
tokens each answer reports (40 prompt and 6 completion tokens a judge call here).

    python bench/batch.py
    python bench/batch.py --lines 100000 --target 60
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from llmjury.batch.api import PendingItem, batch_api
from llmjury.batch.gemini_lines import file_line, inline_request, read_results
from llmjury.batch.openai_lines import input_line, read_output, write_input
from llmjury.chat import ChatRequest, chat
from llmjury.pricing import PriceTable
from llmjury.providers.base import ProviderSpec
from llmjury.testing import FakeGemini, FakeOpenAI

MODEL = "gpt-4o-mini"
GEMINI_MODEL = "gemini-2.0-flash"
MAX_LINES = 50_000  # OpenAI's lines per batch file
SCHEMA = {"type": "object", "properties": {"verdict": {"enum": ["A", "B", "tie"]}}, "required": ["verdict"]}


def judge_request(i: int) -> ChatRequest:
    """A tiny pairwise judge call, distinct per case."""
    return chat(("system", "You compare two answers to a question and say which is better."),
                ("user", f"Question {i}: what is {i} + 1?\n\n[A] {i + 1}\n\n[B] {i + 2}\n\nWhich is better?"),
                temperature=0.0, max_tokens=20, json_schema=SCHEMA, schema_name="verdict",
                task=f"pairwise.j2#{i % 7}")


def openai_answer(key: str, i: int) -> str:
    body = {"id": f"chatcmpl-{i}", "object": "chat.completion", "created": 1, "model": MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": '{"verdict": "A"}', "refusal": None},
                         "logprobs": None, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 6, "total_tokens": 46}}
    return json.dumps({"id": f"batch_req_{i}", "custom_id": key,
                       "response": {"status_code": 200, "request_id": f"req_{i}", "body": body}, "error": None})


def gemini_answer(key: str, i: int) -> str:
    response = {"candidates": [{"content": {"parts": [{"text": '{"verdict": "A"}'}], "role": "model"},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 40, "candidatesTokenCount": 6, "totalTokenCount": 46}}
    return json.dumps({"key": key, "response": response})


def timed(step: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = step()
    return result, time.perf_counter() - start


def run(lines: int, folder: Path) -> dict[str, float]:
    """Seconds per step for `lines` requests, OpenAI then Gemini (answer files are written untimed)."""
    requests = [judge_request(i) for i in range(lines)]
    keys, took_keys = timed(lambda: [r.sample_key(f"openai:{MODEL}", 0) for r in requests])
    built, took_build = timed(lambda: [input_line(r, MODEL, 0, k) for r, k in zip(requests, keys, strict=True)])
    paths = [folder / f"in-{n}.jsonl" for n in range(0, lines, MAX_LINES)]
    _, took_write = timed(lambda: [write_input(p, built[n * MAX_LINES:(n + 1) * MAX_LINES])
                                   for n, p in enumerate(paths)])
    out = folder / "out.jsonl"
    out.write_text("".join(openai_answer(k, i) + "\n" for i, k in enumerate(keys)))
    parsed, took_parse = timed(lambda: read_output(out))
    assert len(parsed.samples) == lines and not parsed.malformed
    _, took_inline = timed(lambda: [inline_request(r, 0, k) for r, k in zip(requests, keys, strict=True)])
    _, took_lines = timed(lambda: [file_line(r, 0, k) for r, k in zip(requests, keys, strict=True)])
    results = folder / "results.jsonl"
    results.write_text("".join(gemini_answer(k, i) + "\n" for i, k in enumerate(keys)))
    read, took_read = timed(lambda: read_results(results))
    assert len(read.samples) == lines and not read.malformed
    return {"cache keys (both providers)": took_keys, "openai: build request lines": took_build,
            f"openai: write {len(paths)} JSONL file(s)": took_write, "openai: parse output lines": took_parse,
            "gemini: build file lines": took_lines, "gemini: parse result lines": took_read,
            "gemini: build inline requests (<20 MB)": took_inline}


async def submit_all(provider: str, model: str, base_url: str, chunks: list[list[PendingItem]]) -> None:
    """Submit every chunk as one batch through the provider's batch client."""
    api = batch_api(ProviderSpec.parse(f"{provider}:{model};api_key=bench;base_url={base_url}"))
    try:
        for n, chunk in enumerate(chunks):
            await api.submit(f"bench-{n}", model, chunk)
    finally:
        await api.aclose()


def submit(requests: list[ChatRequest], keys: list[str]) -> dict[str, float]:
    """Seconds for each batch client to submit every request, 50,000 a batch, to its fake."""
    items = [PendingItem(k, r, 0, 60) for r, k in zip(requests, keys, strict=True)]
    chunks = [items[n:n + MAX_LINES] for n in range(0, len(items), MAX_LINES)]
    took: dict[str, float] = {}
    with FakeOpenAI() as openai_fake, FakeGemini() as gemini_fake:
        fakes: list[tuple[str, str, FakeOpenAI | FakeGemini, str]] = [
            ("openai", MODEL, openai_fake, openai_fake.base_url),
            ("gemini", GEMINI_MODEL, gemini_fake, gemini_fake.origin)]
        for provider, model, fake, base_url in fakes:
            start = time.perf_counter()
            asyncio.run(submit_all(provider, model, base_url, chunks))
            took[f"{provider}: submit {len(chunks)} batch(es) to the fake"] = time.perf_counter() - start
            assert fake.batches.creations == len(chunks), (provider, fake.batches.creations)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=100_000, help="requests (default 100,000)")
    parser.add_argument("--target", type=float, default=60.0, help="seconds for all of one provider's steps")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        steps = run(args.lines, Path(folder))
    requests = [judge_request(i) for i in range(args.lines)]
    submitted = submit(requests, [r.sample_key(f"openai:{MODEL}", 0) for r in requests])
    print(f"{args.lines:,} tiny judge requests, llmjury's own time (target {args.target:.0f} s per provider)")
    for name, seconds in steps.items():
        print(f"  {name:<38} {seconds:7.2f} s  {seconds / args.lines * 1e6:6.1f} µs a line")
    for name, seconds in submitted.items():
        verdict = "" if seconds <= args.target else "  SLOWER"
        print(f"  {name:<38} {seconds:7.2f} s (target {args.target:.0f} s; build, upload, create){verdict}")
    prices = PriceTable.load()
    prompt, completion = 40 * args.lines, 6 * args.lines
    for model in (f"openai:{MODEL}", f"gemini:{GEMINI_MODEL}"):
        synchronous, batched = prices.cost(model, prompt, completion), prices.batch_cost(model, prompt, completion)
        if synchronous is not None and batched is not None:
            print(f"  cost of the run, {model:<29} ${synchronous:8.4f} synchronous, ${batched:8.4f} batched "
                  f"({batched / synchronous:.0%})")
    # A run this size is a file for either provider (Gemini takes at most 20 MB inline).
    for provider in ("openai", "gemini"):
        total = steps["cache keys (both providers)"] + sum(
            s for name, s in steps.items() if name.startswith(provider) and "inline" not in name)
        verdict = "" if total <= args.target else "  SLOWER"
        print(f"{provider + ' total':<40} {total:7.2f} s (target {args.target:.0f} s){verdict}")


if __name__ == "__main__":
    main()
