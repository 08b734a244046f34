"""Nothing lost, nothing invented, nothing paid twice: a judged eval under injected faults.

A local fake OpenAI-compatible server fails a fixed share of requests, decided by the request's
content so the schedule is the same at every `-n`: a permanent fault (HTTP 400) for some prompts,
and for others a transient one (429, 500, a dropped connection, a malformed 200 body) on their first
attempt only. An eval of N cases, two cases per prompt (so identical requests meet on different
workers), asks a judge 3 samples per case. For each fault rate and worker count it prints:
cases without a verdict (lost), unscored verdicts and their causes, and paid answers beyond one per
distinct (prompt, sample) (duplicates).

    python bench/faults.py --cases 200 --rates 0.1,0.3 --workers 0,2
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from llmjury.runfiles import read_verdicts
from llmjury.testing import FakeOpenAI

SUITE = textwrap.dedent("""
    import llmjury
    from llmjury import Case, JudgeConfig, Outcome, Verdict
    from llmjury.chat import chat
    from llmjury.errors import JudgeParseError
    from llmjury.judgement.judging import ask_judge

    CASES = [Case(id=f"case-{{i:05d}}", family="bench") for i in range({cases})]

    def parse(text):
        if not text.startswith("verdict"):
            raise JudgeParseError("bench", text, "no verdict")
        return text

    async def judge(case, jury):
        prompt = f"prompt-{{int(case.id[5:]) // 2:05d}}"
        runs = await ask_judge(jury, "bench", [chat(("user", prompt))] * 3, parse)
        errors = [a.error for a in runs.answers if a.error]
        return Outcome([Verdict(case_id=case.id, family="bench", judge=JudgeConfig(provider=runs.provider),
                                valid=not errors, error=errors[0] if errors else None, raw=runs.raw)])

    @llmjury.pipeline(judge)
    @llmjury.parametrize(CASES)
    def test_case(outcome):
        assert len(outcome.verdicts) == 1
""")


class FaultyServer(FakeOpenAI):
    """Fails by content: `rate` of prompts, half of them for good, half on their first attempt."""

    def __init__(self, rate: float) -> None:
        super().__init__(lambda body, index: f"verdict {index}", latency=0.01)
        self.rate = rate
        self.attempts: Counter[str] = Counter()
        self.answered: Counter[tuple[str, int]] = Counter()
        self._count = threading.Lock()

    def _handle(self, handler: Any) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = json.loads(handler.rfile.read(length) or b"{}")
        prompt = body["messages"][-1]["content"]
        with self._count:
            self.requests.append(body)
            self.attempts[prompt] += 1
            first = self.attempts[prompt] == 1
        draw = int.from_bytes(hashlib.sha256(prompt.encode()).digest()[:4], "big") / 2**32
        if draw < self.rate / 2:
            return self._send(handler, 400, {"error": {"message": "permanent: bad request", "type": "x"}})
        if draw < self.rate and first:
            kind = int(draw * 1e6) % 4
            if kind == 0:
                return self._send(handler, 429, {"error": {"message": "slow down", "type": "rate_limit"}})
            if kind == 1:
                return self._send(handler, 500, {"error": {"message": "oops", "type": "server_error"}})
            if kind == 2:
                handler.close_connection = True
                handler.connection.shutdown(2)
                return None
            return self._send(handler, 200, None, raw=b'{"choices": [')
        status, payload = self.route(handler.path, body, {})
        with self._count:
            for choice in payload["choices"]:
                self.answered[(prompt, self.attempts[prompt], choice["index"])] += 1
        return self._send(handler, status, payload)

    @staticmethod
    def _send(handler: Any, status: int, payload: Any, raw: bytes | None = None) -> None:
        data = raw if raw is not None else json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)


def cause(error: str) -> str:
    """`call failed (HTTP 400)`, `unparseable`, ...: the kind of an unscored verdict's error."""
    status = re.search(r"HTTP \d+|malformed response body|APIConnectionError|APITimeoutError", error)
    return error.split(":")[0] + (f" ({status.group(0)})" if status else "")


def run(folder: Path, rate: float, workers: str, cases: int) -> dict[str, Any]:
    with FaultyServer(rate) as server:
        reports = folder / f"reports-{rate}-{workers}"
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:deepeval", "-p", "no:cacheprovider", "-n", workers,
             "--llm-cache", "off", "--llm-reports", str(reports), "--llm-judge",
             f"openai:bench;base_url={server.base_url};timeout=5", "-o", "markers=bench: bench"],
            cwd=folder, capture_output=True, check=False,
        )
        requests = len(server.requests)
        paid = sum(server.answered.values())
        distinct = len({(prompt, index) for prompt, _attempt, index in server.answered})
    verdicts = read_verdicts(reports / "latest")
    causes = Counter(cause(v["error"] or "") for v in verdicts if not v["valid"])
    return {"lost": cases - len({v["case_id"] for v in verdicts}), "unscored": sum(not v["valid"] for v in verdicts),
            "requests": requests, "paid answers": paid, "duplicate paid": paid - distinct, "causes": dict(causes)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--rates", default="0.1,0.3")
    parser.add_argument("--workers", default="0,2")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "test_bench.py").write_text(SUITE.format(cases=args.cases))
        print(f"N={args.cases} cases, 2 per prompt, 3 judge samples a case")
        print(f"{'faults':>6} {'-n':>3} {'lost':>5} {'unscored':>9} {'requests':>9} {'paid':>6} {'dup paid':>9}"
              "  unscored causes")
        for rate in (float(r) for r in args.rates.split(",")):
            for workers in args.workers.split(","):
                r = run(folder, rate, workers, args.cases)
                print(f"{rate:>6.0%} {workers:>3} {r['lost']:>5} {r['unscored']:>9} {r['requests']:>9} "
                      f"{r['paid answers']:>6} {r['duplicate paid']:>9}  {r['causes']}")


if __name__ == "__main__":
    main()
