"""Ship the workbook's content inside the wheel.

The katas, reference solutions, hidden suites, exams, bug zoos and docs live at the repository's root (a
clone is a workbook). A wheel carries them as package data under kata/_content/, from which `kata
init DIR` writes a new workbook; an editable install reads them from the clone itself.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
CONTENT = ("katas", "solutions", "graders", "exams", "tests/bugs", "docs")  # = kata.catalog.CONTENT
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis")


class BuildPyWithContent(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        dest = Path(self.build_lib) / "kata" / "_content"
        for name in CONTENT:
            if (ROOT / name).is_dir():
                shutil.rmtree(dest / name, ignore_errors=True)
                shutil.copytree(ROOT / name, dest / name, ignore=IGNORE)


setup(cmdclass={"build_py": BuildPyWithContent})
