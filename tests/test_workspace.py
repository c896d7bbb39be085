"""The workspace: `kata start` over existing files loses nothing."""

from __future__ import annotations

from kata.catalog import Workbook
from kata.workspace import prepare


def test_start_over_existing_files_archives_them_first(fixture_workbook, isolated_state):
    wb = Workbook.find()
    kata = wb.kata("adder")
    first = prepare(wb, [kata], now=1_800_000_000)
    assert first[0].archived is None
    target = first[0].path
    target.write_text("my precious work v1\n")
    second = prepare(wb, [kata], now=1_800_000_000)
    third_text = "my precious work v2\n"
    target.write_text(third_text)
    third = prepare(wb, [kata], now=1_800_000_000)  # same second: a distinct archive folder
    assert second[0].archived.read_text() == "my precious work v1\n"
    assert third[0].archived.read_text() == third_text
    assert second[0].archived != third[0].archived
    assert target.read_text() == kata.stub.read_text()
    archived = sorted(p.read_text() for p in (isolated_state / ".kata" / "archive").rglob("*.py"))
    assert archived == ["my precious work v1\n", third_text]


def test_an_untouched_stub_is_not_archived(fixture_workbook, isolated_state):
    wb = Workbook.find()
    kata = wb.kata("adder")
    prepare(wb, [kata])
    again = prepare(wb, [kata])
    assert again[0].archived is None
    assert not (isolated_state / ".kata" / "archive").exists()
