"""A scriptable HTTP server on 127.0.0.1 that subclasses teach a provider's wire format.

Tests drive it through the real SDK clients: the fake decides what each request gets back
(a reply function), can inject latency and a queue of faults (an HTTP error with headers, or
a dropped connection), and records every request body it received.
"""

from __future__ import annotations

import json
import re
import ssl
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple

HOST = "127.0.0.1"  # the fakes listen on loopback only
#: How often the serving loop looks at its shutdown flag: how long stop() waits at most (the wake-ups
#: cost next to nothing while it serves, and tests start hundreds of servers).
POLL_S = 0.005


@dataclass
class FakeChoice:
    """One generated alternative; `logprobs` is a list of (token, logprob, [(alt, logprob), ...])."""

    text: str
    logprobs: list[tuple[str, float, list[tuple[str, float]]]] | None = None
    refusal: str | None = None
    finish_reason: str = "stop"


@dataclass
class Fault:
    """What a request gets instead of an answer: the next request, or the next one `matches` accepts
    (so a test with concurrent requests decides which one fails, instead of racing for it)."""

    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    message: str = "injected fault"
    drop: bool = False  # close the connection without answering
    matches: Callable[[dict[str, Any]], bool] | None = None
    body: bytes | None = None  # sent as is with `status` (a malformed answer), instead of an error body
    #: A regular expression the request's `METHOD /path` must match (a poll: `GET /v1/batches/`); None: any.
    request: str | None = None

    def takes(self, method: str, path: str, body: dict[str, Any]) -> bool:
        """Whether this fault is the answer to this request."""
        if self.request is not None and not re.match(self.request, f"{method} {path}"):
            return False
        return self.matches is None or self.matches(body)


Reply = Callable[[dict[str, Any], int], "str | FakeChoice"]
#: What a route answers: a status and a JSON object, or raw bytes (a file's content).
Answer = tuple[int, "dict[str, Any] | bytes"]


@dataclass
class Headed:
    """An answer with headers of its own (a resumable upload's URL and status)."""

    status: int
    payload: dict[str, Any] | bytes
    headers: dict[str, str]


def default_reply(body: dict[str, Any], index: int) -> str:
    return f"reply {index}"


class Hold(NamedTuple):
    """`FakeServer.hold_until_in_flight`: answers wait until `in_flight` requests are (`reached`), or `timeout`."""

    in_flight: int
    reached: threading.Event
    timeout: float


class FakeServer:
    """`serial=True` answers one request at a time, as llama.cpp's server does with non-streaming
    requests: the others wait in line, and their clients' time-outs run while they wait."""

    def __init__(self, reply: Reply = default_reply, *, latency: float = 0.0, serial: bool = False) -> None:
        self.reply = reply
        self.latency = latency
        self.serial = serial
        self._serve_one = threading.Lock()
        self.faults: deque[Fault] = deque()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []  # with the query string, as the client sent it
        self._lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self._hold: Hold | None = None
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # An answer is written as its headers, then its body: with Nagle's algorithm on, the body
            # waited for the client's delayed ACK of the headers, 40 ms a request on Linux.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                server._handle(self)

            def do_GET(self) -> None:
                server._handle(self)

        self._httpd = _Listener((HOST, 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": POLL_S}, daemon=True)

    @property
    def origin(self) -> str:
        scheme = "https" if isinstance(self._httpd.socket, ssl.SSLSocket) else "http"
        return f"{scheme}://{HOST}:{self._httpd.server_port}"

    def serve_tls(self, context: ssl.SSLContext) -> FakeServer:
        """Speak HTTPS with the certificate `context` holds (before `start`): a client that does not
        trust it fails its handshake and gets no answer."""
        self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
        return self

    def hold_until_in_flight(self, count: int, timeout: float = 10.0) -> None:
        """Hold every answer until `count` requests are in flight at once, then answer them all (and
        every later one) at once: a test of concurrency waits on the event it checks, not on a
        latency long enough for a loaded machine. A client that never has `count` in flight gets
        each answer after `timeout` seconds, and `max_in_flight` tells."""
        self._hold = Hold(count, threading.Event(), timeout)

    def start(self) -> FakeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- protocol hooks for subclasses ----------------------------------------------------------
    def route(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        raise NotImplementedError

    def error_body(self, fault: Fault) -> dict[str, Any]:
        return {"error": {"message": fault.message, "code": fault.status}}

    def respond(self, method: str, path: str, body: dict[str, Any], raw: bytes,
                headers: dict[str, str]) -> Answer | Headed:
        """Every request's answer: `route` for the JSON posts every fake speaks; a fake with more
        endpoints (files, batches) looks at them first. `raw` is the body as sent (a multipart upload)."""
        return self.route(path, body, headers)

    # -- plumbing ---------------------------------------------------------------------------------
    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        body = _json_object(raw, handler.headers.get("Content-Type"))
        with self._lock:
            self.requests.append(body)
            self.headers.append({k.lower(): v for k, v in handler.headers.items()})
            self.paths.append(handler.path)
            fault = self._take_fault(handler.command, handler.path, body)
        if self.serial:
            self._serve_one.acquire()
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            hold = self._hold
            if hold is not None and self.in_flight >= hold.in_flight:
                hold.reached.set()
        try:
            if hold is not None:
                hold.reached.wait(hold.timeout)
            if self.latency:
                time.sleep(self.latency)
            if fault is not None and fault.drop:
                handler.close_connection = True
                handler.connection.shutdown(2)
                return
            payload: dict[str, Any] | bytes
            if fault is not None:
                status, payload, extra = fault.status, self.error_body(fault), fault.headers
            else:
                answer = self.respond(handler.command, handler.path, body, raw, dict(handler.headers.items()))
                if isinstance(answer, Headed):
                    status, payload, extra = answer.status, answer.payload, answer.headers
                else:
                    (status, payload), extra = answer, {}
            kind = "application/octet-stream" if isinstance(payload, bytes) else "application/json"
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            data = fault.body if fault is not None and fault.body is not None else data
            handler.send_response(status)
            handler.send_header("Content-Type", kind)
            handler.send_header("Content-Length", str(len(data)))
            for key, value in extra.items():
                handler.send_header(key, value)
            handler.end_headers()
            handler.wfile.write(data)
        finally:
            with self._lock:
                self.in_flight -= 1
            if self.serial:
                self._serve_one.release()

    def _take_fault(self, method: str, path: str, body: dict[str, Any]) -> Fault | None:
        for fault in self.faults:
            if fault.takes(method, path, body):
                self.faults.remove(fault)
                return fault
        return None

    def choice(self, body: dict[str, Any], index: int) -> FakeChoice:
        answer = self.reply(body, index)
        return answer if isinstance(answer, FakeChoice) else FakeChoice(text=answer)


class _Listener(ThreadingHTTPServer):
    """socketserver's listen backlog of 5 resets connections when a client opens dozens at once
    (the bare-SDK row of bench/throughput.py at C=64 failed on it); a real server's is larger."""

    request_queue_size = 1024

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (a cancelled call, a time-out) closed its end: as a real server, say
        nothing; anything else is printed as socketserver does."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _json_object(raw: bytes, content_type: str | None) -> dict[str, Any]:
    """A request's JSON body; {} for none, and for a body that is not JSON (a file's bytes, a multipart
    upload), which its route reads raw."""
    if not raw or not (content_type or "application/json").startswith("application/json"):
        return {}
    try:
        body = json.loads(raw)
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def count_tokens(text: str) -> int:
    """Whitespace tokens: a stand-in tokenizer good enough for usage figures."""
    return len(text.split())
