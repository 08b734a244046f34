"""The seeded order a sequential run judges its cases in: the same in every process and every rerun
with the same seed, so workers agree on each look and a rerun of a red job continues its record."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def rank(case_id: str, seed: int) -> bytes:
    """A case's place in the seeded order: a hash of the seed and its id (no shared random state)."""
    return hashlib.blake2b(f"{seed}:{case_id}".encode(), digest_size=8).digest()


def in_seeded_order(case_ids: Iterable[str], seed: int) -> list[str]:
    """The distinct case ids, shuffled by the seed."""
    return sorted(set(case_ids), key=lambda case: (rank(case, seed), case))


def batches(case_ids: Iterable[str], seed: int, size: int) -> list[list[str]]:
    """The seeded order cut into batches of `size` cases: a look follows each batch."""
    ordered = in_seeded_order(case_ids, seed)
    return [ordered[i:i + size] for i in range(0, len(ordered), size)]
