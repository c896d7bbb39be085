"""Replica router: your solution goes here. Read the task (`kata show replica-router`) first.

Standard library only. Keep the signature of `solution`; add any classes and helpers you like
(a class holding the router's state, with one method per operation, works well). Every level
extends the same code, and every submission re-runs every open level.

Example (level 1):
    solution([["ADD_REPLICA", "r1", "1"], ["ROUTE", "q1", "acme"], ["ROUTE", "q2", "acme"],
              ["COMPLETE", "q1"], ["STATUS", "q2"]])
    -> ["true", "r1", "queued", "true", "r1"]
"""

from __future__ import annotations


def solution(queries: list[list[str]]) -> list[str]:
    """Run the queries in order against a new, empty router; return one string per query.

    Each query is a list of strings: an operation name, then its arguments, for example
    ["ROUTE", "q1", "acme"]; each answer is a string. Do not modify `queries`.
    """
    # TODO
    raise NotImplementedError
