"""Length-bucketed batching: reference solution.

Each request goes to the smallest bucket whose length holds it (bisect_left over the boundaries);
each bucket keeps one open batch, closed by the token budget, by the size limit, or at the end.

Example:
    plan_buckets([Request("a", 3), Request("b", 4)], [4, 8], 16, 3)
    -> BucketPlan([Batch(4, ["a", "b"], 8, 7, "end")], [], {4: 1, 8: 0}, 1)
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass


@dataclass(frozen=True)
class Request:
    id: str
    tokens: int


@dataclass(frozen=True)
class Batch:
    bucket: int
    request_ids: list[str]
    padded_tokens: int
    useful_tokens: int
    reason: str


@dataclass(frozen=True)
class BucketPlan:
    batches: list[Batch]
    rejected: list[str]
    waste_by_bucket: dict[int, int]
    padding_waste: int


def _is_int(x) -> bool:
    return type(x) is int  # a bool is not an int here


def _check(requests, boundaries, max_batch_tokens, max_batch_size) -> None:
    if not isinstance(requests, list):
        raise ValueError("requests must be a list")
    seen = set()
    for r in requests:  # each item fully before the next: the first broken rule wins
        if not isinstance(r, Request):
            raise ValueError(f"requests must hold Request items, got {r!r}")
        if not isinstance(r.id, str):
            raise ValueError(f"id must be a str, got {r.id!r}")
        if not _is_int(r.tokens) or r.tokens < 1:
            raise ValueError(f"tokens must be an int >= 1, got {r.tokens!r} (request {r.id!r})")
        if r.id in seen:
            raise ValueError(f"id {r.id!r} is used twice")
        seen.add(r.id)
    if not isinstance(boundaries, list) or not boundaries \
            or not all(_is_int(b) and b >= 1 for b in boundaries) \
            or any(a >= b for a, b in zip(boundaries, boundaries[1:])):
        raise ValueError("boundaries must be a non-empty, strictly increasing list of ints >= 1")
    if not _is_int(max_batch_tokens) or max_batch_tokens < boundaries[-1]:
        raise ValueError(f"max_batch_tokens must be an int >= {boundaries[-1]}, "
                         f"got {max_batch_tokens!r}")
    if not _is_int(max_batch_size) or max_batch_size < 1:
        raise ValueError(f"max_batch_size must be an int >= 1, got {max_batch_size!r}")


def plan_buckets(requests: list[Request], boundaries: list[int],
                 max_batch_tokens: int, max_batch_size: int) -> BucketPlan:
    _check(requests, boundaries, max_batch_tokens, max_batch_size)
    open_ids: dict[int, list[str]] = {}  # bucket -> ids of its open batch
    open_useful: dict[int, int] = {}  # bucket -> sum of their tokens
    waste = {b: 0 for b in boundaries}
    batches: list[Batch] = []
    rejected: list[str] = []

    def close(bucket: int, reason: str) -> None:
        ids = open_ids.pop(bucket)
        useful = open_useful.pop(bucket)
        padded = len(ids) * bucket
        waste[bucket] += padded - useful
        batches.append(Batch(bucket, ids, padded, useful, reason))

    for r in requests:
        i = bisect_left(boundaries, r.tokens)  # smallest boundary >= tokens
        if i == len(boundaries):
            rejected.append(r.id)
            continue
        bucket = boundaries[i]
        if bucket in open_ids and (len(open_ids[bucket]) + 1) * bucket > max_batch_tokens:
            close(bucket, "budget")
        open_ids.setdefault(bucket, []).append(r.id)
        open_useful[bucket] = open_useful.get(bucket, 0) + r.tokens
        if len(open_ids[bucket]) == max_batch_size:
            close(bucket, "full")
    for bucket in sorted(open_ids):
        close(bucket, "end")
    return BucketPlan(batches, rejected, waste, sum(waste.values()))
