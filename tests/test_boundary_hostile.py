"""Files that solve nothing but reach into the grader's process, handed in beside an honest one:
across the process boundary every trick scores what a file that answers [] to everything scores
(the one test of no queries at all), and the honest file keeps its score, in grade-batch and in
`kata submit` (tests/fixtures/hostile/apart/, on kv-block-store). In one process with the tests,
three of the four score 100."""

from __future__ import annotations

import shutil
from pathlib import Path

from kata import session
from kata.catalog import Workbook
from kata.cohort import grade_batch
from kata.grading import Limits
from tests.conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[1]
TRICKS = FIXTURES / "hostile" / "apart"
KATA, MODULE = "kv-block-store", "kv_block_store.py"
NAMES = sorted(p.stem for p in TRICKS.glob("*.py"))
NOTHING = "def solution(queries):\n    return []\n"


def hand_in(name: str, target: Path) -> None:
    if name == "honest":
        shutil.copyfile(ROOT / "solutions" / f"{KATA}.py", target)
    elif name == "nothing":
        target.write_text(NOTHING)
    else:
        shutil.copyfile(TRICKS / f"{name}.py", target)


def test_the_kata_runs_apart_and_there_are_four_tricks():
    assert Workbook.find(ROOT).kata(KATA).process_boundary
    assert NAMES == ["delegate_to_oracle", "equal_to_anything", "read_caller_frame", "swap_helper"]


def test_every_trick_scores_nothing_in_a_batch_and_the_honest_row_is_full(tmp_path):
    subs = tmp_path / "subs"
    for name in ("honest", "nothing", *NAMES):
        (subs / name).mkdir(parents=True)
        hand_in(name, subs / name / MODULE)
    book = grade_batch(Workbook.find(ROOT), subs, workers=2, limits=Limits(wall_timeout=300))
    rows = {r["student"]: r for r in book["rows"] if r["kata"] == KATA}
    assert rows["honest"]["status"] == "pass" and rows["honest"]["points_earned"] == 100, rows["honest"]["message"]
    nothing = rows["nothing"]["points_earned"]
    assert nothing < 2, nothing
    for name in NAMES:
        assert rows[name]["points_earned"] <= nothing, (name, rows[name]["points_earned"], rows[name]["message"])


def submitted(name: str, state: Path) -> float:
    wb = Workbook.find(ROOT)
    session.start(wb, KATA)
    hand_in(name, state / "workspace" / MODULE)
    [graded] = session.submit(wb, [wb.kata(KATA)])
    return graded.result.points_earned


def test_every_trick_scores_nothing_in_submit(isolated_state, monkeypatch, tmp_path):
    monkeypatch.setenv("KATA_WORKBOOK", str(ROOT))
    earned = {}
    for name in ("honest", "nothing", *NAMES):
        monkeypatch.setenv("KATA_STATE_DIR", str(tmp_path / name))
        earned[name] = submitted(name, tmp_path / name)
    assert earned["honest"] == 25 and earned["nothing"] < 1, earned
    assert all(earned[name] <= earned["nothing"] for name in NAMES), earned
