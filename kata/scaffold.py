"""`kata new SLUG`: scaffold every file of a new kata, pre-filled with a tiny worked example.

The example ("how many requests fit a token budget", two levels) is complete and valid as
scaffolded: its reference passes, its stub fails every level and its one bug is caught, so
`kata validate SLUG` is green before the author changes a line. The author then replaces it.
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
"""Hidden suite for $slug. Every test: level, points, edge."""

import pytest
from hypothesis import example, given, strategies as st

from kata.strict import same  # type-strict equality: never `got == expected` in a grader


def oracle(sizes, budget):
    """Slow and obviously right: try every prefix."""
    best = 0
    for n in range(len(sizes) + 1):
        if sum(sizes[:n]) <= budget:
            best = n
        else:
            break
    return best


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("a total exactly equal to the budget fits")
def test_equal_to_budget_fits(impl):
    got = impl.count_admitted([5, 5], 10)
    assert same(got, 2), f"Called count_admitted([5, 5], 10). Returned {got!r}, expected 2."


@pytest.mark.level(1)
@pytest.mark.points(2)
@pytest.mark.edge("admission stops at the first request that does not fit")
def test_stops_at_first_misfit(impl):
    got = impl.count_admitted([4, 9, 1], 10)
    assert same(got, 1), f"Called count_admitted([4, 9, 1], 10). Returned {got!r}, expected 1."


@pytest.mark.level(1)
@pytest.mark.points(1)
@pytest.mark.edge("an empty queue admits nothing")
def test_empty(impl):
    got = impl.count_admitted([], 0)
    assert same(got, 0), f"Called count_admitted([], 0). Returned {got!r}, expected 0."


@pytest.mark.level(1)
@pytest.mark.points(3)
@pytest.mark.edge("random queues agree with a prefix-by-prefix oracle")
@given(st.lists(st.integers(1, 20), max_size=12), st.integers(0, 100))
@example([1], 0)
def test_matches_oracle(impl, sizes, budget):
    got = impl.count_admitted(sizes, budget)
    want = oracle(sizes, budget)
    assert same(got, want), f"Called count_admitted({sizes}, {budget}). Returned {got!r}, expected {want}."


@pytest.mark.level(2)
@pytest.mark.points(1)
@pytest.mark.edge("a negative budget raises ValueError naming budget")
def test_negative_budget(impl):
    with pytest.raises(ValueError, match="budget"):
        impl.count_admitted([1], -1)


@pytest.mark.level(2)
@pytest.mark.points(1)
@pytest.mark.edge("a size of zero is rejected")
def test_zero_size(impl):
    with pytest.raises(ValueError, match="sizes"):
        impl.count_admitted([0], 5)


@pytest.mark.level(2)
@pytest.mark.points(1)
@pytest.mark.edge("a bad size after a fitting one is still rejected")
def test_bad_size_late(impl):
    with pytest.raises(ValueError, match="sizes"):
        impl.count_admitted([1, 1, -3], 1)
''')

# The example zoo entry: one mistake in the reference, as a patch (see kata/zoo.py). The scaffold
# makes it from the reference's text, so it always applies to the reference it ships with.
BUG_MISTAKE = ("        if total > budget:", "        if total >= budget:")
BUG_HEADER = {
    "Bug": "a total equal to the budget is treated as over it (>= instead of >)",
    "Level": "1",
    "Breaks": "a total exactly equal to the budget fits",
}


def new_kata(wb: Workbook, slug: str, title: str | None = None) -> list[Path]:
    """Write the scaffold for `slug`; return the files written. Refuses to overwrite anything."""
    if not SLUG_RE.match(slug):
        raise CatalogError(
            f"slug '{slug}' is not valid: use lowercase letters, digits and single hyphens, "
            "starting with a letter (e.g. 'token-budget')"
        )
    module = slug.replace("-", "_")
    title = title or slug.replace("-", " ").capitalize()
    values = {"slug": slug, "module": module, "title": title}
    files = {
        wb.root / "katas" / slug / "kata.toml": KATA_TOML,
        wb.root / "katas" / slug / "PROMPT.md": PROMPT,
        wb.root / "katas" / slug / f"{module}.py": STUB,
        wb.root / "katas" / slug / "test_visible.py": VISIBLE,
        wb.root / "solutions" / f"{slug}.py": SOLUTION,
        wb.root / "graders" / slug / f"test_{module}.py": GRADER,
    }
    bug = wb.root / "tests" / "bugs" / slug / "equal_budget_rejected.patch"
    taken = [p for p in files if p.exists()] + [
        d for d in (wb.root / "katas" / slug, wb.root / "graders" / slug) if d.exists()
    ]
    if taken:
        raise CatalogError(f"{taken[0]}: already exists: kata '{slug}' is taken, pick another slug")
    for path, template in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.substitute(values), encoding="utf-8")
    from kata.zoo import make_patch

    reference = SOLUTION.substitute(values)
    assert BUG_MISTAKE[0] in reference, "the scaffold's reference lost the line its bug changes"
    wrong = reference.replace(*BUG_MISTAKE, 1)
    bug.parent.mkdir(parents=True, exist_ok=True)
    bug.write_text(make_patch(reference, wrong, slug, bug.stem, BUG_HEADER), encoding="utf-8")
    return [*files, bug]
