"""OpenAI's Files and Batches endpoints, as the `openai` SDK calls them: upload (`POST /v1/files`,
multipart, purpose=batch), retrieve and content of a file, and create, retrieve, cancel and list
(`after`/`limit`) of batches with their metadata. Batches run on llmjury.testing.fake_batches; their
output and error files are written when they finish, in the Batch API's line shapes.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from llmjury.testing.fake_batches import TERMINAL, BatchBook, FakeBatch, TokenLimitExceeded
from llmjury.testing.fake_server import Answer, count_tokens

#: The Batch API's caps per input file.
MAX_LINES = 50_000
MAX_FILE_BYTES = 200 * 1024 * 1024
_FILE = re.compile(r"^/v1/files/(?P<id>[^/]+)(?P<content>/content)?$")
_BATCH = re.compile(r"^/v1/batches/(?P<id>[^/]+)(?P<cancel>/cancel)?$")
_TIMES = {"in_progress": "in_progress_at", "finalizing": "finalizing_at", "completed": "completed_at",
          "failed": "failed_at", "expired": "expired_at", "cancelling": "cancelling_at", "cancelled": "cancelled_at"}


@dataclass
class StoredFile:
    id: str
    filename: str
    purpose: str
    data: bytes
    created_at: int

    def info(self) -> dict[str, Any]:
        return {"id": self.id, "object": "file", "bytes": len(self.data), "created_at": self.created_at,
                "filename": self.filename, "purpose": self.purpose, "status": "processed", "expires_at": None,
                "status_details": None}


def invalid(message: str, param: str | None = None, code: str | None = None, status: int = 400) -> Answer:
    """An error answer in OpenAI's shape."""
    return status, {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}


class OpenAIBatchRoutes:
    """The files a fake OpenAI server holds and the batches it runs."""

    def __init__(self, book: BatchBook) -> None:
        self.book = book
        self.files: dict[str, StoredFile] = {}
        self.max_file_bytes = MAX_FILE_BYTES
        self._ids = itertools.count(1)

    def respond(self, method: str, path: str, body: dict[str, Any], raw: bytes,
                headers: dict[str, str]) -> Answer | None:
        """The answer to a files or batches request, or None for any other path."""
        url = urlsplit(path)
        route = url.path.rstrip("/")
        if route == "/v1/files" and method == "POST":
            return self._upload(raw, headers)
        if route == "/v1/batches":
            return self._create(body) if method == "POST" else self._list(parse_qs(url.query))
        found = _FILE.match(route)
        if found and method == "GET":
            stored = self.files.get(found["id"])
            if stored is None:
                return invalid(f"No such File object: {found['id']}", "id", status=404)
            return (200, stored.data) if found["content"] else (200, stored.info())
        found = _BATCH.match(route)
        if found:
            batch = self.book.cancel(found["id"]) if found["cancel"] else self.book.poll(found["id"])
            if batch is None:
                return invalid(f"No batch found with id '{found['id']}'.", status=404)
            return 200, self.render(batch)
        return None

    def _upload(self, raw: bytes, headers: dict[str, str]) -> Answer:
        kind = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + kind.encode() + b"\r\n\r\n" + raw)
        fields = {part.get_param("name", header="content-disposition"): part for part in message.iter_parts()}
        upload, purpose = fields.get("file"), fields.get("purpose")
        if upload is None or purpose is None:
            return invalid("A file and its purpose are required.", "file")
        data = upload.get_payload(decode=True)
        if not isinstance(data, bytes):
            return invalid("The file part has no content.", "file")
        if len(data) > self.max_file_bytes:
            return invalid("File is too large.")
        stored = StoredFile(id=f"file-{next(self._ids):06d}", filename=upload.get_filename() or "upload.jsonl",
                            purpose=purpose.get_content().strip(), data=data, created_at=int(time.time()))
        self.files[stored.id] = stored
        return 200, stored.info()

    def _create(self, body: dict[str, Any]) -> Answer:
        stored = self.files.get(str(body.get("input_file_id")))
        if stored is None or stored.purpose != "batch":
            return invalid(f"Cannot find file {body.get('input_file_id')}.", "input_file_id")
        if body.get("endpoint") != "/v1/chat/completions":
            return invalid(f"Unsupported endpoint {body.get('endpoint')!r}.", "endpoint")
        if body.get("completion_window") != "24h":
            return invalid("completion_window must be '24h'.", "completion_window")
        items: list[tuple[str, dict[str, Any]]] = []
        problems: list[tuple[str, str, int | None]] = []
        models: set[Any] = set()
        for number, text in enumerate(stored.data.decode().splitlines(), start=1):
            try:
                line = json.loads(text)
                key, request = str(line["custom_id"]), dict(line["body"])
            except (ValueError, KeyError, TypeError):
                problems.append(("invalid_json_line", "This line is not parseable as valid JSON.", number))
                continue
            if line.get("url") != "/v1/chat/completions":
                problems.append(("url_mismatch", "The url does not match the batch's endpoint.", number))
            models.add(request.get("model"))
            items.append((key, request))
        if len(models) > 1:
            problems.append(("model_mismatch", "Every request of a batch must use the same model.", None))
        if len({key for key, _ in items}) != len(items):
            problems.append(("duplicate_custom_id", "The custom_id of each request must be unique.", None))
        tokens = sum(count_tokens(str(m.get("content", ""))) for _, r in items for m in r.get("messages", []))
        try:
            batch = self.book.create(str(next(iter(models), "")), items, dict(body.get("metadata") or {}), tokens,
                                     problems)
        except TokenLimitExceeded as exc:
            return invalid(str(exc), code="token_limit_exceeded", status=429)
        batch.extra.update(input_file_id=stored.id, endpoint=body["endpoint"])
        return 200, self.render(batch)

    def _list(self, query: dict[str, list[str]]) -> Answer:
        batches = self.book.listing()
        after = query.get("after", [None])[0]
        if after is not None:
            batches = [b for b in batches if b.id < after]  # newest first: the ones after are older
        limit = int(query.get("limit", ["20"])[0])
        page = [self.render(b) for b in batches[:limit]]
        return 200, {"object": "list", "data": page, "first_id": page[0]["id"] if page else None,
                     "last_id": page[-1]["id"] if page else None, "has_more": len(batches) > limit}

    def render(self, batch: FakeBatch) -> dict[str, Any]:
        """The batch as `GET /v1/batches/{id}` answers it, its result files written once it is finished."""
        if batch.state in TERMINAL and "output_file_id" not in batch.extra:
            self._write_results(batch)
        total, completed, failed = batch.counts
        shown = {field: batch.entered.get(state) for state, field in _TIMES.items()}
        errors = {"object": "list", "data": [{"code": code, "message": message, "param": None, "line": line}
                                             for code, message, line in batch.errors]} if batch.errors else None
        return {
            "id": batch.id, "object": "batch", "endpoint": batch.extra.get("endpoint", "/v1/chat/completions"),
            "errors": errors, "input_file_id": batch.extra.get("input_file_id", ""), "completion_window": "24h",
            "status": batch.state, "output_file_id": batch.extra.get("output_file_id"),
            "error_file_id": batch.extra.get("error_file_id"), "created_at": batch.created_at,
            "expires_at": batch.created_at + 24 * 3600, **shown,
            "request_counts": {"total": total, "completed": completed, "failed": failed},
            "metadata": batch.metadata,
        }

    def _write_results(self, batch: FakeBatch) -> None:
        answered: list[str] = []
        errored: list[str] = []
        for number, outcome in enumerate(batch.outcomes, start=1):
            line: dict[str, Any] = {"id": f"batch_req_{batch.id}_{number}", "custom_id": outcome.key,
                                    "response": None, "error": None}
            if outcome.status is None:
                line["error"] = {"code": outcome.code, "message": outcome.message}
            else:
                line["response"] = {"status_code": outcome.status, "request_id": f"req_{batch.id}_{number}",
                                    "body": outcome.body}
            (answered if outcome.succeeded else errored).append(json.dumps(line))
        batch.extra["output_file_id"] = self._store(f"{batch.id}_output.jsonl", answered) if answered else None
        batch.extra["error_file_id"] = self._store(f"{batch.id}_error.jsonl", errored) if errored else None

    def _store(self, filename: str, lines: list[str]) -> str:
        stored = StoredFile(id=f"file-{next(self._ids):06d}", filename=filename, purpose="batch_output",
                            data=("\n".join(lines) + "\n").encode(), created_at=int(time.time()))
        self.files[stored.id] = stored
        return stored.id
