"""The Gemini API's batch mode, as google-genai calls it: `batches.create` (inline requests, or a file
name), `batches.get`, `batches.list` (pageSize/pageToken), `batches.cancel`, and `files.download` of a
result file. Batches run on llmjury.testing.fake_batches; a batch of inline requests answers inline,
one read from a file answers in a result file. Files arrive by the SDK's resumable upload
(`files.upload`), or from a test with `put_file`.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

from llmjury.testing.fake_batches import TERMINAL, BatchBook, FakeBatch, LineOutcome, TokenLimitExceeded
from llmjury.testing.fake_server import Answer, Headed, count_tokens

#: Inline requests travel in the create call itself, which may carry at most 20 MB.
MAX_INLINE_BYTES = 20 * 1024 * 1024
_CREATE = re.compile(r"^/(?P<version>v1\w*)/models/(?P<model>[^:/]+):batchGenerateContent$")
_BATCH = re.compile(r"^/v1\w*/batches/(?P<id>[^:/]+)(?P<cancel>:cancel)?$")
_UPLOAD = re.compile(r"^/upload/v1\w*/files$")
_DOWNLOAD = re.compile(r"^/v1\w*/files/(?P<name>[^:/]+):download$")
STATES = {"validating": "BATCH_STATE_PENDING", "in_progress": "BATCH_STATE_RUNNING",
          "finalizing": "BATCH_STATE_RUNNING", "cancelling": "BATCH_STATE_RUNNING",
          "completed": "BATCH_STATE_SUCCEEDED", "failed": "BATCH_STATE_FAILED",
          "expired": "BATCH_STATE_EXPIRED", "cancelled": "BATCH_STATE_CANCELLED"}
#: google.rpc codes of the lines that did not run: the window ran out, the batch was cancelled.
_NOT_RUN = {"batch_expired": 4, "batch_cancelled": 1}


def rfc3339(seconds: int | None) -> str | None:
    return None if seconds is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def status_error(status: int, name: str, message: str) -> Answer:
    """An error answer in the Gemini API's shape."""
    return status, {"error": {"code": status, "message": message, "status": name}}


class GeminiBatchRoutes:
    """The batches a fake Gemini server runs and the files it holds."""

    def __init__(self, book: BatchBook) -> None:
        self.book = book
        self.files: dict[str, bytes] = {}
        self.max_inline_bytes = MAX_INLINE_BYTES
        self._uploads: dict[str, tuple[dict[str, Any], bytearray]] = {}
        self._ids = itertools.count(1)

    def put_file(self, name: str, data: bytes) -> str:
        """Hold `data` as the file `files/<name>`, for a batch created from it; returns that name."""
        self.files[name] = data
        return f"files/{name}"

    def upload(self, path: str, body: dict[str, Any], raw: bytes, headers: dict[str, str]) -> Headed | None:
        """A step of a resumable upload: `start` answers the URL to send the bytes to (its id is the
        credential, as the real API's is), each chunk after it `active`, the last one (`finalize`)
        the file. None for any other request."""
        url = urlsplit(path)
        if not _UPLOAD.match(url.path):
            return None
        lowered = {k.lower(): v for k, v in headers.items()}
        upload_id = parse_qs(url.query).get("upload_id", [None])[0]
        if upload_id is None:
            upload_id = str(next(self._ids))
            self._uploads[upload_id] = (dict(body.get("file") or {}), bytearray())
            where = f"http://{lowered.get('host', '127.0.0.1')}{url.path}?upload_id={upload_id}"
            return Headed(200, {}, {"x-goog-upload-url": where, "x-goog-upload-status": "active"})
        if upload_id not in self._uploads:
            return Headed(404, {"error": {"code": 404, "message": "no such upload", "status": "NOT_FOUND"}}, {})
        meta, data = self._uploads[upload_id]
        data.extend(raw)
        if "finalize" not in lowered.get("x-goog-upload-command", ""):
            return Headed(200, {}, {"x-goog-upload-status": "active"})
        del self._uploads[upload_id]
        name = str(meta.get("name") or f"upload-{upload_id}").removeprefix("files/")
        self.files[name] = bytes(data)
        resource = {"name": f"files/{name}", "displayName": meta.get("displayName", name),
                    "mimeType": meta.get("mimeType", "application/octet-stream"), "sizeBytes": str(len(data)),
                    "createTime": rfc3339(int(time.time())), "state": "ACTIVE", "source": "UPLOADED"}
        return Headed(200, {"file": resource}, {"x-goog-upload-status": "final"})

    def respond(self, method: str, path: str, body: dict[str, Any], raw: bytes) -> Answer | None:
        """The answer to a batch or file-download request, or None for any other path."""
        url = urlsplit(path)
        found = _CREATE.match(url.path)
        if found and method == "POST":
            return self._create(found["model"], body.get("batch") or {}, len(raw))
        if re.match(r"^/v1\w*/batches$", url.path) and method == "GET":
            return self._list(parse_qs(url.query))
        found = _BATCH.match(url.path)
        if found:
            batch = self.book.cancel(found["id"]) if found["cancel"] else self.book.poll(found["id"])
            if batch is None:
                return status_error(404, "NOT_FOUND", f"Batch batches/{found['id']} not found.")
            return 200, ({} if found["cancel"] else self.render(batch))
        found = _DOWNLOAD.match(url.path)
        if found and method == "GET":
            data = self.files.get(found["name"])
            return status_error(404, "NOT_FOUND", f"File files/{found['name']} not found.") if data is None \
                else (200, data)
        return None

    def _create(self, model: str, batch: dict[str, Any], size: int) -> Answer:
        source = batch.get("inputConfig") or {}
        if "fileName" in source:
            data = self.files.get(str(source["fileName"]).removeprefix("files/"))
            if data is None:
                return status_error(400, "INVALID_ARGUMENT", f"File {source['fileName']} not found.")
            lines = [json.loads(text) for text in data.decode().splitlines() if text.strip()]
            items = [(str(line["key"]), dict(line["request"])) for line in lines]
        else:
            if size > self.max_inline_bytes:
                return status_error(400, "INVALID_ARGUMENT", "Request payload size exceeds the limit: "
                                    f"{self.max_inline_bytes} bytes.")
            inline = (source.get("requests") or {}).get("requests") or []
            items = [(str((r.get("metadata") or {}).get("key", position)), dict(r.get("request") or {}))
                     for position, r in enumerate(inline)]
        tokens = sum(count_tokens(p.get("text", "")) for _, r in items for c in r.get("contents", [])
                     for p in c.get("parts", []))
        try:
            created = self.book.create(model, items, {"displayName": str(batch.get("displayName", ""))}, tokens)
        except TokenLimitExceeded as exc:
            return status_error(429, "RESOURCE_EXHAUSTED", str(exc))
        created.extra["file_source"] = "fileName" in source
        return 200, self.render(created)

    def _list(self, query: dict[str, list[str]]) -> Answer:
        batches = self.book.listing()
        token = query.get("pageToken", [None])[0]
        if token:
            batches = [b for b in batches if b.id < token]
        size = int(query.get("pageSize", ["50"])[0])
        page: dict[str, Any] = {"operations": [self.render(b) for b in batches[:size]]}
        if len(batches) > size:
            page["nextPageToken"] = batches[size - 1].id
        return 200, page

    def render(self, batch: FakeBatch) -> dict[str, Any]:
        """The batch as an Operation, its output inline or in a result file once it is finished."""
        total, completed, failed = batch.counts
        metadata: dict[str, Any] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
            "model": f"models/{batch.model}", "displayName": batch.metadata.get("displayName", ""),
            "state": STATES[batch.state], "createTime": rfc3339(batch.created_at),
            "updateTime": rfc3339(max(batch.entered.values())),
            "batchStats": {"requestCount": str(total), "successfulRequestCount": str(completed),
                           "failedRequestCount": str(failed), "pendingRequestCount": str(total - len(batch.outcomes))},
        }
        operation: dict[str, Any] = {"name": f"batches/{batch.id}", "metadata": metadata,
                                     "done": batch.state in TERMINAL}
        if batch.state in TERMINAL:
            metadata["endTime"] = rfc3339(batch.entered[batch.state])
        if batch.errors:
            operation["error"] = {"code": 3, "message": "; ".join(message for _, message, _ in batch.errors)}
        elif batch.outcomes:
            answers = [self._answer(outcome) for outcome in batch.outcomes]
            if batch.extra.get("file_source"):
                name = f"batch-{batch.id}-results"
                self.files.setdefault(name, "".join(json.dumps(a) + "\n" for a in answers).encode())
                metadata["output"] = {"responsesFile": f"files/{name}"}
            else:
                inlined = [{"metadata": {"key": a.pop("key")}, **a} for a in answers]
                metadata["output"] = {"inlinedResponses": {"inlinedResponses": inlined}}
        return operation

    def _answer(self, outcome: LineOutcome) -> dict[str, Any]:
        if outcome.status is None:
            return {"key": outcome.key, "error": {"code": _NOT_RUN.get(outcome.code or "", 2),
                                                  "message": outcome.message}}
        if outcome.succeeded:
            return {"key": outcome.key, "response": outcome.body}
        error = (outcome.body or {}).get("error") or {}
        return {"key": outcome.key, "error": {"code": 13, "message": error.get("message", "internal error")}}
