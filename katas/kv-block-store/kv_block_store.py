"""KV block store: your solution goes here. Read the task (`kata show kv-block-store`) first.

Standard library only. `solution` gets every query of one call at once and returns one answer
string per query, in order:

    solution([["PUT", "acme", "blk:a1", "64"], ["GET", "acme", "blk:a1"],
              ["GET", "acme", "blk:zz"]])
    -> ["true", "64", ""]
"""

from __future__ import annotations


def solution(queries: list[list[str]]) -> list[str]:
    """Process `queries` in order, starting from an empty store; one answer per query."""
    # TODO: keep the store in a structure of your own, and dispatch on each query's operation.
    raise NotImplementedError
