"""The instructor's commands, on a catalog (refused in a learner's workbook): `kata validate`,
`new`, `bundle`, `regrade`, `runner`, `grade-batch`, `gradebook merge`. None is registered in a
student bundle (kata.commands.base.IN_BUNDLE).

Bodies parse and present; the work is in kata.validate, kata.mutants, kata.scaffold,
kata.cohort, kata.session and kata.grading.
"""

from __future__ import annotations

from pathlib import Path

import typer

from kata.commands.base import (
    IN_BUNDLE,
    _rel,
    _state,
    app,
    complete_slug,
    emit_json,
    fail,
    full_only,
    grading_progress,
    handled,
    instructor_only,
    out,
    say,
    workbook,
)
from kata.results import ERROR
from kata.usage import KataTyper


@full_only()
@handled
def validate(
    slug: str | None = typer.Argument(None, help="The kata to validate."),
    all_: bool = typer.Option(False, "--all", help="Validate every kata."),
    workers: int = typer.Option(2, "--workers", min=1, help="Grading runs at once."),
    mutants: bool = typer.Option(False, "--mutants", help="Score the hidden suite by mutation testing the reference (needs mutmut 3)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Check katas: schema, API, markers, reference passes, stub fails, determinism, bug zoo.

    With --mutants: the mutation score of the hidden suite, and each surviving mutant as a diff.
    """
    from kata.validate import validate as run

    wb = workbook()
    instructor_only(wb, "validate")
    if bool(slug) == all_:
        fail("give a kata SLUG or --all")
    slugs = wb.slugs() if all_ else [wb.kata(slug).slug]
    if mutants:
        _mutants(wb, slugs, workers, as_json)
        return
    reports = run(wb, slugs, workers)
    if as_json:
        emit_json({"ok": all(r.ok for r in reports), "katas": [r.to_json() for r in reports]})
    else:
        con = out()
        for r in reports:
            runtime = f", hidden suite {r.hidden_runtime_s:.1f}s on the reference" if r.hidden_runtime_s else ""
            say(f"[bold]{r.slug}[/]: {'[green]OK[/]' if r.ok else '[red]FAILED[/]'} "
                f"({r.hidden_tests} hidden tests, {r.bugs} bugs{runtime})", markup=True)
            for c in r.checks:
                con.print(f"  {'[green]ok[/]  ' if c.ok else '[red]FAIL[/]'} {c.name:<14} ", end="")
                con.print(c.detail, markup=False)
    if not all(r.ok for r in reports):
        raise typer.Exit(1)


def _mutants(wb, slugs: list[str], workers: int, as_json: bool) -> None:
    from kata.mutants import run_mutants

    reports = []
    for slug in slugs:
        if not as_json:
            say(f"{slug}: mutation testing the reference (this takes a while)...", err=True)
        reports.append(run_mutants(wb.kata(slug), workers))
    if as_json:
        emit_json({"katas": [r.to_json() for r in reports]})
        return
    con = out()
    for r in reports:
        score = "n/a" if r.score is None else f"{r.score:.1%}"
        say(f"[bold]{r.slug}[/]: mutation score {score} ({r.count('killed')} killed of "
            f"{r.scored}; {r.count('survived')} survived, {r.count('no tests')} with no test, "
            f"{r.count('equivalent')} marked equivalent)", markup=True)
        for m in r.mutants:
            if m.status == "survived":
                con.rule(f"survived: {m.name}", align="left")
                con.print(m.diff, markup=False)
        for note in r.stale_marks:
            say(f"[yellow]stale mark in kata.toml:[/] {note}", markup=True)
    if any(r.count("survived") for r in reports):
        say("Mark a mutant that cannot be caught in kata.toml: "
            "[[equivalent_mutants]] name = \"...\" reason = \"...\"")


@full_only()
@handled
def new(
    slug: str = typer.Argument(..., help="The new kata's slug, e.g. token-budget."),
    title: str | None = typer.Option(None, "--title", help="Its title."),
    project: bool = typer.Option(False, "--project",
                                 help="A project question: four gated levels in the solution(queries) style."),
) -> None:
    """Scaffold a new kata (prompt, stub, visible tests, reference, hidden suite, a bug)."""
    from kata.scaffold import new_kata

    wb = workbook()
    instructor_only(wb, "new")
    files = new_kata(wb, slug, title, project=project)
    say(f"Created kata '{slug}' from a small worked example" + (" of a project question:" if project else ":"))
    for f in files:
        say(f"  {_rel(wb, f)}")
    say(f"Check it is valid as it stands: kata validate {slug}. Then make it yours; "
        "see AUTHORING.md.")


@full_only()
@handled
def bundle(
    student: Path = typer.Option(..., "--student", help="Folder to write the student bundle to (new or empty)."),
) -> None:
    """Write a student bundle: prompts, stubs and visible tests; no solutions, no hidden tests."""
    from kata.cohort import student_bundle

    wb = workbook()
    instructor_only(wb, "bundle")
    files = student_bundle(wb, student)
    say(f"Wrote a student bundle of {len(files)} files to {student}: prompts, stubs, visible "
        "tests and the CLI; no reference solutions and no hidden tests (checked file by file).")
    say(f"Students run: cd {student} && python3 -m venv .venv && .venv/bin/pip install -e . "
        "&& .venv/bin/kata start")


@full_only()
@handled
def regrade(
    session_id: int | None = typer.Argument(None, metavar="SESSION",
                                               help="The session to regrade (default: the last ended one)."),
    batch: Path | None = typer.Option(None, "--batch", metavar="GRADEBOOK",
                                         help="Regrade a grade-batch from its gradebook.json instead."),
    out_dir: Path = typer.Option(Path("gradebook-regraded"), "--out",
                                 help="With --batch: where to write the new gradebook."),
) -> None:
    """Grade recorded submissions again on today's hidden suites, keeping the old results beside
    the new (a session's, or with --batch a grade-batch's)."""
    from kata import session
    from kata.cohort import write_gradebook
    from kata.cohort import regrade_batch
    from kata.session import regrade_session

    wb = workbook()
    if batch is not None:
        if session_id is not None:
            fail("give a SESSION or --batch GRADEBOOK, not both")
        book = regrade_batch(wb, batch)
        json_path, _ = write_gradebook(book, out_dir)
        changed = [r for r in book["rows"] if r.get("previous") and
                   r["previous"]["points_earned"] != r["points_earned"]]
        say(f"Regraded {len(book['students'])} students on today's suites: {_rel(wb, json_path)}; "
                    f"{len(changed)} score(s) changed")
        for r in changed:
            say(f"  {r['student']} {r['kata']}: {r['previous']['points_earned']:g} -> "
                        f"{r['points_earned']:g}")
        _error_rows(book)
        return
    if session_id is None:
        last = session.open_store(wb).last_ended_session(session.now())
        if last is None:
            fail("no ended session to regrade: see `kata history`")
        session_id = last.id
    with grading_progress(False, "hidden suite") as progress:
        done = regrade_session(wb, session_id, progress)
    if not done:
        say(f"Session {session_id}: every submission was graded on today's suites already.")
        return
    say(f"Session {session_id}: {len(done)} submission(s) regraded on today's suites "
                "(the old results are kept):")
    for d in done:
        say(f"  {d.slug}: {d.before.points_earned:g} (suite {d.before.suite_version or 'unrecorded'}) -> "
                    f"{d.after.points_earned:g} (suite {d.after.suite_version})")


@full_only()
@handled
def runner(
    slug: str = typer.Argument(..., help="The kata.", autocompletion=complete_slug),
    input_dir: Path = typer.Argument(..., help="A folder holding the solution file (the kata's module)."),
    output_dir: Path = typer.Argument(..., help="Where to write results.json (made if missing)."),
) -> None:
    """Exercism's test-runner interface: grade INPUT_DIR's solution on the hidden suite and write
    OUTPUT_DIR/results.json (version 3); exits 0 whatever the tests say (refused while a live
    session contains the kata)."""
    import json
    import os

    from kata.catalog import CatalogError, Workbook
    from kata.cohort import open_folder_inside, read_inside, write_inside
    from kata.formats import exercism_results
    from kata.grading import grade

    from kata import session

    wb = Workbook.find(_state["workbook"])
    kata = wb.kata(slug)
    # a store only where one exists: a runner in a read-only container creates none
    live = session.live_session(wb) if (wb.kata_dir / "kata.db").is_file() else None
    if live is not None and slug in live.katas:  # its results name and quote every hidden test
        fail(f"session {live.id} containing '{slug}' is live: `kata finish` it first")
    if not input_dir.is_dir():
        fail(f"INPUT_DIR {input_dir}: not a folder: give the folder that holds {kata.module}")
    # INPUT_DIR is the harness's; what lies inside it is the submission's: no link in it is followed
    given, real = Path(os.path.abspath(input_dir)), input_dir.resolve()
    target = Path(os.path.abspath(output_dir))
    if ".." in output_dir.parts:
        fail(f"OUTPUT_DIR {output_dir}: has a '..' in it: give the folder's path without one")
    try:
        for base in (given, real):  # OUTPUT_DIR inside the submission: every folder on the way checked
            if target == base or base in target.parents:
                folder = open_folder_inside(real, list(target.relative_to(base).parts), create=True,
                                            advice="give a real folder as OUTPUT_DIR")
                break
        else:
            output_dir.mkdir(parents=True, exist_ok=True)
            folder = os.open(output_dir, os.O_RDONLY | os.O_DIRECTORY)
    except CatalogError as exc:
        fail(f"OUTPUT_DIR {output_dir}: {exc}")
    except OSError as exc:
        fail(f"OUTPUT_DIR {output_dir}: cannot write results.json ({exc.strerror})")
    try:
        code: str | None = read_inside(real, kata.module)
        reason = None
    except FileNotFoundError:
        code, reason = None, f"{kata.module} not found in the submission: name the solution file {kata.module}"
    except CatalogError as exc:
        code, reason = None, str(exc)
    except OSError as exc:
        code, reason = None, f"{kata.module}: cannot be read ({exc.strerror})"
    try:
        if code is not None:
            results = exercism_results(kata, grade(kata, input_dir / kata.module, "hidden", code=code))
        else:
            results = {"version": 3, "status": ERROR, "tests": [], "message": reason}
        try:  # a new file renamed over results.json: a link a submission planted there is replaced
            write_inside(folder, "results.json", json.dumps(results, indent=2) + "\n")
        except OSError as exc:
            fail(f"OUTPUT_DIR {output_dir}: cannot write results.json ({exc.strerror})")
    finally:
        os.close(folder)


def _error_rows(book: dict) -> None:
    """A gradebook's error rows, each with its one-line reason: a refused file (a link, a FIFO, a
    file moved or changed since the batch) or code that could not run."""
    from kata.output import say as write

    errors = [row for row in book["rows"] if row["status"] == ERROR]
    if errors:
        say(f"Errors (0 points): {len(errors)} row(s)")
        for row in errors:  # a wrapped reason continues under the row's text
            write(f"  {row['student']} {row['kata']}: {row['message']}", markup=False, indent=4)


@full_only("grade-batch")
@handled
def grade_batch(
    submissions: Path = typer.Argument(..., help="SUBMISSIONS/<student>/<module>.py for each student."),
    out_dir: Path = typer.Option(Path("gradebook"), "--out", help="Where to write gradebook.json and .csv."),
    workers: int | None = typer.Option(None, "--workers", min=1, help="Gradings at once (default: the number of cores)."),
    shard: str | None = typer.Option(None, "--shard", help="Grade only slice K of N, e.g. 2/4."),
    timeout: float = typer.Option(20.0, "--timeout", min=0.5, help="Seconds one hidden test may run."),
    junit_xml: Path | None = typer.Option(None, "--junit-xml", metavar="PATH",
                                             help="Also write JUnit XML (a suite per student and kata)."),
    junit_rich: bool = typer.Option(False, "--junit-rich",
                                    help="With --junit-xml: add file/line attributes and per-test properties."),
    require_sandbox: bool = typer.Option(False, "--require-sandbox",
                                         help="Refuse to start unless grading runs in the sandbox."),
    allow_unsandboxed: bool = typer.Option(
        False, "--allow-unsandboxed",
        help="Grade even where the sandbox cannot run (one student's code could then change a "
             "classmate's run; the gradebook says so)."),
    reference_in_process: bool = typer.Option(
        False, "--reference-in-process",
        help="Time each reference beside the student's code in the same process, as `kata "
             "submit` does, instead of once in its own child (student code could then read it)."),
) -> None:
    """Grade a cohort's submissions on the hidden suites, in parallel, into a gradebook.

    Every submission is read before the first student's code runs; the gradebook is rewritten as
    each student finishes, so Ctrl-C keeps every finished row. Refused where the sandbox cannot
    run, unless --allow-unsandboxed."""
    import os

    from rich.progress import Progress

    from kata import cgroups, sandbox
    from kata.cohort import batch_limits, discover, grade_batch as run, parse_shard, write_gradebook

    wb = workbook()
    instructor_only(wb, "grade-batch")
    if require_sandbox and not sandbox.available():
        fail(f"--require-sandbox: {sandbox.status_line()}")
    if not allow_unsandboxed and not sandbox.available():
        fail(f"{sandbox.status_line()}: in a batch, one student's code could then change a "
             "classmate's run: install bubblewrap, or pass --allow-unsandboxed to grade anyway "
             "(the gradebook says so)")
    k, n = parse_shard(shard)
    submissions = submissions.expanduser().resolve()  # relative to here, not to the workbook
    students = discover(wb, submissions)  # a mistake in the arguments is the one line printed
    say(sandbox.status_line().capitalize() + ".", markup=False, err=True)
    say(cgroups.status_line() + ".", markup=False, err=True)
    total = sum(1 for i, _ in enumerate(students) if i % n == k - 1) * len(wb.slugs())
    results: list = []  # (student, slug, SuiteResult), for --junit-xml
    try:
        with Progress(console=out(), transient=True) as progress:
            task = progress.add_task("grading", total=total)
            book = run(wb, submissions, workers or os.cpu_count() or 1, shard,
                       on_done=lambda row: progress.advance(task), out=out_dir,
                       limits=batch_limits(timeout), reference_apart=not reference_in_process,
                       on_result=lambda student, slug, result: results.append((student, slug, result)))
    except KeyboardInterrupt:
        fail(f"interrupted: every finished student's row is in {out_dir / 'gradebook.csv'}; "
             "run the command again to grade them all", code=130)
    json_path, csv_path = write_gradebook(book, out_dir)
    if junit_xml is not None:
        from kata.formats import write_junit

        results.sort(key=lambda item: (item[0], item[1]))
        write_junit([(wb.kata(slug), result) for _, slug, result in results], junit_xml,
                    names=[f"{student}/{slug}" for student, slug, _ in results], rich=junit_rich)
    _batch_summary(wb, book, json_path, csv_path)


def _batch_summary(wb, book: dict, json_path: Path, csv_path: Path) -> None:
    """What grade-batch prints once the gradebook is written: where, what it could not promise,
    who handed nothing in, the error rows, the hidden tests most students failed."""
    say(f"Graded {len(book['students'])} students x {len(book['katas'])} katas "
        f"(shard {book['shard']}): {_rel(wb, json_path)}, {_rel(wb, csv_path)}", markup=True)
    if not book["sandboxed"]:
        say("Not sandboxed: one student's code could have changed a classmate's run "
            "(gradebook.json says \"sandboxed\": false).", markup=False)
    if book["reference"] == "in-process":
        say("References timed in the students' processes: their code could read them "
            "(gradebook.json says \"reference\": \"in-process\").", markup=False)
    missing: dict[str, list[str]] = {}
    for row in book["rows"]:
        if row["status"] == "missing":
            missing.setdefault(row["student"], []).append(row["kata"])
    if missing:
        say(f"Missing (no file handed in, 0 points): {len(missing)} student(s)", markup=True)
        for student, slugs in sorted(missing.items()):
            say(f"  {student}: {', '.join(slugs)}", markup=False)
    _error_rows(book)
    if book["most_failed"]:
        say("Hidden tests most students failed:", markup=True)
        for item in book["most_failed"][:5]:
            say(f"  {item['students_failed']:>3}  {item['test']}", markup=False)


gradebook_app = KataTyper(help="Work with gradebooks written by grade-batch.", no_args_is_help=True)
if not IN_BUNDLE:
    app.add_typer(gradebook_app, name="gradebook")


@gradebook_app.command("merge")
@handled
def gradebook_merge(
    files: list[Path] = typer.Argument(..., help="gradebook.json files of the shards."),
    out_dir: Path = typer.Option(Path("gradebook"), "--out", help="Where to write the merged gradebook."),
) -> None:
    """Merge shard gradebooks into one."""
    import json

    from kata.catalog import CatalogError
    from kata.cohort import merge, write_gradebook

    books = []
    for f in files:
        try:
            books.append(json.loads(f.read_text()))
        except (OSError, ValueError) as exc:
            raise CatalogError(f"{f}: not a readable gradebook JSON ({exc})") from None
    book = merge(books)
    json_path, csv_path = write_gradebook(book, out_dir)
    say(f"Merged {len(files)} gradebooks ({len(book['students'])} students): {json_path}, {csv_path}")
    if book["mixed_suite_versions"]:
        say("note: these scores come from different versions of a hidden suite (suite_versions in "
            "the JSON): `kata regrade --batch` grades them all on today's")
