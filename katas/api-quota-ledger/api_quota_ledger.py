"""API quota ledger: your solution goes here. Read the task (`kata show api-quota-ledger`) first.

Standard library only. `solution` gets every query of one call at once (each a list of strings)
and returns one answer string per query, in order, starting from an empty ledger on every call:

    solution([["OPEN", "acme", "free"], ["RECORD", "acme", "m-s", "600"], ["BALANCE", "acme"]])
    -> ["true", "u1", "400"]
"""

from __future__ import annotations


def solution(queries: list[list[str]]) -> list[str]:
    """Process `queries` in order, starting from an empty ledger; one answer per query.

    Must not modify `queries`.
    """
    # TODO: keep the ledger in a structure of your own, and dispatch on each query's operation.
    raise NotImplementedError
