"""Instructor tools: a student bundle, and grading a whole cohort into one gradebook.

Student bundle: a copy of the workbook a student can use (prompts, stubs, visible tests, the CLI
for start / check / status), with no reference solution, no hidden test and no bug zoo.

Cohort grading: SUBMISSIONS/<student>/<module>.py (or SUBMISSIONS/<student>/workspace/<module>.py)
for every kata whose module file the student handed in, graded on the hidden suites with the same
harness and isolation as `kata submit`, `workers` at a time. `--shard K/N` takes a deterministic
slice of the students (every N-th, by sorted name), and `merge` combines slices into exactly the
gradebook one run would have written.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import stat
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable

from kata.catalog import BUNDLE_MARKER, CatalogError, Kata, Workbook
from kata.suites import file_sha256, suite_version

IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis", "*.egg-info",
                                "_content")  # _content: the katas a wheel carries, solutions included


# --- the student bundle -----------------------------------------------------


def student_bundle(wb: Workbook, out: Path) -> list[Path]:
    """Write a student workbook to `out` (which must not exist or be empty); return its files."""
    out = out.resolve()
    if out.exists() and any(out.iterdir()):
        raise CatalogError(f"{out}: exists and is not empty: choose a new folder")
    if out == wb.root or wb.root in out.parents:
        raise CatalogError(f"{out}: inside the workbook itself: choose a folder outside it")
    katas = wb.katas()
    out.mkdir(parents=True, exist_ok=True)
    for kata in katas:
        dest = out / "katas" / kata.slug
        dest.mkdir(parents=True)
        for f in (kata.prompt, kata.stub, kata.visible_tests):
            shutil.copy2(f, dest / f.name)
        (dest / "kata.toml").write_text(bundle_kata_toml(kata), encoding="utf-8")
    if (wb.root / "exams").is_dir():
        shutil.copytree(wb.root / "exams", out / "exams", ignore=IGNORE)
    # the tool itself (from where this package lives, which is not always the workbook), so
    # that `pip install -e OUT` gives the student a working `kata`
    tool = Path(__file__).resolve().parent.parent
    for name in ("kata",):
        if (tool / name).is_dir():
            shutil.copytree(tool / name, out / name, ignore=IGNORE)
    for name in ("pyproject.toml",):
        if (tool / name).is_file():
            shutil.copy2(tool / name, out / name)
    (out / BUNDLE_MARKER).write_text("A student bundle: no reference solutions, no hidden tests.\n")
    (out / "README.md").write_text(
        "# Kata workbook (student bundle)\n\n"
        "This bundle holds the prompts, stubs and visible tests only: no reference solutions and\n"
        "no hidden tests. Grading happens on your instructor's side.\n\n"
        "    python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/kata start\n\n"
        "Then `kata show SLUG`, edit workspace/<module>.py, `kata check SLUG`, `kata status`.\n"
        "Hand your workspace/ folder to your instructor when the time is up.\n"
    )
    leaks = bundle_leaks(wb, out)
    if leaks:
        raise CatalogError(f"{leaks[0]}: a hidden file would leak into the bundle: nothing is safe, delete {out}")
    return sorted(p for p in out.rglob("*") if p.is_file())


def _toml_value(value) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return str(value)


def bundle_kata_toml(kata: Kata) -> str:
    """kata.toml for a student: its hints sealed, the instructor-only equivalent_mutants left out."""
    from kata.catalog import seal_hints

    head = {"slug": kata.slug, "title": kata.title, "summary": kata.summary,
            "difficulty": kata.difficulty, "minutes": kata.minutes, "module": kata.module,
            "tags": list(kata.tags)}
    lines = [f"{k} = {_toml_value(v)}" for k, v in head.items()]
    for lv in kata.levels:
        lines += ["", "[[levels]]", f"name = {_toml_value(lv.name)}", f"points = {lv.points}",
                  f"sealed_hints = {_toml_value(seal_hints(kata.slug, list(lv.hints)))}"]
    return "\n".join(lines) + "\n"


def bundle_leaks(wb: Workbook, out: Path) -> list[Path]:
    """Files in `out` that are, or copy the text of, a solution, a hidden test or a bug."""
    secret_texts = set()
    for pattern in ("solutions/*.py", "graders/**/*.py", "tests/bugs/**/*.py", "tests/bugs/**/*.patch"):
        for f in wb.root.glob(pattern):
            secret_texts.add(f.read_bytes())
    leaks = []
    for f in out.rglob("*"):
        if not f.is_file():
            continue
        parts = set(f.relative_to(out).parts)
        if parts & {"solutions", "graders", "bugs"} or f.read_bytes() in secret_texts:
            leaks.append(f)
    return leaks


# --- cohort grading ---------------------------------------------------------


def parse_shard(text: str | None) -> tuple[int, int]:
    """'2/4' -> (2, 4); None -> (1, 1)."""
    if text is None:
        return 1, 1
    m = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if not m or not (1 <= int(m.group(1)) <= int(m.group(2))):
        raise CatalogError(f"--shard {text!r}: write K/N with 1 <= K <= N, e.g. --shard 1/4")
    return int(m.group(1)), int(m.group(2))


LAYOUT = "SUBMISSIONS/<student>/<module>.py or SUBMISSIONS/<student>/workspace/<module>.py"
MAX_SUBMISSION_BYTES = 1024 * 1024  # a kata module is a few KB; anything far larger is refused


def discover(wb: Workbook, submissions: Path) -> dict[str, dict[str, Path]]:
    """student -> {slug: path} for every kata module name found in the student's folder.

    SUBMISSIONS is taken relative to the current folder (never the workbook's). A path is listed
    whatever it is (a symlink, a FIFO, a folder): `snapshot` says why it cannot be graded. A batch
    in which no student handed in any kata file is an error, not a gradebook of zeros.
    """
    submissions = Path(submissions).expanduser().resolve()
    if not submissions.is_dir():
        raise CatalogError(f"{submissions}: not a folder of student submissions ({LAYOUT})")
    katas = wb.katas()
    found: dict[str, dict[str, Path]] = {}
    for student in sorted(p for p in submissions.iterdir() if p.is_dir() and not p.name.startswith(".")):
        files = {}
        for kata in katas:
            for candidate in (student / kata.module, student / "workspace" / kata.module):
                if os.path.lexists(candidate):
                    files[kata.slug] = candidate
                    break
        found[student.name] = files
    if not any(found.values()):
        modules = ", ".join(sorted(k.module for k in katas))
        raise CatalogError(
            f"{submissions}: no student folder holds a kata file ({modules}): expected {LAYOUT}"
        )
    return found


def read_submission(path: Path) -> str:
    """The text of one handed-in file, read once; CatalogError (one line naming the file) for a
    symlink, a FIFO, a device, a folder, a file over MAX_SUBMISSION_BYTES or bytes not UTF-8."""
    name = os.fsdecode(path).encode("utf-8", "backslashreplace").decode()
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise CatalogError(f"{name}: a symbolic link: hand in the file itself")
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) \
            else "not a regular file"
        raise CatalogError(f"{name}: {kind}: hand in a regular Python file")
    if st.st_size > MAX_SUBMISSION_BYTES:
        raise CatalogError(f"{name}: {st.st_size} bytes, over the {MAX_SUBMISSION_BYTES} limit")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # no race into a FIFO
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise CatalogError(f"{name}: changed into something that is not a file: hand in a file")
        data = os.read(fd, MAX_SUBMISSION_BYTES + 1)
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CatalogError(f"{name}: byte {exc.start} is not UTF-8: save the file as UTF-8") from None


def shown(name: str) -> str:
    """A file name as text that can be printed and written (bytes not UTF-8 as \\xNN)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def snapshot(students: dict[str, dict[str, Path]], mine: list[str]) -> dict[tuple[str, str], str | CatalogError]:
    """(student, slug) -> the code, or why it cannot be graded: every file read before the first
    student's code runs, so no student can change what another hands in."""
    taken: dict[tuple[str, str], str | CatalogError] = {}
    for student in mine:
        for slug, path in students[student].items():
            try:
                if shown(student) != student:
                    raise CatalogError(f"{shown(str(path.parent))}: the folder name is not UTF-8: rename it")
                taken[(student, slug)] = read_submission(path)
            except OSError as exc:
                taken[(student, slug)] = CatalogError(f"{path}: cannot be read ({exc.strerror})")
            except CatalogError as exc:
                taken[(student, slug)] = exc
    return taken


@dataclass
class Row:
    student: str
    kata: str
    status: str  # pass | fail | error | missing
    points_earned: float
    points_possible: float
    levels: list[float]  # points earned per level
    failed: list[str]  # hidden tests not passed (node ids)
    message: str | None = None
    file: str | None = None  # the file graded, relative to SUBMISSIONS
    sha256: str | None = None  # of the bytes graded (`kata regrade --batch` checks it)
    suite_version: str | None = None  # the hidden suite that graded it (kata.suites)
    previous: dict | None = None  # a regrade: the old row's points_earned and suite_version


def grade_batch(wb: Workbook, submissions: Path, workers: int = 2, shard: str | None = None,
                on_done: Callable[[Row], None] | None = None, limits=None,
                out: Path | None = None, on_result: Callable[[str, str, object], None] | None = None) -> dict:
    """Grade a cohort (or one shard of it); return the gradebook as a dict.

    Before the first student is graded, every hidden suite is checked against its manifest and
    copied to a private snapshot, and every student's files are read into memory (`snapshot`);
    each student is then graded on a fresh copy of the suite, with only their own code in view.
    With `out`, the gradebook is rewritten there as each student's row comes in, so an interrupted
    batch keeps every finished row.
    """
    from kata.catalog import load_kata
    from kata.grading import private_copy, temp_folder, verify_manifest

    k, n = parse_shard(shard)
    submissions = Path(submissions).expanduser().resolve()
    students = discover(wb, submissions)
    mine = [s for i, s in enumerate(students) if i % n == k - 1]
    codes = snapshot(students, mine)
    where = {(student, slug): {"file": shown(path.relative_to(submissions).as_posix())}
             for student in mine for slug, path in students[student].items()}
    with temp_folder("batch") as tmp:
        for kata in wb.katas():
            verify_manifest(kata)
            suites = private_copy(kata, Path(tmp))
        katas = {slug: load_kata(suites, slug) for slug in wb.slugs()}
        levels = {slug: [lv.name for lv in kata.levels] for slug, kata in katas.items()}
        versions = {slug: suite_version(kata) for slug, kata in katas.items()}
        for (student, slug), code in codes.items():
            if isinstance(code, str):
                where[(student, slug)]["sha256"] = file_sha256(code.encode("utf-8"))
        rows: list[Row] = []

        def done(row: Row, student: str, result) -> None:
            if row.status != "missing":
                row.suite_version = versions[row.kata]
                for key, value in where.get((student, row.kata), {}).items():
                    setattr(row, key, value)
            rows.append(row)
            if out is not None:
                write_gradebook(gradebook(rows, levels, f"{k}/{n}", [shown(s) for s in mine],
                                          submissions=str(submissions)), out)
            if on_result is not None and result is not None:  # the full result, for JUnit
                on_result(row.student, row.kata, result)
            if on_done:
                on_done(row)

        _grade_students(katas, codes, [(s, slug) for s in mine for slug in katas], done, limits,
                        workers)
        return gradebook(rows, levels, shard=f"{k}/{n}", students=[shown(s) for s in mine],
                         submissions=str(submissions))


def _grade_one(student: str, kata: Kata, code, limits) -> tuple[Row, str, object]:
    """(the row, the student's folder name as discovered, the full result or None)."""
    from kata.grading import Limits, grade

    zero = [0.0] * len(kata.levels)
    if code is None:
        return Row(shown(student), kata.slug, "missing", 0.0, kata.points, zero, [], "no file handed in"), \
            student, None
    if isinstance(code, CatalogError):
        return Row(shown(student), kata.slug, "error", 0.0, kata.points, zero, [], str(code)), student, None
    try:
        result = grade(kata, Path(shown(student)) / kata.module, "hidden", limits or Limits(), code=code)
    except Exception as exc:  # one broken submission never stops the batch
        return Row(shown(student), kata.slug, "error", 0.0, kata.points, zero, [],
                   f"grading failed: {type(exc).__name__}: {exc}"), student, None
    return Row(shown(student), kata.slug, result.status, result.points_earned, kata.points,
               [lv.points_earned for lv in result.levels],
               [t.name for t in result.tests if t.status != "pass"], result.message), student, result


def _grade_students(katas, codes, jobs, done, limits, workers) -> None:
    """Grade `jobs` (student, slug), `workers` at a time, calling `done(row)` as each finishes.
    Ctrl-C stops cleanly: grading children are killed, no new job starts, rows already done stay."""
    from kata.grading import child_guard

    with child_guard():
        pool = ThreadPoolExecutor(max_workers=max(1, workers))
        try:
            futures = [pool.submit(_grade_one, student, katas[slug], codes.get((student, slug)), limits)
                       for student, slug in jobs]
            for fut in as_completed(futures):
                done(*fut.result())
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def gradebook(rows: list[Row], levels: dict[str, list[str]], shard: str, students: list[str],
              submissions: str | None = None) -> dict:
    """The gradebook as data: rows sorted by student and kata, and the most-failed hidden tests.
    `suite_versions` lists, per kata, every hidden-suite version its rows were graded on: more
    than one means the scores are not comparable (`kata regrade --batch`)."""
    rows = sorted(rows, key=lambda r: (r.student, r.kata))
    failures = Counter(name for r in rows for name in r.failed)
    graded = Counter(r.kata for r in rows if r.status != "missing")
    most_failed = [
        {"test": name, "kata": name.split("/")[1] if name.count("/") >= 1 else "",
         "students_failed": count}
        for name, count in sorted(failures.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    ]
    suite_versions: dict[str, list[str]] = {}
    for r in rows:
        if r.suite_version and r.suite_version not in suite_versions.setdefault(r.kata, []):
            suite_versions[r.kata].append(r.suite_version)
    return {
        "version": 1,
        "shard": shard,
        "submissions": submissions,
        "suite_versions": dict(sorted(suite_versions.items())),
        "mixed_suite_versions": any(len(v) > 1 for v in suite_versions.values()),
        "students": sorted(students),
        "katas": dict(sorted(levels.items())),
        "rows": [r.__dict__ for r in rows],
        "graded_per_kata": dict(sorted(graded.items())),
        "most_failed": most_failed,
    }


def merge(books: list[dict]) -> dict:
    """Combine shards into one gradebook (identical to a single run over every student)."""
    if not books:
        raise CatalogError("gradebook merge: give at least one gradebook JSON file")
    katas = books[0]["katas"]
    for b in books[1:]:
        if b["katas"] != katas:
            raise CatalogError("gradebook merge: the gradebooks were made from different katas")
    rows = [Row(**r) for b in books for r in b["rows"]]
    seen = Counter((r.student, r.kata) for r in rows)
    dupes = [key for key, c in seen.items() if c > 1]
    if dupes:
        raise CatalogError(f"gradebook merge: student '{dupes[0][0]}' appears in two shards: merge each shard once")
    students = sorted({s for b in books for s in b["students"]})
    return gradebook(rows, katas, "1/1", students, submissions=books[0].get("submissions"))


def wide_rows(book: dict) -> list[list]:
    """One row per student, a column of points per kata, then the total: the shape Canvas and
    Gradescope import (the long form, a row per student and kata, is gradebook.csv)."""
    slugs = list(book["katas"])
    points = {(r["student"], r["kata"]): r["points_earned"] for r in book["rows"]}
    possible = {r["kata"]: r["points_possible"] for r in book["rows"]}
    header = ["student", *slugs, "total", "possible"]
    rows: list[list] = [header]
    for student in book["students"]:
        earned = [points.get((student, slug), 0.0) for slug in slugs]
        rows.append([student, *earned, round(sum(earned), 6),
                     sum(possible.get(slug, 0) for slug in slugs)])
    return rows


def write_gradebook(book: dict, out: Path) -> tuple[Path, Path]:
    """gradebook.json, gradebook.csv (one row per student and kata, points per level) and
    gradebook-wide.csv (one row per student, a column per kata: for LMS import)."""
    out.mkdir(parents=True, exist_ok=True)
    json_path, csv_path = out / "gradebook.json", out / "gradebook.csv"
    json_path.write_text(json.dumps(book, indent=2) + "\n")
    max_levels = max((len(v) for v in book["katas"].values()), default=0)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["student", "kata", "status", "points_earned", "points_possible",
                *[f"level_{i}" for i in range(1, max_levels + 1)], "tests_failed"])
    for r in book["rows"]:
        levels = r["levels"] + [""] * (max_levels - len(r["levels"]))
        w.writerow([r["student"], r["kata"], r["status"], r["points_earned"], r["points_possible"],
                    *levels, len(r["failed"])])
    csv_path.write_text(buf.getvalue())
    wide = io.StringIO()
    csv.writer(wide, lineterminator="\n").writerows(wide_rows(book))
    (out / "gradebook-wide.csv").write_text(wide.getvalue())
    return json_path, csv_path


def regrade_batch(wb: Workbook, gradebook_path: Path, limits=None) -> dict:
    """Grade a grade-batch's students again on today's suites; the new gradebook keeps each row's
    old points and suite version under `previous`."""
    from kata.grading import Limits, grade

    try:
        book = json.loads(Path(gradebook_path).read_text(encoding="utf-8"))
        submissions = Path(book["submissions"])
        old_rows = book["rows"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CatalogError(f"{gradebook_path}: not a gradebook kata can regrade ({exc}): it must be a "
                           "gradebook.json written by `kata grade-batch`") from None
    rows = []
    versions = {}
    for old in old_rows:
        kata = wb.kata(old["kata"])
        versions[kata.slug] = suite_version(kata)
        previous = {"points_earned": old["points_earned"], "suite_version": old.get("suite_version")}
        if old["status"] == "missing" or not old.get("file") or not old.get("sha256"):
            row = Row(**{k: v for k, v in old.items() if k in Row.__dataclass_fields__})
        else:
            path = submissions / old["file"]
            code: str | CatalogError
            try:
                code = read_submission(path)
                if file_sha256(code.encode("utf-8")) != old["sha256"]:
                    raise CatalogError(f"{path}: changed since it was graded: not regraded")
            except OSError as exc:
                code = CatalogError(f"{path}: cannot be read now ({exc.strerror})")
            except CatalogError as exc:
                code = exc
            if isinstance(code, CatalogError):
                row = Row(old["student"], kata.slug, "error", 0.0, kata.points, [0.0] * len(kata.levels),
                          [], str(code))
            else:
                result = grade(kata, path, "hidden", limits or Limits(), code=code)
                row = Row(old["student"], kata.slug, result.status, result.points_earned, kata.points,
                          [lv.points_earned for lv in result.levels],
                          [t.name for t in result.tests if t.status != "pass"], result.message)
            row.file, row.sha256 = old.get("file"), old.get("sha256")
        row.suite_version = versions[kata.slug]
        row.previous = previous
        rows.append(row)
    new = gradebook(rows, book["katas"], book.get("shard", "1/1"), book["students"],
                    submissions=str(submissions))
    new["regraded_from"] = str(gradebook_path)
    return new
