"""`kata init DIR`: a workbook folder, written from the katas this installation carries.

Like a rustlings checkout: install the tool once (pip or pipx), then make a folder to practise in.

* A learner's workbook (the default) holds what a candidate may see: workspace/ (your code, and
  the visible examples of the levels you have open), .kata/ (your sessions), docs/ (what prompts
  cite), a README and workbook.toml, which marks it. The catalog (prompts, hints, visible tests),
  the hidden suites, the references, the bug zoo and the exams are read from the installed
  package: not in plain sight, as rustlings keeps its solutions (a learner who opens the
  installed package can read them; grading keeps them out of a submission's reach as anywhere).
* An instructor's workbook (`--instructor`) holds the whole catalog, to author and grade:
  katas/, solutions/, graders/, exams/, tests/bugs/ and docs/, as a clone of the repository does.
* `--upgrade DIR` moves a learner's workbook made by an earlier version (the whole catalog
  copied in) to the learner's layout: the catalog's folders go to .kata/archive/, workspace/ and
  the sessions in .kata/ stay where they are.

Example:
    init_workbook(Path("my-prep"))   -> Path('/home/me/my-prep')
"""

from __future__ import annotations

import shutil
from pathlib import Path

from kata.catalog import CONTENT, LEARNER_MARKER, CatalogError, Workbook, content_root, marker_text

IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis")

README = """# My kata workbook

Made by `kata init`. Practise here: every `kata` command run in this folder (or below it) uses
the katas kata was installed with, and keeps your code in workspace/ and your sessions in .kata/.

    kata start              the 90-minute, four-question mock assessment
    kata start SLUG         one kata on its own timer (`kata list` shows them)
    kata show / check / submit / review

Next to your file, workspace/test_<module>.py holds the visible examples of the levels you have
open (a level's examples arrive when it opens), so plain pytest runs them too:

    pytest workspace/

To grade your file on a kata's hidden suite with plain pytest (refused for the katas of a live
session, whose hidden tests stay hidden until it ends: `kata submit` grades those):

    pytest --kata-suite SLUG

The later levels' text, the hidden suites and the references are not in this folder: a level
opens when you pass the one before, and `kata solution SLUG` shows the reference once you have
practised the kata (a session holding it has ended, or a submit passed all its levels).
"""

INSTRUCTOR_README = """# My kata workbook (instructor)

Made by `kata init --instructor`: the whole catalog, to author and grade. katas/ holds each
kata's prompt, hints, stub and visible tests, solutions/ the references, graders/ the hidden
suites, exams/ the timed sets and tests/bugs/ the bug zoos. `kata new`, `kata validate`,
`kata bundle` and `kata grade-batch` work here; so does every learner's command.

solutions/ and graders/ spoil the practice for a learner: a learner's workbook is `kata init DIR`.
"""

GITIGNORE = "/workspace/\n/.kata/\n__pycache__/\n.pytest_cache/\n"


def _check_target(target: Path) -> Path:
    target = target.expanduser()
    if target.exists() and not target.is_dir():
        raise CatalogError(f"{target}: a file is in the way: choose another folder name")
    if target.is_dir() and any(target.iterdir()):
        raise CatalogError(f"{target}: the folder is not empty: choose a new or empty folder "
                           "(nothing in it was touched)")
    return target.resolve()


def _source() -> Path:
    source = content_root()
    if source is None:
        raise CatalogError("this installation carries no katas (kata/_content is missing): "
                           "reinstall kata-workbook")
    return source


def init_workbook(target: Path, instructor: bool = False) -> Path:
    """Write a workbook into `target` (which must not exist, or be an empty folder): a learner's
    (the default) or an instructor's."""
    source = _source()
    target = _check_target(target)
    if source == target or source in target.parents:
        raise CatalogError(f"{target}: inside the workbook kata was installed from: choose a "
                           "folder elsewhere")
    target.mkdir(parents=True, exist_ok=True)
    names = CONTENT if instructor else ("docs",)  # docs/: the formulas prompts cite
    for name in names:
        if (source / name).is_dir():
            shutil.copytree(source / name, target / name, ignore=IGNORE)
    (target / "README.md").write_text(INSTRUCTOR_README if instructor else README, encoding="utf-8")
    (target / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    (target / LEARNER_MARKER).write_text(marker_text("instructor" if instructor else "learner"),
                                         encoding="utf-8")
    return target


def upgrade_workbook(target: Path) -> tuple[Path, Path]:
    """Move a learner's workbook of the earlier layout (the catalog copied in) to the learner's
    layout; (the workbook, where its catalog's folders went). Sessions and workspace/ stay."""
    from kata import session, workspace

    folder = target.expanduser().resolve()
    if not folder.is_dir():
        raise CatalogError(f"{target}: no such folder: give the workbook's folder")
    wb = Workbook(folder, folder)
    if not wb.old_layout:
        raise CatalogError(f"{folder}: not a workbook made by an earlier `kata init` (its README "
                           "says so; a learner's workbook has workbook.toml): nothing was moved")
    _source()
    dest = workspace.archive_dir(wb)
    dest = dest.with_name(dest.name + "-catalog")
    dest.mkdir(parents=True)
    for name in (*CONTENT, "README.md"):
        if name == "docs":
            continue
        path = folder / name
        if path.exists():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(path), str(dest / name))
    tests = folder / "tests"
    if tests.is_dir() and not any(tests.iterdir()):
        tests.rmdir()
    if not (folder / "docs").is_dir() and (_source() / "docs").is_dir():
        shutil.copytree(_source() / "docs", folder / "docs", ignore=IGNORE)
    (folder / "README.md").write_text(README, encoding="utf-8")
    (folder / LEARNER_MARKER).write_text(marker_text("learner"), encoding="utf-8")
    learner = Workbook.find(folder)
    live = session.live_session(learner)  # its katas' examples, cut to the open levels
    for slug in live.katas if live is not None else ():
        kata = learner.kata(slug)
        workspace.write_visible(learner, kata, session.view(learner, kata).levels)
    return folder, dest
