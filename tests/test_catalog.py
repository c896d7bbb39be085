"""The catalog rejects bad kata.toml and exam files with one line naming the file and key."""

from __future__ import annotations

import pytest

from kata.catalog import CatalogError, Workbook, load_kata


def edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_loads_the_fixture_kata(fixture_workbook):
    kata = Workbook.find().kata("adder")
    assert kata.module_name == "adder" and kata.points == 30
    assert kata.hints == ((1, "Use +."), (1, "Use -."), (2, "Use *."))


@pytest.mark.parametrize(
    "old, new, message",
    [
        ('title = "Adder"', 'title = "Adder"\ntittle = "x"', "unknown key 'tittle'"),
        ('minutes = 5\n', '', "missing key 'minutes'"),
        ('minutes = 5', 'minutes = "5"', "key 'minutes' must be a int"),
        ('minutes = 5', 'minutes = true', "key 'minutes' must be a int"),
        ('minutes = 5', 'minutes = 0', "minutes must be a positive"),
        ('slug = "adder"', 'slug = "other"', "does not match its folder"),
        ('difficulty = "easy"', 'difficulty = "trivial"', "difficulty 'trivial' must be one of"),
        ('module = "adder.py"', 'module = "adder"', "module 'adder' must be a Python file name"),
        ('hints = ["Use *."]', 'hints = []', "levels[2]: 'hints' is empty"),
        ('points = 20', 'points = -1', "levels[2]: points must be positive"),
        ('name = "Add and subtract"\n', '', "levels[1]: missing key 'name'"),
        ('[[levels]]\nname = "Add', '[[levels]]\nname = "Add"\nbad key', "not valid TOML"),
    ],
)
def test_bad_kata_toml_names_file_and_key(fixture_workbook, old, new, message):
    path = fixture_workbook / "katas" / "adder" / "kata.toml"
    edit(path, old, new)
    with pytest.raises(CatalogError) as err:
        load_kata(fixture_workbook, "adder")
    text = str(err.value)
    assert message in text and str(path) in text and "\n" not in text


def test_missing_kata_file_is_named(fixture_workbook):
    (fixture_workbook / "katas" / "adder" / "PROMPT.md").unlink()
    with pytest.raises(CatalogError, match="PROMPT.md: missing file of kata 'adder'"):
        load_kata(fixture_workbook, "adder")


def test_exam_naming_unknown_kata(fixture_workbook):
    edit(fixture_workbook / "exams" / "mini.toml", '["adder"]', '["adder", "nope"]')
    with pytest.raises(CatalogError, match="mini.toml: unknown kata 'nope'"):
        Workbook.find().exam("mini")


def test_unknown_kata_and_exam(fixture_workbook):
    wb = Workbook.find()
    with pytest.raises(CatalogError, match="unknown kata 'nope'; known katas: adder"):
        wb.kata("nope")
    with pytest.raises(CatalogError, match="unknown exam 'nope'; known exams: mini"):
        wb.exam("nope")


def test_workbook_env_must_point_at_a_workbook(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_WORKBOOK", str(tmp_path))
    with pytest.raises(CatalogError, match="no katas/ folder there"):
        Workbook.find()


def test_every_kata_in_this_repo_loads():
    wb = Workbook.find()
    assert wb.katas(), "the repository's workbook has katas"
    for exam in wb.exams():
        assert exam.katas
