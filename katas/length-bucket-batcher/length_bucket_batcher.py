"""Length-bucketed batching: your solution goes here. Read PROMPT.md first.

Standard library only. Keep the three dataclasses as they are.

Example:
    plan_buckets([Request("a", 3), Request("b", 4)], [4, 8], 16, 3)
    -> BucketPlan([Batch(4, ["a", "b"], 8, 7, "end")], [], {4: 1, 8: 0}, 1)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Request:
    id: str
    tokens: int  # the request's length, an int >= 1


@dataclass(frozen=True)
class Batch:
    bucket: int  # the bucket's length
    request_ids: list[str]  # in the order they joined
    padded_tokens: int  # len(request_ids) * bucket
    useful_tokens: int  # sum of their tokens
    reason: str  # "budget" | "full" | "end"


@dataclass(frozen=True)
class BucketPlan:
    batches: list[Batch]  # in the order they closed
    rejected: list[str]  # ids longer than the largest boundary, in input order
    waste_by_bucket: dict[int, int]  # every boundary -> sum of padded - useful of its batches
    padding_waste: int  # sum of waste_by_bucket's values


def plan_buckets(requests: list[Request], boundaries: list[int],
                 max_batch_tokens: int, max_batch_size: int) -> BucketPlan:
    """Put each request in the smallest bucket >= its tokens and form batches per bucket.

    A batch closes "budget" before a request that would make its padded tokens exceed
    max_batch_tokens, "full" when it reaches max_batch_size requests, and "end" after the last
    request (in increasing bucket order). Raises ValueError naming the bad argument or field
    (requests, id, tokens, boundaries, max_batch_tokens, max_batch_size), in the prompt's order.
    """
    # TODO
    raise NotImplementedError
