"""The hidden suite's manifest and the private copy a grading run works on.

`kata validate` records graders/<slug>/MANIFEST.json: the sha256 of every file of the hidden suite
and of the reference. Grading refuses a suite that differs (IntegrityError: no grade), and the
harness checks the run's private copy against the same record before every child starts
(`copy_changes`), so a child that rewrote its copy is caught before another child trusts it.

The private copy holds only what the suite needs (`private_copy`): the visible tests need the
kata's folder only; the hidden suite needs its graders, and the reference only when a grader loads
it in-process (its source names `solutions/`, e.g. a timing comparison against the reference).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from kata.catalog import CatalogError, Kata

MANIFEST = "MANIFEST.json"
_COPY_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis")


class IntegrityError(CatalogError):
    """The hidden suite on disk is not the one `kata validate` recorded: no grade is given."""


def _manifest_files(kata: Kata) -> list[Path]:
    # caches a local pytest run leaves beside the suite (git ignores them) are not the suite
    files = [p for p in sorted(kata.grader.rglob("*"))
             if p.is_file() and p.name != MANIFEST and p.suffix != ".pyc"
             and not {"__pycache__", ".hypothesis", ".pytest_cache"} & set(p.parts)]
    if kata.solution.is_file():
        files.append(kata.solution)
    return files


def compute_manifest(kata: Kata) -> dict:
    """{"files": {path relative to the workbook root: sha256}} of the hidden suite and reference."""
    return {"files": {p.relative_to(kata.root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                      for p in _manifest_files(kata)}}


def write_manifest(kata: Kata) -> bool:
    """Write graders/<slug>/MANIFEST.json (by `kata validate`); True if it changed."""
    path = kata.grader / MANIFEST
    text = json.dumps(compute_manifest(kata), indent=1, sort_keys=True) + "\n"
    if path.is_file() and path.read_text() == text:
        return False
    path.write_text(text)
    return True


def verify_manifest(kata: Kata) -> None:
    """Raise IntegrityError naming the first file that differs from graders/<slug>/MANIFEST.json."""
    path = kata.grader / MANIFEST
    rel = path.relative_to(kata.root).as_posix()
    fix = f"restore it (e.g. `git checkout graders/{kata.slug} solutions`), or run `kata validate {kata.slug}` if you changed it on purpose"
    try:
        recorded = json.loads(path.read_text())["files"]
    except FileNotFoundError:
        raise IntegrityError(f"{rel}: missing: run `kata validate {kata.slug}` to write it") from None
    except (ValueError, KeyError, TypeError):
        raise IntegrityError(f"{rel}: not a manifest kata can read: {fix}") from None
    actual = compute_manifest(kata)["files"]
    for name in sorted(recorded.keys() | actual.keys()):
        if name not in actual:
            raise IntegrityError(f"{name}: missing from the hidden suite since {rel} was written: {fix}")
        if name not in recorded:
            raise IntegrityError(f"{name}: not in {rel}, added after it was written: {fix}")
        if recorded[name] != actual[name]:
            raise IntegrityError(f"{name}: changed since {rel} was written: {fix}")


def needs_reference(kata: Kata) -> bool:
    """Whether a grader of the hidden suite loads the reference in-process (names `solutions/`)."""
    if not kata.grader.is_dir():
        return False
    return any("solutions" in p.read_text(encoding="utf-8", errors="replace")
               for p in sorted(kata.grader.rglob("*.py")))


def private_copy(kata: Kata, dest: Path, suite: str | None = None,
                 reference: bool | None = None) -> Path:
    """Copy what grading the kata needs into dest/wb (a workbook of one kata); return its root.

    `suite`: "visible" copies the kata's folder only (no hidden test); "hidden" adds the graders.
    The reference comes along when `reference` is true (grading the reference itself); by default
    only for the hidden suite when a grader needs it in-process, and always for `suite` None (a
    snapshot to grade many runs from)."""
    root = dest / "wb"
    shutil.copytree(kata.dir, root / "katas" / kata.slug, ignore=_COPY_IGNORE)
    if suite != "visible" and kata.grader.is_dir():
        shutil.copytree(kata.grader, root / "graders" / kata.slug, ignore=_COPY_IGNORE)
    if reference is None:
        reference = suite is None or (suite == "hidden" and needs_reference(kata))
    if reference and kata.solution.is_file():
        (root / "solutions").mkdir(parents=True, exist_ok=True)
        shutil.copy2(kata.solution, root / "solutions" / kata.solution.name)
    return root


def copy_changes(kata: Kata, root: Path) -> str | None:
    """The first file of the private copy under `root` that differs from the kata's manifest
    (changed, added or removed since the copy was made), or None. A reference left out of the
    copy on purpose is not a difference."""
    path = kata.grader / MANIFEST
    if not path.is_file():
        return None
    recorded = json.loads(path.read_text())["files"]
    grader_rel = f"graders/{kata.slug}/"
    copied = root / "graders" / kata.slug
    if not copied.is_dir():
        return None
    actual = {f"{grader_rel}{p.relative_to(copied).as_posix()}": p
              for p in sorted(copied.rglob("*"))
              if p.is_file() and p.name != MANIFEST and "__pycache__" not in p.parts
              and p.suffix != ".pyc"}
    solution = root / "solutions" / kata.solution.name
    if solution.is_file() or solution.is_symlink():
        actual[f"solutions/{kata.solution.name}"] = solution
    for name in sorted(recorded.keys() | actual.keys()):
        if name.startswith("solutions/") and name not in actual:
            continue
        if name not in actual:
            return f"{name}: removed from the private copy"
        if name not in recorded or hashlib.sha256(actual[name].read_bytes()).hexdigest() != recorded[name]:
            return f"{name}: changed in the private copy"
    return None
