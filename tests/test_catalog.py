"""The catalog rejects bad kata.toml and exam files with one line naming the file and key."""

from __future__ import annotations

import shutil

import pytest

from kata.catalog import CatalogError, Workbook, load_kata
from tests.conftest import FIXTURES


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
    with pytest.raises(CatalogError, match="unknown kata 'nope'. `kata list` shows the katas."):
        wb.kata("nope")
    with pytest.raises(CatalogError, match="unknown exam 'nope'. Known exams: mini"):
        wb.exam("nope")


def test_workbook_env_must_point_at_a_workbook(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_WORKBOOK", str(tmp_path))
    with pytest.raises(CatalogError, match="no katas/ folder and no workbook.toml there"):
        Workbook.find()


def test_every_kata_in_this_repo_loads():
    wb = Workbook.find()
    assert wb.katas(), "the repository's workbook has katas"
    for exam in wb.exams():
        assert exam.katas


# --- fuzzing: whatever a kata.toml or an exam file holds, the answer is one CatalogError line ----

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

KATA_KEYS = ["slug", "title", "summary", "difficulty", "minutes", "module", "tags", "levels",
             "equivalent_mutants", "name", "points", "hints", "sealed_hints", "reason", "bogus"]
EXAM_KEYS = ["title", "minutes", "katas", "description", "questions", "kata", "levels", "reveal",
             "bogus"]


def _toml(value) -> str:
    import json
    import math

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"


def documents(keys):
    leaf = st.one_of(st.booleans(), st.integers(-10**20, 10**20), st.floats(allow_nan=True),
                     st.text(max_size=12), st.sampled_from(["adder", "easy", "adder.py", "x.py", "all",
                                                             "progressive"]))
    value = st.recursive(leaf, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(keys), inner, max_size=4)),
        max_leaves=12)
    return st.one_of(
        st.dictionaries(st.sampled_from(keys), value, max_size=9),
        st.text(max_size=80).map(lambda t: {"__raw__": t}),
    )


def _write(path, doc):
    if "__raw__" in doc:
        path.write_text(doc["__raw__"])
    else:
        path.write_text("\n".join(f"{k} = {_toml(v)}" for k, v in doc.items()) + "\n")


@settings(max_examples=150, deadline=None)
@given(doc=documents(KATA_KEYS))
def test_any_kata_toml_loads_or_is_one_catalog_error(tmp_path_factory, doc):
    root = tmp_path_factory.mktemp("wb")
    shutil.copytree(FIXTURES / "workbook", root, dirs_exist_ok=True)
    path = root / "katas" / "adder" / "kata.toml"
    _write(path, doc)
    try:
        load_kata(root, "adder")
    except CatalogError as exc:
        text = str(exc)
        assert "\n" not in text and str(path) in text, text


@settings(max_examples=150, deadline=None)
@given(doc=documents(EXAM_KEYS))
def test_any_exam_file_loads_or_is_one_catalog_error(tmp_path_factory, doc):
    root = tmp_path_factory.mktemp("wb")
    shutil.copytree(FIXTURES / "workbook", root, dirs_exist_ok=True)
    path = root / "exams" / "mini.toml"
    _write(path, doc)
    try:
        Workbook(root, root).exam("mini")
    except CatalogError as exc:
        text = str(exc)
        assert "\n" not in text and str(path) in text, text


# --- exam format v2: questions with levels and minutes --------------------------------------------

QUESTIONS_OK = '''title = "T"
minutes = 30
[[questions]]
kata = "adder"
levels = [2, 1]
minutes = 30
reveal = "progressive"
'''


def _exam(root, text):
    (root / "exams" / "x.toml").write_text(text)
    return Workbook(root, root).exam("x")


def test_questions_load_with_levels_minutes_and_reveal(fixture_workbook):
    exam = _exam(fixture_workbook, QUESTIONS_OK)
    (q,) = exam.questions
    assert (q.kata, q.levels, q.minutes, q.reveal) == ("adder", (1, 2), 30, "progressive")
    assert exam.katas == ("adder",)


def test_the_old_katas_form_still_loads_with_every_level(fixture_workbook):
    exam = Workbook(fixture_workbook, fixture_workbook).exam("mini")
    (q,) = exam.questions
    assert (q.kata, q.levels, q.minutes, q.reveal) == ("adder", (1, 2), 5, "all")


@pytest.mark.parametrize("change, message", [
    (("levels = [2, 1]", "levels = [3]"), "questions[1]: kata 'adder' has no level 3 (levels are 1..2)"),
    (("levels = [2, 1]", "levels = [1, 1]"), "questions[1]: a level is listed twice in 'levels'"),
    (("levels = [2, 1]", "levels = []"), "questions[1]: 'levels' is empty"),
    (("levels = [2, 1]", "levels = [true]"), "questions[1]: every item of 'levels' must be a level number"),
    (('kata = "adder"', 'kata = "nope"'), "questions[1]: unknown kata 'nope'"),
    (("minutes = 30\nreveal", "minutes = 20\nreveal"), "the questions' minutes add up to 20, but minutes = 30"),
    (("minutes = 30\nreveal", "minutes = 0\nreveal"), "questions[1]: minutes must be a positive whole number"),
    (('reveal = "progressive"', 'reveal = "later"'), "questions[1]: reveal 'later' must be one of all, progressive"),
    (('reveal = "progressive"', 'reveal = "all"\nhints = 3'), "questions[1]: unknown key 'hints'"),
    (("[[questions]]", 'katas = ["adder"]\n[[questions]]'), "give either 'katas' (a list of slugs) or [[questions]] tables"),
])
def test_exam_errors_are_one_line_naming_file_and_field(fixture_workbook, change, message):
    with pytest.raises(CatalogError) as err:
        _exam(fixture_workbook, QUESTIONS_OK.replace(*change))
    text = str(err.value)
    assert message in text and "exams/x.toml" in text and "\n" not in text


def test_a_kata_in_two_questions_is_an_error(fixture_workbook):
    text = QUESTIONS_OK.replace("minutes = 30\nreveal", "minutes = 15\nreveal") + (
        '[[questions]]\nkata = "adder"\nminutes = 15\n')
    with pytest.raises(CatalogError, match="kata 'adder' is in two questions"):
        _exam(fixture_workbook, text)
