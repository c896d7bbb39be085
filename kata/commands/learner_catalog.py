"""The learner's commands for the workbook and the catalog: `kata init`, `kata list`, `kata show`.

Bodies parse and present; the work is in kata.init, kata.catalog and kata.session.
"""

from __future__ import annotations

from pathlib import Path

import typer

from kata.commands.base import app, clock_line, complete_slug, emit_json, fail, handled, out, say, workbook


# --- a workbook of your own --------------------------------------------------


@app.command()
@handled
def init(
    directory: Path = typer.Argument(..., help="A new (or empty) folder for the workbook."),
    instructor: bool = typer.Option(False, "--instructor",
                                    help="The whole catalog (katas, hidden suites, references), to author and grade."),
    upgrade: bool = typer.Option(False, "--upgrade",
                                 help="Move DIRECTORY, made by an earlier kata init, to the learner's layout; sessions stay."),
) -> None:
    """Make a workbook folder to practise in: your code and sessions; the katas, their hidden
    suites and references stay in the installed kata."""
    from kata.init import init_workbook, upgrade_workbook

    if instructor and upgrade:
        fail("give --instructor or --upgrade, not both")
    if upgrade:
        folder, moved = upgrade_workbook(directory)
        say(f"Moved {folder} to the learner's layout: your workspace/ and sessions stay; the "
            f"catalog it held went to {_rel_to(folder, moved)}.")
        return
    target = init_workbook(directory, instructor=instructor)
    kind = "an instructor's workbook" if instructor else "a workbook"
    say(f"Made {kind} in {target}.")
    say(f"Next: cd {directory} && kata start")


def _rel_to(base: Path, path: Path) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)


# --- browsing ---------------------------------------------------------------


@app.command("list")
@handled
def list_(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List the katas and exams, with your best score so far."""
    from kata.session import best_scores, series_name

    wb = workbook()
    katas, exams = wb.katas(), wb.exams()
    best = best_scores(wb)
    if as_json:
        emit_json({
            "katas": [{"slug": k.slug, "title": k.title, "difficulty": k.difficulty,
                       "minutes": k.minutes, "levels": len(k.levels), "points": k.points,
                       "tags": list(k.tags), "best": best.get(k.slug, (None,))[0]} for k in katas],
            "exams": [{"name": e.name, "title": e.title, "minutes": e.minutes,
                       "katas": list(e.katas), "series": series_name(e.name)} for e in exams],
        })
        return
    from kata.output import paged

    with paged():  # a row per kata and per exam: taller than a screen
        _print_catalog(wb, katas, exams, best)


def _print_catalog(wb, katas, exams, best) -> None:
    """`kata list`'s tables: the katas, then the exams (a series together), the default marked."""
    from rich.table import Table

    from kata.session import exam_series

    # on a narrow screen (80 columns) short headers leave the titles room, and the exams' titles
    # (which `kata start` shows) give theirs to the questions, so a row wraps less
    narrow = out().width < 100
    table = Table(title="Katas", title_justify="left", show_edge=False)
    # slugs are typed back: never cut or wrapped (the titles wrap instead)
    table.add_column("slug", no_wrap=True, min_width=max((len(k.slug) for k in katas), default=4))
    table.add_column("title", ratio=1)
    for col in (("diff.", "min", "lv", "best") if narrow else ("difficulty", "min", "levels", "best")):
        table.add_column(col, no_wrap=True)
    for k in katas:
        b = best.get(k.slug)
        table.add_row(k.slug, k.title, k.difficulty, str(k.minutes), str(len(k.levels)),
                      f"{b[0]:g}/{k.points}" if b else "-")
    out().print(table)
    table = Table(title="Exams", title_justify="left", show_edge=False)
    table.add_column("name", no_wrap=True, min_width=max((len(e.name) + 2 for e in exams), default=4))
    if not narrow:
        table.add_column("title", ratio=1)
    table.add_column("min", no_wrap=True)
    table.add_column("questions", ratio=2)
    from kata.catalog import DEFAULT_EXAM

    for members in exam_series(exams):  # a series (llm-infra-oa, -2, -3) stays together
        if len(members) > 1 and table.row_count:
            table.add_section()
        for e in members:
            questions = ", ".join(f"{q.kata} L{q.levels[0]}" + (f"-{q.levels[-1]}" if len(q.levels) > 1 else "")
                                  for q in e.questions)
            name = e.name + (" *" if e.name == DEFAULT_EXAM else "")
            table.add_row(*((name, str(e.minutes), questions) if narrow
                            else (name, e.title, str(e.minutes), questions)))
        if len(members) > 1:
            table.add_section()
    out().print(table)
    if DEFAULT_EXAM in wb.exam_names():
        say(f"* the default: `kata start` with no name starts {DEFAULT_EXAM}.", markup=False)


@app.command()
@handled
def show(
    slug: str | None = typer.Argument(None, help="The kata (default: the live session's only one).",
                                         autocompletion=complete_slug),
    as_json: bool = typer.Option(False, "--json", help="Print JSON: kata, levels shown, markdown."),
) -> None:
    """Show a kata's prompt: in a session, the levels open so far; outside one, all of it."""
    from kata import session

    wb = workbook()
    kata = session.pick_katas(wb, slug, all_=False)[0]
    v, markdown = session.prompt_markdown(wb, kata)
    if as_json:
        emit_json({"kata": kata.slug, "levels": v.levels, "markdown": markdown})
        return
    from kata.output import paged
    from kata.views import print_markdown

    with paged():
        clock_line(wb, kata.slug)
        print_markdown(markdown)
