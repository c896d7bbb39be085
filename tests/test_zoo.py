"""kata.zoo: reading and applying bug patches."""

from __future__ import annotations

from pathlib import Path

import pytest

from kata.zoo import PatchError, ZooPatch, apply_patch, make_patch

REF = "".join(f"line {i}\n" for i in range(1, 41))


def test_make_then_apply_round_trips():
    wrong = REF.replace("line 20\n", "line twenty\n")
    patch = make_patch(REF, wrong, "k", "b", {"Bug": "twenty spelled out", "Level": "3"})
    parsed = ZooPatch.from_text(Path("b.patch"), patch)
    assert parsed.header == {"Bug": "twenty spelled out", "Level": "3"}
    assert parsed.apply(REF) == wrong


def test_a_hunk_finds_its_context_after_the_reference_moved():
    wrong = REF.replace("line 30\n", "line thirty\n")
    patch = make_patch(REF, wrong, "k", "b", {"Bug": "x"})
    moved = "new first line\nanother\n" + REF
    assert apply_patch(moved, patch) == "new first line\nanother\n" + wrong


def test_a_hunk_whose_context_changed_names_itself():
    wrong = REF.replace("line 30\n", "line thirty\n")
    patch = make_patch(REF, wrong, "k", "b", {"Bug": "x"})
    with pytest.raises(PatchError, match=r"b.patch: hunk 1 \(reference line 27\) no longer applies"):
        apply_patch(REF.replace("line 29\n", "line 29 changed\n"), patch, "b.patch")


@pytest.mark.parametrize("text, message", [
    ("Bug: x\n", "no '--- ' line"),
    ("Bug: x\n--- a\n+++ b\n", "the diff has no hunk"),
    ("--- a\n+++ b\n@@ -1,1 +1,1 @@\n-line 1\n+one\n?? what\n", "unexpected line"),
])
def test_unreadable_patches_say_why(text, message):
    with pytest.raises(PatchError, match=message):
        apply_patch(REF, text, "x.patch")


def test_every_zoo_patch_applies_to_its_reference():
    from kata.catalog import Workbook
    from kata.zoo import entries

    wb = Workbook.find()
    count = 0
    for kata in wb.katas():
        reference = kata.solution.read_text()
        for patch in entries(kata.bugs):
            assert ZooPatch.parse(patch).apply(reference) != reference, patch
            count += 1
    assert count >= 12 * len(wb.slugs())
