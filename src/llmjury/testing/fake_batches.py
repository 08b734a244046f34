"""The state machine behind the fakes' batch endpoints, provider-neutral: a batch is created from
keyed request bodies, moves validating → in_progress → finalizing → completed on explicit steps
(or after a number of polls), and can be held, expired with part of its lines answered, cancelled,
failed at validation, or refused for the enqueued-token limit. Its lines are answered by the fake's
own synchronous route, so a batched answer is the answer the same request gets synchronously.

The fakes (llmjury.testing.fake_openai, fake_gemini) render batches in their provider's shapes;
tests drive the machine through `FakeServer.batches`.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

#: The states a batch passes through when all goes well, in order.
STEPS = ("validating", "in_progress", "finalizing", "completed")
#: The states a batch never leaves.
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})

#: What a line's request gets: a status and a body, as the synchronous route answers it.
LineAnswer = tuple[int, dict[str, Any]]


def never(key: str) -> bool:
    return False


@dataclass
class BatchScript:
    """How every batch of one fake behaves; a test sets it before it creates batches."""

    #: Move one step after this many polls (`retrieve`/`get`) of the batch; None: only on explicit steps.
    polls_per_step: int | None = None
    #: Keys whose line fails (answered with a server error, in the error file / as an inline error).
    fail: Callable[[str], bool] = never
    #: The enqueued prompt tokens allowed over all unfinished batches; None: no limit.
    token_limit: int | None = None
    #: How the limit is reported: HTTP 429 on create, or (as OpenAI does too) a batch that fails validating.
    over_limit: Literal["http_429", "failed"] = "http_429"


@dataclass
class LineOutcome:
    """How one line ended: answered (`status`, `body`), or not run at all (`code`, `message`)."""

    key: str
    status: int | None = None
    body: dict[str, Any] | None = None
    code: str | None = None
    message: str | None = None

    @property
    def succeeded(self) -> bool:
        return self.status == 200


@dataclass
class FakeBatch:
    id: str
    model: str
    items: list[tuple[str, dict[str, Any]]]
    metadata: dict[str, str]
    tokens: int
    state: str = "validating"
    created_at: int = field(default_factory=lambda: int(time.time()))
    #: When the batch entered each state it has been in (Unix seconds).
    entered: dict[str, int] = field(default_factory=dict)
    polls: int = 0
    held: bool = False
    #: Why validation failed: (code, message, line or None).
    errors: list[tuple[str, str, int | None]] = field(default_factory=list)
    outcomes: list[LineOutcome] = field(default_factory=list)
    #: Provider-specific extras the fake keeps with the batch (OpenAI's file ids).
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def counts(self) -> tuple[int, int, int]:
        """(total, completed, failed) lines, as OpenAI's `request_counts` reports them."""
        done = sum(1 for o in self.outcomes if o.succeeded)
        return len(self.items), done, len(self.outcomes) - done


class TokenLimitExceeded(Exception):
    """A create that would enqueue more prompt tokens than the script allows."""

    def __init__(self, model: str, limit: int, enqueued: int) -> None:
        super().__init__(f"Enqueued token limit reached for {model}. Limit: {limit:,} enqueued tokens; "
                         f"{enqueued:,} already enqueued. Please try again once some in_progress batches "
                         "have been completed.")


class BatchBook:
    """Every batch one fake has created, and the steps a test takes them through."""

    def __init__(self, answer: Callable[[dict[str, Any]], LineAnswer], prefix: str, max_lines: int | None) -> None:
        self._answer = answer
        self._prefix = prefix
        self.max_lines = max_lines
        self.script = BatchScript()
        self.batches: dict[str, FakeBatch] = {}
        self.creations = 0
        self._ids = itertools.count(1)
        self._lock = threading.RLock()

    def create(self, model: str, items: list[tuple[str, dict[str, Any]]], metadata: dict[str, str],
               tokens: int, problems: list[tuple[str, str, int | None]] | None = None) -> FakeBatch:
        """A new batch in `validating`, or already `failed` when its input has `problems` (the fake's
        own checks of its lines), too many lines, or tokens over the limit reported as a failure;
        raises TokenLimitExceeded when the script reports the limit as HTTP 429."""
        with self._lock:
            enqueued = sum(b.tokens for b in self.batches.values() if b.state not in TERMINAL)
            limit = self.script.token_limit
            over = limit is not None and enqueued + tokens > limit
            if over and self.script.over_limit == "http_429":
                raise TokenLimitExceeded(model, limit or 0, enqueued)
            batch = FakeBatch(id=f"{self._prefix}{next(self._ids):06d}", model=model, items=items,
                              metadata=metadata, tokens=tokens)
            batch.entered["validating"] = batch.created_at
            batch.errors.extend(problems or [])
            if self.max_lines is not None and len(items) > self.max_lines:
                batch.errors.append(("too_many_tasks", f"The batch has {len(items):,} requests; "
                                     f"at most {self.max_lines:,} are allowed per batch.", None))
            elif over:
                batch.errors.append(("token_limit_exceeded", str(TokenLimitExceeded(model, limit or 0, enqueued)),
                                     None))
            if batch.errors:
                self._enter(batch, "failed")
            self.batches[batch.id] = batch
            self.creations += 1
            return batch

    def get(self, batch_id: str) -> FakeBatch | None:
        """The batch, or None for an id this fake never gave out."""
        return self.batches.get(batch_id)

    def poll(self, batch_id: str) -> FakeBatch | None:
        """A client's look at a batch: it counts, and may move the batch on (BatchScript.polls_per_step)."""
        with self._lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return None
            batch.polls += 1
            every = self.script.polls_per_step
            if batch.state == "cancelling":
                self._finish(batch, "cancelled", 0.0, "batch_cancelled", "The batch was cancelled.")
            elif every is not None and not batch.held and batch.polls % every == 0:
                self.step(batch_id)
            return batch

    def listing(self) -> list[FakeBatch]:
        """Every batch, newest first (as both APIs list them)."""
        return sorted(self.batches.values(), key=lambda b: b.id, reverse=True)

    # -- what a test does to a batch ------------------------------------------------------------
    def step(self, batch_id: str) -> FakeBatch:
        """Move the batch one state on; reaching `completed` answers every line."""
        with self._lock:
            batch = self.batches[batch_id]
            if batch.state in TERMINAL or batch.state not in STEPS:
                return batch
            following = STEPS[STEPS.index(batch.state) + 1]
            if following == "completed":
                self._finish(batch, "completed", 1.0, "", "")
            else:
                self._enter(batch, following)
            return batch

    def complete(self, batch_id: str) -> FakeBatch:
        """Step the batch until it is finished."""
        with self._lock:
            batch = self.batches[batch_id]
            while batch.state not in TERMINAL and batch.state in STEPS:
                self.step(batch_id)
            return batch

    def hold(self, batch_id: str) -> None:
        """Keep the batch where it is whatever the polls (a slow batch)."""
        self.batches[batch_id].held = True

    def expire(self, batch_id: str, answered: float) -> FakeBatch:
        """End the batch `expired` with its first `answered` share of lines answered and the rest
        failed with `batch_expired`, as a batch whose completion window ran out."""
        with self._lock:
            batch = self.batches[batch_id]
            self._finish(batch, "expired", answered, "batch_expired",
                         "This request could not be executed before the completion window expired.")
            return batch

    def cancel(self, batch_id: str) -> FakeBatch | None:
        """A client's cancel: `cancelling` now, `cancelled` at its next poll (its lines then fail
        with `batch_cancelled`)."""
        with self._lock:
            batch = self.batches.get(batch_id)
            if batch is not None and batch.state not in TERMINAL:
                self._enter(batch, "cancelling")
            return batch

    # -- plumbing ---------------------------------------------------------------------------------
    def _enter(self, batch: FakeBatch, state: str) -> None:
        batch.state = state
        batch.entered[state] = int(time.time())

    def _finish(self, batch: FakeBatch, state: str, answered: float, code: str, message: str) -> None:
        if batch.outcomes:  # answered already (a cancel that raced a step)
            return
        cut = round(len(batch.items) * answered)
        for position, (key, body) in enumerate(batch.items):
            if position >= cut:
                batch.outcomes.append(LineOutcome(key, code=code, message=message))
            elif self.script.fail(key):
                batch.outcomes.append(LineOutcome(key, status=500, body={"error": {
                    "message": "The server had an error processing this request.", "type": "server_error",
                    "code": "server_error"}}))
            else:
                status, answer = self._answer(body)
                batch.outcomes.append(LineOutcome(key, status=status, body=answer))
        if "finalizing" not in batch.entered and state == "completed":
            self._enter(batch, "finalizing")
        self._enter(batch, state)
