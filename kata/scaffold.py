"""`kata new SLUG`: scaffold every file of a new kata, pre-filled with a tiny worked example.

The example ("how many requests fit a token budget", two levels) is complete and valid as
scaffolded: its reference passes, its stub fails every level and its one bug is caught, so
`kata validate SLUG` is green before the author changes a line. The author then replaces it.
`kata new --project SLUG` writes a project question instead: four gated levels in the
solution(queries) style (a request queue), its hidden suite on kata.checks with an oracle
module, and one zoo bug per level; it validates as it stands too.
Nothing is ever overwritten: if any target file exists, nothing is written.
"""

from __future__ import annotations

from pathlib import Path
from string import Template

from kata.catalog import SLUG_RE, CatalogError, Workbook

KATA_TOML = Template('''\
slug = "$slug"
title = "$title"
summary = "Count how many queued requests fit a token budget (replace with your kata's summary)."
difficulty = "easy"
minutes = 15
module = "$module.py"
tags = ["example"]

[[levels]]
name = "Admit in order"
points = 10
hints = ["Walk the queue in order and keep a running total.", "Equality with the budget still fits."]

[[levels]]
name = "Reject bad input"
points = 10
hints = ["Check every size before admitting anything."]
''')

PROMPT = Template('''\
# $title

A server admits queued requests in order while their prompt tokens fit a budget.

## Level 1: admit in order
`count_admitted(sizes: list[int], budget: int) -> int` returns how many requests, taken from the
front of `sizes` in order, fit in `budget` tokens together. A request fits when the running total
including it is `<=` budget; the first one that does not fit stops admission (later, smaller ones
are not considered). An empty queue admits 0.

Example: `count_admitted([3, 4, 5], 7) -> 2` (3 + 4 = 7 fits exactly; 12 does not).

## Level 2: reject bad input
A negative budget or a size `<= 0` raises `ValueError` whose message names the argument
(`budget` or `sizes`), before anything is admitted.

Example: `count_admitted([2, 0], 5)` raises `ValueError("sizes[1] must be positive")`.
''')

STUB = Template('''\
"""$title: your solution goes here. Standard library only."""

from __future__ import annotations


def count_admitted(sizes: list[int], budget: int) -> int:
    """How many requests from the front of `sizes` fit in `budget` tokens together.

    Example: count_admitted([3, 4, 5], 7) -> 2
    """
    # TODO: level 1, admit in order while the running total is <= budget
    # TODO: level 2, raise ValueError naming `budget` or `sizes` on bad input
    raise NotImplementedError
''')

SOLUTION = Template('''\
"""$title: reference solution."""

from __future__ import annotations


def count_admitted(sizes: list[int], budget: int) -> int:
    """How many requests from the front of `sizes` fit in `budget` tokens together."""
    if budget < 0:
        raise ValueError("budget must be >= 0")
    for i, size in enumerate(sizes):
        if size <= 0:
            raise ValueError(f"sizes[{i}] must be positive")
    total = 0
    for admitted, size in enumerate(sizes):
        total += size
        if total > budget:  # equality still fits
            return admitted
    return len(sizes)
''')

VISIBLE = Template('''\
"""Visible examples for $slug: run with `kata check $slug`."""

import pytest


@pytest.mark.level(1)
def test_prompt_example(impl):
    assert impl.count_admitted([3, 4, 5], 7) == 2


@pytest.mark.level(1)
def test_empty_queue(impl):
    assert impl.count_admitted([], 10) == 0


@pytest.mark.level(2)
def test_zero_size_rejected(impl):
    with pytest.raises(ValueError, match="sizes"):
        impl.count_admitted([2, 0], 5)
''')

GRADER = Template('''\
"""Hidden suite for $slug. Every test: level, points, edge (kata.checks.graded)."""

from hypothesis import example, given, strategies as st

# the graders' toolkit: type-strict checks, never `got == expected` in a grader
from kata.checks import check, check_raises, graded, property_settings

PROPERTY = property_settings()


def oracle(sizes, budget):
    """Slow and obviously right: try every prefix."""
    best = 0
    for n in range(len(sizes) + 1):
        if sum(sizes[:n]) <= budget:
            best = n
        else:
            break
    return best


@graded(1, 2, "a total exactly equal to the budget fits")
def test_equal_to_budget_fits(impl):
    check(impl.count_admitted([5, 5], 10), 2, "count_admitted([5, 5], 10)")


@graded(1, 2, "admission stops at the first request that does not fit")
def test_stops_at_first_misfit(impl):
    check(impl.count_admitted([4, 9, 1], 10), 1, "count_admitted([4, 9, 1], 10)")


@graded(1, 1, "an empty queue admits nothing")
def test_empty(impl):
    check(impl.count_admitted([], 0), 0, "count_admitted([], 0)")


@graded(1, 3, "random queues agree with a prefix-by-prefix oracle")
@PROPERTY
@given(st.lists(st.integers(1, 20), max_size=12), st.integers(0, 100))
@example([1], 0)
def test_matches_oracle(impl, sizes, budget):
    check(impl.count_admitted(sizes, budget), oracle(sizes, budget), f"count_admitted({sizes}, {budget})")


@graded(2, 1, "a negative budget raises ValueError naming budget")
def test_negative_budget(impl):
    check_raises(lambda: impl.count_admitted([1], -1), "budget", "count_admitted([1], -1)", anywhere=True)


@graded(2, 1, "a size of zero is rejected")
def test_zero_size(impl):
    check_raises(lambda: impl.count_admitted([0], 5), "sizes", "count_admitted([0], 5)", anywhere=True)


@graded(2, 1, "a bad size after a fitting one is still rejected")
def test_bad_size_late(impl):
    check_raises(lambda: impl.count_admitted([1, 1, -3], 1), "sizes", "count_admitted([1, 1, -3], 1)", anywhere=True)
''')

# The example zoo entry: one mistake in the reference, as a patch (see kata/zoo.py). The scaffold
# makes it from the reference's text, so it always applies to the reference it ships with.
BUG_MISTAKE = ("        if total > budget:", "        if total >= budget:")
BUG_HEADER = {
    "Bug": "a total equal to the budget is treated as over it (>= instead of >)",
    "Level": "1",
    "Breaks": "a total exactly equal to the budget fits",
}


# --- `kata new --project SLUG`: a project question in four gated levels ------------------------
#
# The solution(queries) style: one function gets a list of queries (each a list of strings) and
# returns one answer string per query. A request queue: add, get, cancel; totals and TOP; time to
# live; the total at a past timestamp. Its hidden suite is on kata.checks (graded, run_queries,
# query_lines) with an oracle module that conftest.py loads, and each level's suite runs the
# earlier levels' examples again in its own kind of call.

PROJECT_KATA_TOML = Template('''\
slug = "$slug"
title = "$title"
summary = "A project question in four levels: a request queue, then totals, expiry and its past (replace with your project's summary)."
difficulty = "medium"
minutes = 60
module = "$module.py"
tags = ["project", "example"]

[[levels]]
name = "Add, get, cancel"
points = 25
hints = ["A dict from id to tokens answers every level-1 query; start a new one inside solution() on every call."]

[[levels]]
name = "Totals and the largest requests"
points = 25
hints = ["sorted(items, key=lambda item: (-item[1], item[0])) gives most tokens first, ties by id."]

[[levels]]
name = "Timestamps and time to live"
points = 25
hints = ["Keep each request's expiry (None for never) beside its tokens, and one helper that says which requests are held now."]

[[levels]]
name = "The past"
points = 25
hints = ["Keep a copy of the requests after each timestamp's queries; bisect finds the last one at or before t."]
''')

PROJECT_PROMPT = Template('''\
# $title

An inference server queues requests, each with a number of prompt tokens, until a worker takes
them. You are writing the queue's bookkeeping. (This is the worked example `kata new --project`
writes: replace it with your own project.)

This is a project question: four levels extend the same code. Your `solution` is driven with a
list of queries and its answers are compared exactly. A level opens when every hidden test of the
level before passes, and every submission re-runs the tests of every open level: a change made
for level 4 must keep levels 1 to 3 right.

## Queries and answers (every level)

```python
def solution(queries: list[list[str]]) -> list[str]
```

* A query is a list of strings: an operation name, then its arguments. Process the queries in
  order, starting from an empty queue, and return one answer string per query, in order. Keep no
  state between calls, and do not modify `queries`.
* Every query is well formed. Ids are non-empty strings of letters and digits, compared as strings
  (`"r10"` comes before `"r2"`). Token counts are decimal integers from 1 up to 10^18: keep sums
  exact.
* A request is **held** from the query that adds it until it is cancelled (or, from level 3 on,
  until it expires). Every operation sees only the requests held at that moment.

## Level 1: add, get, cancel

* `ADD id tokens` holds a new request and answers `"true"`; if `id` is held already it answers
  `"false"` and changes nothing.
* `GET id` answers the held request's tokens, or `""` if `id` is not held.
* `CANCEL id` stops holding the request and answers `"true"`, or `"false"` if `id` is not held. A
  cancelled id can be added again.

Example: `[["ADD", "r1", "40"], ["ADD", "r1", "99"], ["GET", "r1"], ["CANCEL", "r1"], ["GET", "r1"]]`
-> `["true", "false", "40", "true", ""]`.

## Level 2: totals and the largest requests

* `TOTAL` answers the sum of the held requests' tokens (`"0"` when none is held).
* `TOP n` answers the `n` largest held requests as `id(tokens)` items joined by `,`: most tokens
  first, ties by id ascending; fewer items when fewer are held, and `""` when there are none or
  `n` is `0`.

Example: `[["ADD", "a", "5"], ["ADD", "b", "9"], ["ADD", "c", "5"], ["TOP", "2"], ["TOTAL"]]` ->
`["true", "true", "true", "b(9),a(5)", "19"]`.

## Level 3: timestamps and time to live

* A call's queries either all start with a timestamp (a decimal integer, never decreasing from
  one query to the next) or none does; without timestamps, levels 1 and 2 work as before.
* `ADD_WITH_TTL id tokens ttl` is `ADD` for a request that expires: added at timestamp `t`, it is
  held while the timestamp is `< t + ttl` (`ttl` is at least 1). An expired request is not held:
  `GET` answers `""`, `CANCEL` answers `"false"`, `ADD` adds it again, `TOTAL` and `TOP` leave it
  out.

Example: `[["0", "ADD_WITH_TTL", "a", "7", "5"], ["4", "GET", "a"], ["5", "GET", "a"], ["5", "ADD", "a", "3"]]`
-> `["true", "7", "", "true"]`.

## Level 4: the past

* `TOTAL_AT t` answers what `TOTAL` was at timestamp `t`: the requests as they were after the last
  query at or before `t`, held at `t` (a request that expires before `t` is left out). `"0"` when
  `t` is before the call's first query, and `""` when `t` is after the current timestamp.

Example: `[["0", "ADD_WITH_TTL", "a", "7", "5"], ["2", "ADD", "b", "3"], ["9", "CANCEL", "b"], ["9", "TOTAL_AT", "2"], ["9", "TOTAL_AT", "6"], ["9", "TOTAL_AT", "10"]]`
-> `["true", "true", "true", "10", "3", ""]`.
''')

PROJECT_STUB = Template('''\
"""$title: your solution goes here. Read the task (`kata show $slug`) first.

Standard library only. `solution` gets every query of one call at once and returns one answer
string per query, in order:

    solution([["ADD", "r1", "40"], ["GET", "r1"], ["GET", "r9"]]) -> ["true", "40", ""]
"""

from __future__ import annotations


def solution(queries: list[list[str]]) -> list[str]:
    """Process `queries` in order, starting from an empty queue; one answer per query."""
    # TODO: keep the queue in a structure of your own, and dispatch on each query's operation.
    raise NotImplementedError
''')

PROJECT_VISIBLE = Template('''\
"""Visible examples for $slug, one level at a time: run them with `kata check $slug`."""

import pytest


def check(impl, queries, expected):
    got = impl.solution([list(query) for query in queries])
    assert got == expected, f"Called solution({queries}). Returned {got!r}, expected {expected!r}."


@pytest.mark.level(1)
def test_level1_example(impl):
    check(impl, [["ADD", "r1", "40"], ["ADD", "r1", "99"], ["GET", "r1"], ["CANCEL", "r1"], ["GET", "r1"]],
          ["true", "false", "40", "true", ""])


@pytest.mark.level(1)
def test_add_again_after_cancel(impl):
    check(impl, [["ADD", "a", "1"], ["CANCEL", "a"], ["ADD", "a", "2"], ["GET", "a"]], ["true", "true", "true", "2"])


@pytest.mark.level(2)
def test_level2_example(impl):
    check(impl, [["ADD", "a", "5"], ["ADD", "b", "9"], ["ADD", "c", "5"], ["TOP", "2"], ["TOTAL"]],
          ["true", "true", "true", "b(9),a(5)", "19"])


@pytest.mark.level(2)
def test_empty_total_and_top(impl):
    check(impl, [["TOTAL"], ["TOP", "1"]], ["0", ""])


@pytest.mark.level(3)
def test_level3_example(impl):
    check(impl, [["0", "ADD_WITH_TTL", "a", "7", "5"], ["4", "GET", "a"], ["5", "GET", "a"], ["5", "ADD", "a", "3"]],
          ["true", "7", "", "true"])


@pytest.mark.level(3)
def test_expired_leaves_total(impl):
    check(impl, [["0", "ADD_WITH_TTL", "a", "7", "2"], ["0", "ADD", "b", "1"], ["2", "TOTAL"]], ["true", "true", "1"])


@pytest.mark.level(4)
def test_level4_example(impl):
    check(impl, [["0", "ADD_WITH_TTL", "a", "7", "5"], ["2", "ADD", "b", "3"], ["9", "CANCEL", "b"],
                 ["9", "TOTAL_AT", "2"], ["9", "TOTAL_AT", "6"], ["9", "TOTAL_AT", "10"]],
          ["true", "true", "true", "10", "3", ""])


@pytest.mark.level(4)
def test_total_at_before_the_first_query(impl):
    check(impl, [["3", "ADD", "a", "1"], ["3", "TOTAL_AT", "0"]], ["true", "0"])
''')

PROJECT_SOLUTION = Template('''\
"""$title: reference solution.

One structure serves every level: each request id maps to (tokens, expiry), the expiry None for a
request that never expires. A request is held at timestamp t while t < expiry. Calls with
timestamps also keep, for level 4, the requests as they were after each timestamp's queries.
"""

from __future__ import annotations

from bisect import bisect_right


class _Queue:
    def __init__(self) -> None:
        self.requests: dict[str, tuple[int, int | None]] = {}  # id -> (tokens, expiry or None)
        self.now = 0
        self.times: list[int] = []  # level 4: each timestamp seen, ascending
        self.states: list[dict[str, tuple[int, int | None]]] = []  # the requests after its queries

    def held(self, at: int | None = None, requests=None) -> dict[str, int]:
        """id -> tokens of the requests held at `at` (default: now)."""
        at = self.now if at is None else at
        requests = self.requests if requests is None else requests
        return {rid: tokens for rid, (tokens, expiry) in requests.items() if expiry is None or at < expiry}

    # --- level 1 ----------------------------------------------------------------------------

    def add(self, rid: str, tokens: str, ttl: str | None = None) -> str:
        if rid in self.held():
            return "false"
        self.requests[rid] = (int(tokens), None if ttl is None else self.now + int(ttl))
        return "true"

    def get(self, rid: str) -> str:
        held = self.held()
        return str(held[rid]) if rid in held else ""

    def cancel(self, rid: str) -> str:
        if rid not in self.held():
            return "false"
        del self.requests[rid]
        return "true"

    # --- level 2 ----------------------------------------------------------------------------

    def total(self) -> str:
        return str(sum(self.held().values()))

    def top(self, n: str) -> str:
        ranked = sorted(self.held().items(), key=lambda item: (-item[1], item[0]))
        return ",".join(f"{rid}({tokens})" for rid, tokens in ranked[:int(n)])

    # --- level 4 ----------------------------------------------------------------------------

    def total_at(self, t: str) -> str:
        at = int(t)
        if at > self.now:
            return ""  # the future is not known yet
        i = bisect_right(self.times, at)
        return str(sum(self.held(at, self.states[i - 1]).values())) if i else "0"

    def record(self) -> None:
        """Keep the requests as they are after a query at `now` (the last query at a time wins)."""
        if self.times and self.times[-1] == self.now:
            self.states[-1] = dict(self.requests)
        else:
            self.times.append(self.now)
            self.states.append(dict(self.requests))


def solution(queries: list[list[str]]) -> list[str]:
    """Process `queries` in order, starting from an empty queue; one answer per query."""
    queue = _Queue()
    timed = bool(queries) and queries[0][0].isdigit()
    answers = []
    for query in queries:
        if timed:
            queue.now = int(query[0])
            query = query[1:]
        op, args = query[0], query[1:]
        if op == "ADD_WITH_TTL":
            answers.append(queue.add(*args))
        else:
            answers.append(getattr(queue, op.lower())(*args))
        if timed:
            queue.record()
    return answers
''')

PROJECT_ORACLE = Template('''\
"""Shared helpers of the $slug hidden suite: a slow oracle written from PROMPT.md, and random calls
for the property tests (kata.checks.run_queries makes the calls and compares the answers).

The oracle shares no structure with the reference: it keeps a log of the changes that took effect
(adds and cancels, with their timestamps) and answers every query by replaying the whole log.
Slow and obviously right.
"""

from __future__ import annotations

import random

from hypothesis import strategies as st


def _replay(log, upto: int, at: int) -> dict:
    """id -> tokens of the requests held at `at`, after the changes logged at or before `upto`."""
    requests = {}
    for when, rid, tokens, expiry in log:
        if when > upto:
            break
        if tokens is None:
            requests.pop(rid, None)  # a cancel
        else:
            requests[rid] = (tokens, expiry)
    return {rid: tokens for rid, (tokens, expiry) in requests.items() if expiry is None or at < expiry}


def oracle(queries: list[list[str]]) -> list[str]:
    timed = bool(queries) and queries[0][0].isdigit()
    log, answers = [], []
    for query in queries:
        now, (op, *args) = (int(query[0]), query[1:]) if timed else (0, query)
        held = _replay(log, now, now)
        if op in ("ADD", "ADD_WITH_TTL"):
            fresh = args[0] not in held
            if fresh:
                expiry = now + int(args[2]) if op == "ADD_WITH_TTL" else None
                log.append((now, args[0], int(args[1]), expiry))
            answers.append("true" if fresh else "false")
        elif op == "GET":
            answers.append(str(held[args[0]]) if args[0] in held else "")
        elif op == "CANCEL":
            if args[0] in held:
                log.append((now, args[0], None, None))
            answers.append("true" if args[0] in held else "false")
        elif op == "TOTAL":
            answers.append(str(sum(held.values())))
        elif op == "TOP":
            ranked = sorted(held.items())  # by id, then (stable) by tokens, largest first
            ranked.sort(key=lambda item: item[1], reverse=True)
            answers.append(",".join(f"{rid}({tokens})" for rid, tokens in ranked[:int(args[0])]))
        elif op == "TOTAL_AT":
            t = int(args[0])
            answers.append("" if t > now else str(sum(_replay(log, t, t).values())))
        else:
            raise AssertionError(f"the oracle has no operation {op!r}")
    return answers


# --- random calls -------------------------------------------------------------------------------

IDS = ["a", "b", "c", "r1", "r10", "r2"]
TOKENS = ["1", "2", "5", "9", "10", str(2**53 + 1)]
OPS = {1: ["ADD", "ADD", "ADD", "GET", "CANCEL"]}
OPS[2] = OPS[1] + ["TOTAL", "TOP"]
OPS[3] = OPS[2] + ["ADD_WITH_TTL", "ADD_WITH_TTL"]
OPS[4] = OPS[3] + ["TOTAL_AT", "TOTAL_AT"]


def random_call(seed: int, n: int, level: int) -> list[list[str]]:
    """A call of the level drawn from `seed`: without timestamps for levels 1 and 2, with them from
    level 3 on."""
    rng = random.Random(seed)
    body = []
    for _ in range(n):
        op, rid = rng.choice(OPS[level]), rng.choice(IDS)
        args = {"ADD": [rid, rng.choice(TOKENS)], "GET": [rid], "CANCEL": [rid], "TOTAL": [],
                "TOP": [str(rng.randint(0, 4))], "ADD_WITH_TTL": [rid, rng.choice(TOKENS), str(rng.randint(1, 6))],
                "TOTAL_AT": ["BACK"]}[op]
        body.append([op, *args])
    if level <= 2:
        return body
    t, timed = rng.randint(0, 3), []
    for query in body:
        t += rng.choice([0, 0, 1, 1, 2, 5])
        if query[-1] == "BACK":
            query = query[:-1] + [str(max(0, t - rng.randint(-1, 8)))]
        timed.append([str(t), *query])
    return timed


def calls(level: int, min_size: int = 4, max_size: int = 30):
    """Hypothesis strategy: random calls of the level (a seed and a size per example)."""
    return st.builds(random_call, st.integers(0, 2**32), st.integers(min_size, max_size), st.just(level))


# --- each level's worked example, as (queries, answers): later levels run them again ------------

EXAMPLES = {
    1: ([["ADD", "r1", "40"], ["ADD", "r1", "99"], ["GET", "r1"], ["CANCEL", "r1"], ["GET", "r1"]],
        ["true", "false", "40", "true", ""]),
    2: ([["ADD", "a", "5"], ["ADD", "b", "9"], ["ADD", "c", "5"], ["TOP", "2"], ["TOTAL"]],
        ["true", "true", "true", "b(9),a(5)", "19"]),
    3: ([["0", "ADD_WITH_TTL", "a", "7", "5"], ["4", "GET", "a"], ["5", "GET", "a"], ["5", "ADD", "a", "3"]],
        ["true", "7", "", "true"]),
}


def timed(queries: list[list[str]], step: int = 1) -> list[list[str]]:
    """Untimed queries with timestamps 0, step, 2 * step, ...: the same call at level 3 and after."""
    return [[str(i * step), *query] for i, query in enumerate(queries)]
''')

PROJECT_GRADER_L1 = Template('''\
"""Hidden suite, level 1: ADD, GET and CANCEL, in calls without timestamps."""

from hypothesis import given
from $oracle import EXAMPLES, calls, oracle

from kata.checks import graded, property_settings, query_lines, run_queries

PROPERTY = property_settings(40)


@graded(1, 2, "the prompt's level-1 example")
def test_prompt_example(impl):
    run_queries(impl, *EXAMPLES[1])


@graded(1, 1, "no queries: an empty list of answers")
def test_no_queries(impl):
    run_queries(impl, [], [])


@graded(1, 2, "ADD of a held id answers false and keeps the first request's tokens")
def test_add_held_id(impl):
    run_queries(impl, *query_lines("""
        ADD r1 40 -> true
        ADD r1 7 -> false
        GET r1 -> 40
    """))


@graded(1, 2, "GET and CANCEL of an id never added answer '' and false")
def test_unknown_id(impl):
    run_queries(impl, *query_lines("""
        GET x -> ''
        CANCEL x -> false
        ADD x 1 -> true
        GET x -> 1
    """))


@graded(1, 2, "a cancelled id is not held, and can be added again with new tokens")
def test_add_after_cancel(impl):
    run_queries(impl, *query_lines("""
        ADD r1 40 -> true
        CANCEL r1 -> true
        GET r1 -> ''
        CANCEL r1 -> false
        ADD r1 3 -> true
        GET r1 -> 3
    """))


@graded(1, 1, "token counts past 2**53 are kept exactly")
def test_large_tokens(impl):
    run_queries(impl, [["ADD", "big", str(2**53 + 1)], ["GET", "big"]], ["true", str(2**53 + 1)])


@graded(1, 1, "every call starts from an empty queue; the queries are not modified")
def test_calls_are_independent(impl):
    queries = [["ADD", "r1", "4"], ["GET", "r1"]]
    run_queries(impl, queries, ["true", "4"], as_given=True)
    run_queries(impl, queries, ["true", "4"], as_given=True, note=" a second time")


@graded(1, 3, "random calls of level 1 match a slow oracle")
@PROPERTY
@given(queries=calls(1))
def test_matches_oracle(impl, queries):
    run_queries(impl, queries, oracle=oracle)
''')

PROJECT_GRADER_L2 = Template('''\
"""Hidden suite, level 2: TOTAL and TOP, with the level-1 operations around them."""

from hypothesis import given
from $oracle import EXAMPLES, calls, oracle

from kata.checks import graded, property_settings, query_lines, run_queries

PROPERTY = property_settings(40)


@graded(2, 2, "the prompt's level-2 example")
def test_prompt_example(impl):
    run_queries(impl, *EXAMPLES[2])


@graded(2, 1, "TOTAL and TOP of an empty queue: 0 and ''")
def test_empty(impl):
    run_queries(impl, [["TOTAL"], ["TOP", "3"]], ["0", ""])


@graded(2, 2, "TOP breaks ties by id ascending as strings: r10 before r2")
def test_top_ties_by_id(impl):
    run_queries(impl, *query_lines("""
        ADD r2 5 -> true
        ADD r10 5 -> true
        ADD a 1 -> true
        TOP 2 -> r10(5),r2(5)
    """))


@graded(2, 1, "TOP 0 is '', and TOP n of fewer than n held requests lists them all")
def test_top_sizes(impl):
    run_queries(impl, *query_lines("""
        ADD a 1 -> true
        ADD b 2 -> true
        TOP 0 -> ''
        TOP 9 -> b(2),a(1)
    """))


@graded(2, 2, "a cancelled request leaves TOTAL and TOP")
def test_cancelled_left_out(impl):
    run_queries(impl, *query_lines("""
        ADD a 4 -> true
        ADD b 6 -> true
        CANCEL b -> true
        TOTAL -> 4
        TOP 2 -> a(4)
    """))


@graded(2, 1, "TOTAL is exact past 2**53")
def test_total_exact(impl):
    big = 2**53 + 1
    run_queries(impl, [["ADD", "a", str(big)], ["ADD", "b", "1"], ["TOTAL"]], ["true", "true", str(big + 1)])


@graded(2, 3, "random calls of levels 1 and 2 match a slow oracle")
@PROPERTY
@given(queries=calls(2))
def test_matches_oracle(impl, queries):
    run_queries(impl, queries, oracle=oracle)
''')

PROJECT_GRADER_L3 = Template('''\
"""Hidden suite, level 3: timestamps and ADD_WITH_TTL. The level-1 and level-2 rules run again in
calls with timestamps, so a change made for this level cannot break them unseen."""

from hypothesis import given
from $oracle import EXAMPLES, calls, oracle, timed

from kata.checks import graded, property_settings, query_lines, run_queries

PROPERTY = property_settings(40)


@graded(3, 2, "the prompt's level-3 example")
def test_prompt_example(impl):
    run_queries(impl, *EXAMPLES[3])


@graded(3, 2, "a request added at t with ttl is held at t + ttl - 1 and gone at t + ttl")
def test_expiry_boundary(impl):
    run_queries(impl, *query_lines("""
        10 ADD_WITH_TTL a 4 3 -> true
        12 GET a -> 4
        12 TOTAL -> 4
        13 GET a -> ''
        13 TOTAL -> 0
    """))


@graded(3, 2, "an expired request is not held: CANCEL answers false, TOP leaves it out, ADD adds it again")
def test_expired_not_held(impl):
    run_queries(impl, *query_lines("""
        0 ADD_WITH_TTL a 9 1 -> true
        0 ADD b 2 -> true
        1 CANCEL a -> false
        1 TOP 5 -> b(2)
        1 ADD a 3 -> true
        9 GET a -> 3
    """))


@graded(3, 1, "ADD_WITH_TTL of a held id answers false and keeps its tokens and expiry")
def test_ttl_on_held_id(impl):
    run_queries(impl, *query_lines("""
        0 ADD a 5 -> true
        0 ADD_WITH_TTL a 8 1 -> false
        7 GET a -> 5
    """))


@graded(3, 2, "the level-1 and level-2 examples give the same answers with timestamps")
def test_earlier_rules_with_timestamps(impl):
    for level in (1, 2):
        queries, answers = EXAMPLES[level]
        run_queries(impl, timed(queries), answers, note=f" (level {level}'s example, with timestamps)")


@graded(3, 3, "random calls with timestamps, of every operation so far, match a slow oracle")
@PROPERTY
@given(queries=calls(3))
def test_matches_oracle(impl, queries):
    run_queries(impl, queries, oracle=oracle)
''')

PROJECT_GRADER_L4 = Template('''\
"""Hidden suite, level 4: TOTAL_AT, the queue's past, with every earlier operation around it."""

from hypothesis import given
from $oracle import EXAMPLES, calls, oracle, timed

from kata.checks import graded, property_settings, query_lines, run_queries

PROPERTY = property_settings(40)


@graded(4, 2, "the prompt's level-4 example")
def test_prompt_example(impl):
    run_queries(impl, *query_lines("""
        0 ADD_WITH_TTL a 7 5 -> true
        2 ADD b 3 -> true
        9 CANCEL b -> true
        9 TOTAL_AT 2 -> 10
        9 TOTAL_AT 6 -> 3
        9 TOTAL_AT 10 -> ''
    """))


@graded(4, 2, "TOTAL_AT judges expiry at t: a request that expired before t is left out, one held at t counts")
def test_expiry_at_t(impl):
    run_queries(impl, *query_lines("""
        0 ADD_WITH_TTL a 7 10 -> true
        20 TOTAL_AT 9 -> 7
        20 TOTAL_AT 10 -> 0
        20 TOTAL -> 0
    """))


@graded(4, 1, "TOTAL_AT before the first query is 0; at the current timestamp it is TOTAL")
def test_edges_of_time(impl):
    run_queries(impl, *query_lines("""
        5 ADD a 2 -> true
        5 TOTAL_AT 4 -> 0
        5 TOTAL_AT 5 -> 2
        6 ADD b 1 -> true
        6 TOTAL_AT 6 -> 3
    """))


@graded(4, 2, "at one timestamp, TOTAL_AT counts the queries of that timestamp made before it")
def test_same_instant(impl):
    run_queries(impl, *query_lines("""
        3 ADD a 2 -> true
        3 TOTAL_AT 3 -> 2
        3 ADD b 5 -> true
        4 CANCEL a -> true
        4 TOTAL_AT 3 -> 7
    """))


@graded(4, 2, "the earlier levels' examples give the same answers in a level-4 call")
def test_earlier_rules_again(impl):
    for level in (1, 2):
        queries, answers = EXAMPLES[level]
        run_queries(impl, timed(queries, 3), answers, note=f" (level {level}'s example, with timestamps)")
    run_queries(impl, *EXAMPLES[3])


@graded(4, 4, "random calls of every level's operations, TOTAL_AT among them, match a slow oracle")
@PROPERTY
@given(queries=calls(4))
def test_matches_oracle(impl, queries):
    run_queries(impl, queries, oracle=oracle)
''')

PROJECT_CONFTEST = Template('''\
"""Loads the suite's shared helpers, $oracle.py, under that module name."""

from kata.checks import load_helpers

load_helpers(__file__, "$oracle")
''')

# The project's zoo: one mistake per level, each a line of the reference changed (kata/zoo.py).
PROJECT_BUGS = {
    "get_unknown_answers_zero": (
        ('        return str(held[rid]) if rid in held else ""', '        return str(held[rid]) if rid in held else "0"'),
        {"Bug": "GET of an id that is not held answers \"0\" instead of the empty string", "Level": "1",
         "Breaks": "GET id answers the held request's tokens, or \"\" if id is not held"}),
    "top_ties_by_id_descending": (
        ("        ranked = sorted(self.held().items(), key=lambda item: (-item[1], item[0]))",
         "        ranked = sorted(self.held().items(), key=lambda item: (item[1], item[0]), reverse=True)"),
        {"Bug": "TOP breaks ties between equal token counts by id descending", "Level": "2",
         "Breaks": "most tokens first, ties by id ascending"}),
    "held_at_the_expiry": (
        ("if expiry is None or at < expiry}", "if expiry is None or at <= expiry}"),
        {"Bug": "a request is still held at its expiry timestamp t + ttl (<= instead of <)", "Level": "3",
         "Breaks": "it is held while the timestamp is < t + ttl"}),
    "total_at_judges_expiry_now": (
        ("        return str(sum(self.held(at, self.states[i - 1]).values())) if i else \"0\"",
         "        return str(sum(self.held(None, self.states[i - 1]).values())) if i else \"0\""),
        {"Bug": "TOTAL_AT judges expiry at the current timestamp instead of at t", "Level": "4",
         "Breaks": "the requests as they were after the last query at or before t, held at t"}),
}


def new_kata(wb: Workbook, slug: str, title: str | None = None, project: bool = False) -> list[Path]:
    """Write the scaffold for `slug` (with `project`, a four-level project question in the
    solution(queries) style); return the files written. Refuses to overwrite anything."""
    if not SLUG_RE.match(slug):
        raise CatalogError(
            f"slug '{slug}' is not valid: use lowercase letters, digits and single hyphens, "
            "starting with a letter (e.g. 'token-budget')"
        )
    module = slug.replace("-", "_")
    title = title or slug.replace("-", " ").capitalize()
    values = {"slug": slug, "module": module, "title": title, "oracle": f"{module}_oracle"}
    kata_dir, grader = wb.root / "katas" / slug, wb.root / "graders" / slug
    if project:
        files = {
            kata_dir / "kata.toml": PROJECT_KATA_TOML,
            kata_dir / "PROMPT.md": PROJECT_PROMPT,
            kata_dir / f"{module}.py": PROJECT_STUB,
            kata_dir / "test_visible.py": PROJECT_VISIBLE,
            wb.root / "solutions" / f"{slug}.py": PROJECT_SOLUTION,
            grader / "conftest.py": PROJECT_CONFTEST,
            grader / f"{module}_oracle.py": PROJECT_ORACLE,
            **{grader / f"test_{module}_l{n}.py": t for n, t in
               enumerate((PROJECT_GRADER_L1, PROJECT_GRADER_L2, PROJECT_GRADER_L3, PROJECT_GRADER_L4), 1)},
        }
        reference = PROJECT_SOLUTION.substitute(values)
        bugs = PROJECT_BUGS
    else:
        files = {
            kata_dir / "kata.toml": KATA_TOML,
            kata_dir / "PROMPT.md": PROMPT,
            kata_dir / f"{module}.py": STUB,
            kata_dir / "test_visible.py": VISIBLE,
            wb.root / "solutions" / f"{slug}.py": SOLUTION,
            grader / f"test_{module}.py": GRADER,
        }
        reference = SOLUTION.substitute(values)
        bugs = {"equal_budget_rejected": (BUG_MISTAKE, BUG_HEADER)}
    patches = {wb.root / "tests" / "bugs" / slug / f"{name}.patch": bug for name, bug in bugs.items()}
    taken = [p for p in [*files, *patches] if p.exists()] + [d for d in (kata_dir, grader) if d.exists()]
    if taken:
        raise CatalogError(f"{taken[0]}: already exists: kata '{slug}' is taken, pick another slug")
    for path, template in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.substitute(values), encoding="utf-8")
    from kata.zoo import make_patch

    for path, ((right, wrong), header) in patches.items():
        assert reference.count(right) == 1, f"the scaffold's reference lost the line its bug {path.stem} changes"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(make_patch(reference, reference.replace(right, wrong), slug, path.stem, header),
                        encoding="utf-8")
    return [*files, *patches]
