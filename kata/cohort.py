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
from kata.results import ERROR, PASS

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
    whatever it is (a symlink, a FIFO, a folder): `read_inside` says why it cannot be graded. A
    student folder that is a symbolic link lists every kata, each refused in its row. A batch in
    which no student handed in any kata file is an error, not a gradebook of zeros.
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
            else:
                if student.is_symlink():  # a link to a classmate's folder: refused, not skipped
                    files[kata.slug] = student / kata.module
        found[student.name] = files
    if not any(found.values()):
        modules = ", ".join(sorted(k.module for k in katas))
        raise CatalogError(
            f"{submissions}: no student folder holds a kata file ({modules}): expected {LAYOUT}"
        )
    return found


def inside_parts(rel: str) -> list[str]:
    """The components of `rel`, a path inside a submissions folder written with '/'; CatalogError
    for an absolute path, a '..' or '.' or an empty component (never followed)."""
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise CatalogError(f"{shown(rel)}: not a plain path inside the submissions folder "
                           "(no '..', no leading '/'): not followed")
    return parts


def open_folder_inside(root: Path, parts: list[str], create: bool = False,
                       advice: str = "hand in the folder itself, not a link to one") -> int:
    """A descriptor of the folder root/parts[0]/parts[1]/..., each component opened on its own
    without following a symbolic link (CatalogError naming the first one that is a link or not a
    folder, then `advice`); with `create`, missing folders are made on the way. The caller closes it."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i, part in enumerate(parts):
            name = shown(os.fsdecode(root.joinpath(*parts[:i + 1])))
            if create:
                try:
                    os.mkdir(part, dir_fd=fd)
                except FileExistsError:
                    pass
            st = os.stat(part, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                raise CatalogError(f"{name}: a symbolic link: {advice}")
            if not stat.S_ISDIR(st.st_mode):
                raise CatalogError(f"{name}: not a folder: {advice}")
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_inside(root: Path, rel: str) -> str:
    """The text of one handed-in file, root/rel, read once; every component of `rel` is checked
    on the way (no '..', no symbolic link: a student folder linked to a classmate's is refused).
    CatalogError (one line naming the path) for a link (symbolic or hard), a FIFO, a device, a folder, a file over
    MAX_SUBMISSION_BYTES or bytes not UTF-8; OSError for a file that is not there."""
    parts = inside_parts(rel)
    name = shown(os.fsdecode(root.joinpath(*parts)))
    folder = open_folder_inside(root, parts[:-1])
    try:
        st = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            raise CatalogError(f"{name}: a symbolic link: hand in the file itself")
        if not stat.S_ISREG(st.st_mode):
            kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) \
                else "not a regular file"
            raise CatalogError(f"{name}: {kind}: hand in a regular Python file")
        if st.st_size > MAX_SUBMISSION_BYTES:
            raise CatalogError(f"{name}: {st.st_size} bytes, over the {MAX_SUBMISSION_BYTES} limit")
        if st.st_nlink > 1:  # one file under two names: a classmate's, say
            raise CatalogError(f"{name}: a hard link ({st.st_nlink} names for one file): hand in a "
                               "copy of your own")
        # O_NOFOLLOW and O_NONBLOCK: no race into a link or a FIFO
        fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    finally:
        os.close(folder)
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


def write_inside(folder: int, name: str, text: str) -> None:
    """Write `name` in the open folder `folder` as a new file renamed over it: a symbolic link
    planted at `name` is replaced, never followed."""
    tmp = f".{name}.{os.urandom(6).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=folder)
        except OSError:
            pass
        raise


def shown(name: str) -> str:
    """A file name as text that can be printed and written (bytes not UTF-8 as \\xNN)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def snapshot(students: dict[str, dict[str, Path]], mine: list[str],
             submissions: Path) -> dict[tuple[str, str], str | CatalogError]:
    """(student, slug) -> the code, or why it cannot be graded: every file read before the first
    student's code runs, so no student can change what another hands in; each read inside
    `submissions`, component by component (`read_inside`)."""
    taken: dict[tuple[str, str], str | CatalogError] = {}
    for student in mine:
        for slug, path in students[student].items():
            try:
                if shown(student) != student:
                    raise CatalogError(f"{shown(str(path.parent))}: the folder name is not UTF-8: rename it")
                taken[(student, slug)] = read_inside(submissions, path.relative_to(submissions).as_posix())
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


def batch_limits(timeout: float):
    """A cohort's grading: `timeout` a test, and budgets that leave an honest slow test its time
    (nobody waits at a screen for one row, as a learner does for a submit)."""
    from kata.grading import Limits

    return Limits(test_timeout=timeout, hard_test_grace=max(2.0, timeout / 2), wall_timeout=max(60.0, 3 * timeout),
                  strike_timeout=min(timeout, 5.0), rescue_timeout=max(60.0, 3 * timeout))


def grade_batch(wb: Workbook, submissions: Path, workers: int = 2, shard: str | None = None,
                on_done: Callable[[Row], None] | None = None, limits=None,
                out: Path | None = None, on_result: Callable[[str, str, object], None] | None = None,
                reference_apart: bool = True) -> dict:
    """Grade a cohort (or one shard of it); return the gradebook as a dict.

    Before the first student is graded, every hidden suite is checked against its manifest and
    copied to a private snapshot, and every student's files are read into memory (`snapshot`);
    each student is then graded on a fresh copy of the suite, with only their own code in view.
    With `out`, the gradebook is rewritten there as each student's row comes in, so an interrupted
    batch keeps every finished row. `reference_apart` (the default): each kata's reference runs
    once, alone, in its own child, and each student's run gets only what it measured (no timing
    test puts the reference in a process that runs student code).
    """
    from kata.catalog import load_kata
    from kata.grading import private_copy, temp_folder, verify_manifest

    k, n = parse_shard(shard)
    submissions = Path(submissions).expanduser().resolve()
    students = discover(wb, submissions)
    mine = [s for i, s in enumerate(students) if i % n == k - 1]
    codes = snapshot(students, mine, submissions)
    where = {(student, slug): {"file": shown(path.relative_to(submissions).as_posix())}
             for student in mine for slug, path in students[student].items()}
    with temp_folder("batch") as tmp:
        for kata in wb.katas():
            verify_manifest(kata)
            suites = private_copy(kata, Path(tmp))
        katas = {slug: load_kata(suites, slug) for slug in wb.slugs()}
        levels = {slug: [lv.name for lv in kata.levels] for slug, kata in katas.items()}
        versions = {slug: suite_version(kata) for slug, kata in katas.items()}
        handed_in = {slug for (_, slug), code in codes.items() if isinstance(code, str)}
        baselines = _baselines({s: k for s, k in katas.items() if s in handed_in}, workers) \
            if reference_apart else {}
        reference = "apart" if reference_apart else "in-process"
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
                                          submissions=str(submissions), reference=reference), out)
            if on_result is not None and result is not None:  # the full result, for JUnit
                on_result(row.student, row.kata, result)
            if on_done:
                on_done(row)

        _grade_students(katas, codes, [(s, slug) for s in mine for slug in katas], done, limits,
                        workers, baselines)
        return gradebook(rows, levels, shard=f"{k}/{n}", students=[shown(s) for s in mine],
                         submissions=str(submissions), reference=reference)


def _baselines(katas: dict[str, Kata], workers: int) -> dict[str, dict]:
    """Each kata's reference run alone (with the reference's generous bounds: it is trusted code),
    `workers` at a time: what it measured, by slug."""
    from kata.grading import child_guard, record_baselines

    with child_guard(), ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = {slug: pool.submit(record_baselines, kata) for slug, kata in katas.items()}
        return {slug: fut.result() for slug, fut in futures.items()}


def _grade_one(student: str, kata: Kata, code, limits, baselines=None) -> tuple[Row, str, object]:
    """(the row, the student's folder name as discovered, the full result or None)."""
    from kata.grading import Limits, grade

    zero = [0.0] * len(kata.levels)
    if code is None:
        return Row(shown(student), kata.slug, "missing", 0.0, kata.points, zero, [], "no file handed in"), \
            student, None
    if isinstance(code, CatalogError):
        return Row(shown(student), kata.slug, ERROR, 0.0, kata.points, zero, [], str(code)), student, None
    try:
        result = grade(kata, Path(shown(student)) / kata.module, "hidden", limits or Limits(), code=code,
                       baselines=baselines)
    except Exception as exc:  # one broken submission never stops the batch
        return Row(shown(student), kata.slug, ERROR, 0.0, kata.points, zero, [],
                   f"grading failed: {type(exc).__name__}: {exc}"), student, None
    return Row(shown(student), kata.slug, result.status, result.points_earned, kata.points,
               [lv.points_earned for lv in result.levels],
               [t.name for t in result.tests if t.status != PASS], result.message), student, result


def _grade_students(katas, codes, jobs, done, limits, workers, baselines) -> None:
    """Grade `jobs` (student, slug), `workers` at a time, calling `done(row)` as each finishes.
    Ctrl-C stops cleanly: grading children are killed, no new job starts, rows already done stay."""
    from kata.grading import child_guard

    with child_guard():
        pool = ThreadPoolExecutor(max_workers=max(1, workers))
        try:
            futures = [pool.submit(_grade_one, student, katas[slug], codes.get((student, slug)), limits,
                                   baselines.get(slug))
                       for student, slug in jobs]
            for fut in as_completed(futures):
                done(*fut.result())
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def gradebook(rows: list[Row], levels: dict[str, list[str]], shard: str, students: list[str],
              submissions: str | None = None, reference: str = "apart") -> dict:
    """The gradebook as data: rows sorted by student and kata, and the most-failed hidden tests.
    `suite_versions` lists, per kata, every hidden-suite version its rows were graded on: more
    than one means the scores are not comparable (`kata regrade --batch`). `reference`: "apart"
    (timed in its own child; no student's process held it) or "in-process"."""
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
    from kata import sandbox

    return {
        "version": 1,
        "shard": shard,
        "submissions": submissions,
        "sandboxed": sandbox.available(),  # false: one student's code could change another's run
        "reference": reference,  # "in-process": a timing test put the reference where code could read it
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
    try:
        rows = [Row(**r) for b in books for r in b["rows"]]
    except (KeyError, TypeError) as exc:
        raise CatalogError(f"gradebook merge: a row is not a grade-batch row ({exc}): merge the "
                           "gradebook.json files grade-batch wrote") from None
    seen = Counter((r.student, r.kata) for r in rows)
    dupes = [key for key, c in seen.items() if c > 1]
    if dupes:
        raise CatalogError(f"gradebook merge: student '{dupes[0][0]}' appears in two shards: merge each shard once")
    students = sorted({s for b in books for s in b["students"]})
    apart = all(b.get("reference", "apart") == "apart" for b in books)
    return gradebook(rows, katas, "1/1", students, submissions=books[0].get("submissions"),
                     reference="apart" if apart else "in-process")


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


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")


def inert(cell):
    """A CSV cell no spreadsheet runs as a formula: text that opens with = + - @ (or a tab or a
    carriage return), such as a student's folder name, gets a leading single quote; numbers, and
    text that is a plain number such as -2.5, stay as they are."""
    if isinstance(cell, str) and cell.startswith(FORMULA_START) and not PLAIN_NUMBER.fullmatch(cell):
        return "'" + cell
    return cell


def write_gradebook(book: dict, out: Path) -> tuple[Path, Path]:
    """gradebook.json, gradebook.csv (one row per student and kata, points per level) and
    gradebook-wide.csv (one row per student, a column per kata: for LMS import); every CSV cell
    made `inert`."""
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
        w.writerow([inert(c) for c in (r["student"], r["kata"], r["status"], r["points_earned"],
                                       r["points_possible"], *levels, len(r["failed"]))])
    csv_path.write_text(buf.getvalue())
    wide = io.StringIO()
    csv.writer(wide, lineterminator="\n").writerows([inert(c) for c in row] for row in wide_rows(book))
    (out / "gradebook-wide.csv").write_text(wide.getvalue())
    return json_path, csv_path


def _batch_gradebook(gradebook_path: Path) -> tuple[dict, Path]:
    """A grade-batch's gradebook.json and its submissions folder, checked: CatalogError (one line)
    for a file kata did not write, or a submissions folder that moved, is gone or is now reached
    through a symbolic link (a regrade follows no link: it grades what the batch graded or nothing)."""
    try:
        book = json.loads(Path(gradebook_path).read_text(encoding="utf-8"))
        recorded = book["submissions"]
        if not isinstance(recorded, str) or not isinstance(book["students"], list) \
                or not isinstance(book["katas"], dict) or not all(
                    isinstance(r, dict) and isinstance(r["student"], str) and isinstance(r["kata"], str)
                    for r in book["rows"]):
            raise TypeError("a field has the wrong type")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CatalogError(f"{gradebook_path}: not a gradebook kata can regrade ({exc}): it must be a "
                           "gradebook.json written by `kata grade-batch`") from None
    submissions = Path(recorded)
    redo = "run `kata grade-batch` on the folder where it is now"
    if not submissions.is_absolute():
        raise CatalogError(f"{gradebook_path}: submissions {recorded!r} is not an absolute path: {redo}")
    if not os.path.lexists(submissions):
        raise CatalogError(f"{gradebook_path}: its submissions folder {recorded} is gone: {redo}")
    if os.path.realpath(submissions) != os.path.normpath(submissions):
        raise CatalogError(f"{gradebook_path}: its submissions folder {recorded} is now reached through a "
                           f"symbolic link (to {os.path.realpath(submissions)}): {redo}")
    if not submissions.is_dir():
        raise CatalogError(f"{gradebook_path}: its submissions folder {recorded} is not a folder: {redo}")
    return book, submissions


def regrade_batch(wb: Workbook, gradebook_path: Path, limits=None) -> dict:
    """Grade a grade-batch's students again on today's suites; the new gradebook keeps each row's
    old points and suite version under `previous`.

    Every score is derived again from the submissions folder, found as grade-batch finds it: the
    gradebook only says which (student, kata) rows to grade and which file, by its path relative
    to the folder and its sha256, each row graded. A row whose file is not where the gradebook
    says, or no longer there, or changed, or was never graded (a file handed in after the batch),
    becomes an error row (0 points) with a one-line reason; a row with no file is missing (0
    points), whatever points the gradebook gave it.
    """
    from kata.grading import Limits, grade

    book, submissions = _batch_gradebook(gradebook_path)
    katas = {slug: wb.kata(slug) for slug in book["katas"]}
    try:
        students = discover(wb, submissions)
    except CatalogError:
        students = {}  # no kata file left at all: every graded row is refused below
    found = {(shown(s), slug): shown(path.relative_to(submissions).as_posix())
             for s, files in students.items() for slug, path in files.items()}
    raw = {shown(s): s for s in students}
    old_rows = {(r["student"], r["kata"]): r for r in book["rows"]}
    if len(old_rows) != len(book["rows"]):
        raise CatalogError(f"{gradebook_path}: a student's kata has two rows: regrade a gradebook "
                           "grade-batch wrote")
    for student in book["students"]:  # a row taken out of the gradebook is derived again too
        for slug in katas:
            old_rows.setdefault((student, slug), {"student": student, "kata": slug, "status": "missing",
                                                  "points_earned": 0.0})
    rows = []
    # the reference of every kata a row is graded on, run once, alone (see grade_batch)
    baselines = _baselines({slug: wb.kata(slug) for (student, slug) in old_rows if (student, slug) in found}, 2)
    for (student, slug), old in sorted(old_rows.items()):
        kata = katas[slug] if slug in katas else wb.kata(slug)
        zero = [0.0] * len(kata.levels)
        rel, recorded = found.get((student, slug)), old.get("file")
        code: str | CatalogError | None = None
        if rel is None:
            if recorded or old.get("status") != "missing":
                code = CatalogError(f"{shown(str(submissions / student))}: no {kata.module} there now, yet "
                                    f"the gradebook has a {old.get('status')!r} row for it: not regraded")
        elif rel != recorded:
            code = CatalogError(f"{rel}: the gradebook records "
                                f"{repr(recorded) if recorded else 'no file handed in'} for this row: "
                                "not regraded")
        else:
            try:
                code = read_inside(submissions, f"{raw[student]}/{rel.split('/', 1)[1]}")
                if not old.get("sha256"):
                    raise CatalogError(f"{rel}: the batch did not grade it (no sha256 recorded): not regraded")
                if file_sha256(code.encode("utf-8")) != old["sha256"]:
                    raise CatalogError(f"{rel}: changed since it was graded: not regraded")
            except OSError as exc:
                code = CatalogError(f"{rel}: cannot be read now ({exc.strerror}): not regraded")
            except CatalogError as exc:
                code = exc
        if code is None:
            row = Row(student, slug, "missing", 0.0, kata.points, zero, [], "no file handed in")
        elif isinstance(code, CatalogError):
            # what the gradebook recorded stays: the next regrade finds the same reason
            row = Row(student, slug, ERROR, 0.0, kata.points, zero, [], str(code), file=recorded,
                      sha256=old.get("sha256"))
        else:
            result = grade(kata, submissions / str(rel), "hidden", limits or Limits(), code=code,
                           baselines=baselines.get(slug, {}))
            row = Row(student, slug, result.status, result.points_earned, kata.points,
                      [lv.points_earned for lv in result.levels],
                      [t.name for t in result.tests if t.status != PASS], result.message,
                      file=rel, sha256=old["sha256"])
        if row.status != "missing":
            row.suite_version = suite_version(kata)
        row.previous = {"points_earned": old.get("points_earned"), "suite_version": old.get("suite_version")}
        rows.append(row)
    levels = {slug: [lv.name for lv in kata.levels] for slug, kata in katas.items()}
    new = gradebook(rows, levels, book.get("shard", "1/1"), book["students"], submissions=str(submissions),
                    reference="apart")
    new["regraded_from"] = str(gradebook_path)
    return new
