"""The learner's workspace: stubs are copied in, and no learner file is ever lost.

`prepare` copies each kata's stub to workspace/<module>. A file already there is copied to
.kata/archive/<UTC time>/<module> first (and the copy checked byte for byte) unless it is
identical to the stub, so nothing the learner wrote can be overwritten or deleted.

Example:
    prepare(wb, [kata])  -> [Prepared(kata, Path('workspace/lru_kv_cache.py'), archived=None)]
"""

from __future__ import annotations

import filecmp
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from kata.catalog import Kata, Workbook


class WorkspaceError(Exception):
    """A workspace problem the user can fix (a missing file, an unreadable one)."""


@dataclass(frozen=True, slots=True)
class Prepared:
    kata: Kata
    path: Path
    archived: Path | None  # where the learner's previous file went, if anywhere
    # the question's other files (a hunt's pin file) that held other work: (file, archived copy)
    others_archived: tuple[tuple[Path, Path], ...] = ()


def archive_dir(wb: Workbook, now: float | None = None) -> Path:
    """A fresh folder under .kata/archive/, named by UTC time (with a suffix if taken)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now if now is not None else time.time()))
    base = wb.kata_dir / "archive"
    candidate = base / stamp
    n = 1
    while candidate.exists():
        n += 1
        candidate = base / f"{stamp}-{n}"
    return candidate


def archive(wb: Workbook, files: list[Path], now: float | None = None) -> dict[Path, Path]:
    """Copy `files` into one new archive folder; return original -> copy. Raises on any failure."""
    if not files:
        return {}
    dest = archive_dir(wb, now)
    dest.mkdir(parents=True)
    copies = {}
    for f in files:
        target = dest / f.name
        shutil.copy2(f, target)
        if not filecmp.cmp(f, target, shallow=False):
            raise WorkspaceError(f"{target}: archive copy differs from {f}: nothing was overwritten")
        copies[f] = target
    return copies


def prepare(wb: Workbook, katas: list[Kata], now: float | None = None) -> list[Prepared]:
    """Put a fresh stub for each kata in the workspace, archiving any learner file first."""
    wb.workspace.mkdir(parents=True, exist_ok=True)
    targets = [(k, wb.workspace_file(k)) for k in katas]
    for k, _ in targets:
        if not k.stub.is_file():
            raise WorkspaceError(f"{k.stub}: the kata's stub is missing: restore it or fix kata.toml")
    to_archive = [t for k, t in targets if t.exists() and not filecmp.cmp(t, k.stub, shallow=False)]
    copies = archive(wb, to_archive, now)
    prepared = []
    for k, target in targets:
        shutil.copyfile(k.stub, target)
        prepared.append(Prepared(k, target, copies.get(target)))
    return prepared


def put(wb: Workbook, files: dict[Path, str], now: float | None = None) -> dict[Path, Path]:
    """Write each file's text (a hunt's code and test template), archiving first any file already
    there whose content differs; return original -> archived copy."""
    wb.workspace.mkdir(parents=True, exist_ok=True)
    to_archive = []
    for path, text in files.items():
        try:
            if path.exists() and path.read_bytes() != text.encode("utf-8"):
                to_archive.append(path)
        except OSError as exc:
            raise WorkspaceError(f"{path}: cannot be read ({exc}): nothing was overwritten") from None
    copies = archive(wb, to_archive, now)
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    return copies


def read_learner_file(wb: Workbook, kata: Kata) -> tuple[Path, str]:
    path = wb.workspace_file(kata)
    if not path.is_file():
        raise WorkspaceError(
            f"{path}: no workspace file for '{kata.slug}': run `kata start {kata.slug}` first"
        )
    try:
        return path, path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise WorkspaceError(f"{path}: not UTF-8 text: save it as UTF-8") from None


def visible_file(wb: Workbook, kata: Kata) -> Path:
    """The workspace's test file of a kata: its visible examples of the open levels, next to the
    learner's module, so plain pytest runs them (`pytest workspace/`)."""
    return wb.workspace / f"test_{kata.module}"


def write_visible(wb: Workbook, kata: Kata, levels: list[int], now: float | None = None) -> Path | None:
    """Write the visible examples of `levels` to the workspace's test file (see kata.visible).
    A file there that the learner changed since kata wrote it is archived first; None when the
    kata has no visible tests to cut."""
    from kata.visible import cut

    try:
        text = cut(kata.visible_tests.read_text(encoding="utf-8"), levels)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None
    path = visible_file(wb, kata)
    given = wb.kata_dir / "given" / path.name  # what kata wrote last: an edit is told from it
    wb.workspace.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    try:
        if path.exists() or path.is_symlink():
            current = path.read_bytes() if path.is_file() and not path.is_symlink() else None
            if current == data:
                return path
            ours = given.is_file() and current is not None and given.read_bytes() == current
            if not ours:
                if current is None:
                    raise WorkspaceError(f"{path}: not a regular file: move it away, kata writes the "
                                         "open levels' examples there")
                archive(wb, [path], now)
            path.unlink()
    except OSError as exc:
        raise WorkspaceError(f"{path}: cannot be replaced ({exc.strerror}): nothing was overwritten") from None
    path.write_bytes(data)
    given.parent.mkdir(parents=True, exist_ok=True)
    given.write_bytes(data)
    return path
