"""`kata init DIR`: a new workbook, written from the katas this installation carries.

Like a rustlings checkout: install the tool once (pip or pipx), then make a folder to practise in.
The folder gets the katas, reference solutions, hidden suites, exams, bug zoos and docs (see
catalog.CONTENT), a .gitignore for the learner's state, and a short README. Inside it, every
command works as in a clone of the repository; its workspace/ and .kata/ live there too.

Example:
    init_workbook(Path("my-prep"))   -> Path('/home/me/my-prep')
"""

from __future__ import annotations

import shutil
from pathlib import Path

from kata.catalog import CONTENT, CatalogError, content_root

IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis")

README = """# My kata workbook

Made by `kata init`. Practise here: every `kata` command run in this folder (or below it) uses
these katas, and keeps your code in workspace/ and your sessions in .kata/.

    kata start              the 90-minute, four-question mock assessment
    kata start SLUG         one kata on its own timer (`kata list` shows them)
    kata show / check / submit / review

solutions/ and graders/ hold the reference solutions and hidden suites, so that grading works
offline: reading them spoils the practice.
"""


def init_workbook(target: Path) -> Path:
    """Write a workbook into `target` (which must not exist, or be an empty folder)."""
    source = content_root()
    if source is None:
        raise CatalogError("this installation carries no katas (kata/_content is missing): "
                           "reinstall kata-workbook")
    target = target.expanduser()
    if target.exists() and not target.is_dir():
        raise CatalogError(f"{target}: a file is in the way: choose another folder name")
    if target.is_dir() and any(target.iterdir()):
        raise CatalogError(f"{target}: the folder is not empty: choose a new or empty folder "
                           "(nothing in it was touched)")
    target = target.resolve()
    if source == target or source in target.parents:
        raise CatalogError(f"{target}: inside the workbook kata was installed from: choose a "
                           "folder elsewhere")
    target.mkdir(parents=True, exist_ok=True)
    for name in CONTENT:
        if (source / name).is_dir():
            shutil.copytree(source / name, target / name, ignore=IGNORE)
    (target / "README.md").write_text(README, encoding="utf-8")
    (target / ".gitignore").write_text("/workspace/\n/.kata/\n__pycache__/\n", encoding="utf-8")
    return target
