"""Rich renderings: score cards, tables, the countdown. All output goes through `console()`.

Imported only by commands that print something more than a line, so `kata --help` never pays for
rich. Output goes through kata.output (wrapping, the pager); set KATA_PLAIN=1 (tests do) for
output with no colour and a fixed width.
"""

from __future__ import annotations

import os
import re
from collections import Counter

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kata.grading import ERROR, FAIL, PASS, SuiteResult
from kata.results import first_line, timeout_line

STATUS_STYLE: dict[str, str] = {PASS: "green", FAIL: "red", ERROR: "yellow"}


def console() -> Console:
    """The command line's stdout console (kata.output owns it)."""
    from kata.output import console as out

    return out()


def reset_console() -> None:
    """Forget the cached consoles (tests switch output streams between invocations)."""
    from kata.output import reset

    reset()


def clock(seconds: float) -> str:
    """3725 -> '1:02:05'; 65 -> '1:05'; to the nearest second (125.98 and 126.0 are both '2:06',
    so one moment never shows as two)."""
    seconds = max(0, round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def elapsed(seconds: float) -> str:
    """A moment of a session, as time since its start, in a stopwatch's notation that no one
    reads as a time of day or takes minutes for hours: 42 -> '42s', 137 -> '2m17s',
    3725 -> '1h02m05s' (to the nearest second, as `clock`)."""
    s = max(0, round(seconds))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s" if m else f"{s}s"


def duration(seconds: float) -> str:
    """A length of time in words, never read as a time of day or as hours: 13 -> '13 s',
    60 -> '1 min', 90 -> '1 min 30 s', 5400 -> '1 h 30 min' (to the nearest second)."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    m, s = divmod(s, 60)
    if m < 60:
        return f"{m} min" + (f" {s} s" if s else "")
    h, m = divmod(m, 60)
    return f"{h} h" + (f" {m} min" if m else "") + (f" {s} s" if s else "")


def status_text(status: str) -> str:
    return f"[{STATUS_STYLE.get(status, 'white')}]{status.upper()}[/]"


def level_table(result: SuiteResult, title: str) -> Table:
    """Per level: tests passed / total and points, never the tests' inputs."""
    table = Table(title=title, title_justify="left", show_edge=False)
    table.add_column("level", justify="right")
    table.add_column("name")
    table.add_column("tests", justify="right")
    table.add_column("points", justify="right")
    for lv in result.levels:
        style = "green" if lv.passed == lv.total and lv.total else ("red" if lv.passed == 0 else "yellow")
        table.add_row(str(lv.level), escape(lv.name), f"[{style}]{lv.passed}/{lv.total}[/]",
                      f"{lv.points_earned:g}/{lv.points_possible}")
    table.add_row("", "[bold]total[/]", f"{result.passed}/{len(result.tests)}",
                  f"[bold]{result.points_earned:g}/{result.points_possible}[/]")
    return table


def test_lines(result: SuiteResult, reveal: bool, detail: bool = False) -> None:
    """One line per test, the ones that did not pass first (in suite order, then the passes), so
    what needs work is on the first screen. `reveal` adds each hidden test's edge and message."""
    for t in sorted(result.tests, key=lambda t: t.status == PASS):
        _test_line(t, edge=reveal, message=reveal or detail, detail_lines=None if detail else 0)


def _test_line(t, edge: bool, message: bool, detail_lines: int | None) -> None:
    """A test's status line; then, if it did not pass, its message and its failure report
    (detail_lines: None = all of it, 0 = none, n = its last n lines). The status line and the
    message wrap at spaces; the report is code and prints line for line."""
    from kata.output import report, say, verbatim

    level = f"L{t.task_id}" if t.task_id is not None else "  "
    line = f"  {status_text(t.status)} {level} {escape(t.name.split('::')[-1])}"
    if edge and t.edge:
        line += f" [dim]({escape(t.edge)})[/]"
    say(line, indent=6)
    if t.status == PASS:
        return
    said = message and t.message
    if said:
        shown = "\n".join(ln for ln in t.message.splitlines() if not _PYTEST_NOISE.match(ln))
        say(_indent(shown, 6), markup=False, style="dim" if detail_lines == 0 else None)
    if detail_lines != 0 and t.detail:
        lines = [ln for ln in t.detail.strip().splitlines() if not _PYTEST_NOISE.match(ln)]
        if said:
            lines = without_message(lines, t.message)
        if detail_lines is not None and len(lines) > detail_lines:
            lines = lines[-detail_lines:]
            verbatim("      ...")
        report(_indent("\n".join(lines), 6))


def without_message(lines: list[str], message: str) -> list[str]:
    """A report's lines less the `E` lines that repeat the message printed above them
    (`E   AssertionError: <message>`, one `E` line per line of the message)."""
    said = [ln.strip() for ln in message.strip().splitlines()]
    if not said:
        return lines
    for i, line in enumerate(lines):
        text = line.lstrip()
        if not text.startswith("E ") or not _repeats(text[1:].strip(), said[0]):
            continue
        rest = [ln.lstrip()[1:].strip() for ln in lines[i + 1:i + len(said)]]
        if rest == said[1:]:
            return lines[:i] + lines[i + len(said):]
    return lines


def _repeats(text: str, said: str) -> bool:
    """Whether an `E` line's text is the message's line: the same, or an exception's name and
    it; a message capped with " … " (pytest_plugin.capped) matches by its start and its end."""
    head, cut, tail = said.partition(" … ")
    for body in (text, re.sub(r"^[\w.]+: ", "", text, count=1)):
        if body == said or (cut and body.startswith(head) and body.endswith(tail)):
            return True
    return False


# pytest's advice to rerun it with -v: the learner runs kata, not pytest
_PYTEST_NOISE = re.compile(r"^\s*(E\s+)?\.*\s*Use -v to get (more|the full) diff\s*$")


SHARED_FAILURE = 3  # tests with one message: shown as one line in a summary


def failures(result: SuiteResult, mode: str, first: int, command: str, *, edge: bool,
             detail_lines: int | None) -> None:
    """The tests that did not pass: the first `first` of them (mode "summary") or all ("failed"),
    then how to see the rest. A failure every test shares (a syntax error, an import that raised,
    a stub's NotImplementedError) is shown once, with its report."""
    from kata.output import say

    failing = [t for t in result.tests if t.status != PASS]
    if len(failing) == len(result.tests) > 1 and len({first_line(t.message) for t in failing}) == 1:
        say(f"  every test fails the same way: {failing[0].message or ''}", markup=False)
        if detail_lines != 0 and failing[0].detail and failing[0].status == FAIL:
            # the code ran and failed: one traceback shows where (an error in setup, such as a
            # syntax error at import, has nothing to add to its message)
            _test_line(failing[0], edge=False, message=False, detail_lines=detail_lines)
        return
    # Failures many tests share (the NotImplementedError of a part not written yet) come after
    # the ones that say something of their own, and in the summary they take one line.
    counts = Counter(first_line(t.message) for t in failing)
    common = {m for m, n in counts.items() if m and n >= SHARED_FAILURE}
    own = [t for t in failing if first_line(t.message) not in common]
    if mode == "failed":
        shown = own + [t for t in failing if first_line(t.message) in common]
    else:
        shown = own[:first]
    for t in shown:
        _test_line(t, edge=edge, message=True,
                   detail_lines=detail_lines if mode == "summary" else (None if detail_lines != 0 else 0))
    if mode != "failed":
        for m in sorted(common, key=lambda m: -counts[m]):
            say(f"  {counts[m]} tests fail the same way: {m}", markup=False)
    if len(own) > len(shown):
        say(f"  {len(own) - len(shown)} more: `{command} --failed` shows them all, "
            "`--all` every test.", markup=False)
    elif common and mode != "failed":
        say(f"  `{command} --failed` shows each of them, `--all` every test.", markup=False)


def _indent(text: str, n: int) -> str:
    pad = " " * n
    return "\n".join(pad + line for line in text.splitlines())


def briefing(plan, bundle: bool = False) -> None:
    """What a session will be, before its clock starts: questions, minutes, rules."""
    from kata.output import say

    say(f"[bold]{escape(plan.title)}[/] ({duration(plan.minutes * 60)})")
    if plan.description:
        say(plan.description, markup=False)
    say("")
    for i, (q, kata) in enumerate(zip(plan.questions, plan.katas, strict=True), start=1):
        levels = ("all levels" if len(q.levels) == len(kata.levels) and len(q.levels) > 1
                  else "level " + ", ".join(map(str, q.levels)) if len(q.levels) == 1
                  else "levels " + ", ".join(map(str, q.levels)))
        how = ", one at a time" if q.reveal == "progressive" and len(q.levels) > 1 else ""
        from kata.kinds import kind_of

        kind = kind_of(q).task_words
        about = duration(q.minutes * 60)
        say(f"  Q{i}. {kata.title} ({kata.slug}): {kind}{levels}{how}, about {about}",
            markup=False, indent=6)
    say("")
    say("Rules:")
    rules = []
    if bundle:
        rules.append("`kata check SLUG` runs the visible examples; your instructor grades the "
                     "hidden tests.")
    else:
        rules.append("`kata submit SLUG` grades your file on the hidden tests, as often as you like.")
        rules.append("A submission counts if it starts before the deadline; your best one counts.")
    if any(q.reveal == "progressive" and len(q.levels) > 1 for q in plan.questions):
        rules.append("The next level opens when every hidden test of the current one passes.")
    budgets = getattr(plan, "budgets", ())
    if budgets:  # a project exam: the format of the real round as candidates report it today
        spans = ", ".join(f"L{i} {lo}-{hi}" for i, (lo, hi) in enumerate(budgets, start=1))
        rules.append("One project: each level extends the same code, and every submission re-runs "
                     "every open level's tests, so a change that breaks an earlier level costs "
                     "you its points.")
        rules.append(f"Reported minutes per level: {spans}. That is more than the clock on "
                     "purpose: most candidates do not finish. Bank each level before the next.")
        rules.append("Your score is shown in points and on a 200-600 scale (200 for nothing, 600 "
                     "for every hidden test of every level): a scale like the real round's, not "
                     "its formula, which is not public.")
    rules.append("It ends at the deadline or with `kata finish`; then `kata review` shows every "
                 "hidden test you missed.")
    for rule in rules:
        say("  - " + rule, markup=False, indent=4)


def levels_label(levels: list[int], open_: list[int]) -> str:
    """[1] -> 'L1'; all of [1, 2, 3] open -> 'L1-3'; [1, 2] of [1..4] open -> 'L1-2 of 4'."""
    if len(levels) == 1:
        return f"L{levels[0]}"
    span = f"L{open_[0]}-{open_[-1]}" if len(open_) > 1 else f"L{open_[0]}"
    return span if list(open_) == list(levels) else f"{span} of {len(levels)}"


FIRST_FAILURES = 2  # failures shown in full by default
DETAIL_LINES = 25  # lines of one failure's report shown by default


def check_report(result: SuiteResult, mode: str = "summary") -> None:
    """`kata check` output that fits a screen: one line per level, then the first failures in full
    (their last DETAIL_LINES lines); mode "failed": every failure in full; "all": every test."""
    if mode == "all":
        test_lines(result, reveal=True, detail=True)
        return
    for lv in sorted({t.task_id for t in result.tests if t.task_id is not None}):
        mine = [t for t in result.tests if t.task_id == lv]
        ok = sum(t.status == PASS for t in mine)
        style = "green" if ok == len(mine) else ("red" if ok == 0 else "yellow")
        console().print(f"  level {lv}: [{style}]{ok}/{len(mine)}[/] pass")
    timeouts(result)
    failures(result, mode, FIRST_FAILURES, "kata check", edge=False, detail_lines=DETAIL_LINES)


def timeouts(result: SuiteResult) -> None:
    """The line that says how many tests timed out ('12 tests timed out: an infinite loop?'), if
    any did: check, submit, watch and review all say it."""
    from kata.output import say

    line = timeout_line(result)
    if line:
        say(f"  {line}", markup=False)


def plain_text_wanted() -> bool:
    """No colour to show styles with (NO_COLOR, not a terminal, KATA_PLAIN): print text as written."""
    c = console()
    return bool(os.environ.get("NO_COLOR") or os.environ.get("KATA_PLAIN")) or not c.is_terminal


def _literal_inline_code(prose: str) -> str:
    """`x_y` -> \\`x\\_y\\`: markdown that renders as the literal text `x_y`, backticks included."""
    import re

    def escape_span(m):
        return "".join("\\" + ch if (ch.isascii() and not ch.isalnum() and not ch.isspace()) else ch
                       for ch in m.group(0))

    return re.sub(r"`[^`]+`", escape_span, prose)  # a span may run over a line break


def print_markdown(text: str) -> None:
    """A prompt on the terminal: prose rendered and reflowed to the screen, each code block printed
    verbatim, highlighted by the language its fence names (none: as plain text), neither re-wrapped
    nor cropped (a line wider than the screen is left whole for the terminal to wrap). The blocks
    are markdown's own tokens (kata.prompt.blocks). Without colour, inline code keeps its backticks."""
    from rich.markdown import Markdown

    from kata.output import verbatim
    from kata.prompt import blocks

    out = console()
    plain = plain_text_wanted()
    for n, block in enumerate(blocks(text)):
        if n:  # rendered prose keeps no blank line at its ends: one between any two blocks
            out.print()
        if block.kind == "code":
            code = block.text.rstrip("\n")
            if plain:
                verbatim(code)
            else:
                out.print(highlighted(code, block.lang), soft_wrap=True)
        else:
            out.print(Markdown(_literal_inline_code(block.text) if plain else block.text,
                               inline_code_theme="monokai"))


def highlighted(code: str, lang: str):
    """`code` as rich Text coloured by `lang`'s lexer ("" or unknown: no colour)."""
    from rich.syntax import Syntax
    from rich.text import Text

    if not lang:
        return Text(code)
    try:
        from pygments.lexers import get_lexer_by_name

        get_lexer_by_name(lang)
    except Exception:  # noqa: BLE001 - a language pygments does not know: plain text
        return Text(code)
    return Syntax(code, lang, theme="monokai").highlight(code)


def source(code: str):
    """A whole source file: every line shown (wrapped, never cropped), numbered."""
    from rich.syntax import Syntax
    from rich.text import Text

    if plain_text_wanted():
        width = len(str(len(code.splitlines())))
        return Text("\n".join(f"{i:>{width}}  {line}" for i, line in enumerate(code.splitlines(), 1)))
    return Syntax(code, "python", line_numbers=True, word_wrap=True)


REVIEW_FIRST = 10  # missed tests listed per question by default


def review_lines(result: SuiteResult, mode: str = "summary", question=None) -> None:
    """`kata review`: the tests missed, each with its edge case and message (summary: the first
    REVIEW_FIRST; failed: all; all: every test). With the `question` (a session.QuestionReview),
    its levels the counted submission did not grade (not open yet, or never opened) are named
    with their points: "every hidden test passed" only when it is true of the whole question."""
    from kata.output import say

    timeouts(result)
    left = levels_left(result, question) if question is not None else []
    if mode == "all":
        test_lines(result, reveal=True)
    elif all(t.status == PASS for t in result.tests):
        graded = sorted({t.task_id for t in result.tests if t.task_id is not None})
        passed = f"every hidden test of {level_span(graded)} passed" if left and graded else \
            "every hidden test passed"
        say("  " + "; ".join([passed, *left]), markup=False, indent=2)
        return
    else:
        failures(result, mode, REVIEW_FIRST, "kata review", edge=True, detail_lines=0)
    if left:
        say("  " + "; ".join(left), markup=False, indent=2)


def level_span(levels: list[int]) -> str:
    """[3] -> 'level 3'; [3, 4] -> 'levels 3-4'; [1, 3, 4] -> 'levels 1, 3-4'."""
    runs: list[list[int]] = []
    for lv in sorted(levels):
        if runs and lv == runs[-1][-1] + 1:
            runs[-1].append(lv)
        else:
            runs.append([lv])
    spans = [str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs]
    return ("level " if len(levels) == 1 else "levels ") + ", ".join(spans)


def levels_left(result: SuiteResult, question) -> list[str]:
    """The question's levels the counted submission did not grade, with their points: those open
    but not in it, then those never opened ('levels 3-4 never opened: 50 points left')."""
    graded = {t.task_id for t in result.tests}
    if not graded or None in graded:  # no test, or one of no level: nothing to say by level
        return []
    points = question.level_points
    missing = [lv for lv in question.levels if lv not in graded]
    phrases = []
    for levels, why in (([lv for lv in missing if lv in question.levels_open], "not in the counted submission"),
                        ([lv for lv in missing if lv not in question.levels_open], "never opened")):
        if levels:
            worth = sum(points.get(lv, 0.0) for lv in levels)
            phrases.append(f"{level_span(levels)} {why}: {worth:g} points left")
    return phrases


SPARKS = "▁▂▃▄▅▆▇█"  # a session's score, from 0 points (never blank) to full marks


def progress_lines(rows) -> None:
    """Per kata: a bar of the best score, a sparkline of the sessions' scores labelled with how
    many sessions it marks ("marks of 3 sessions: 259", one mark per session, oldest first; a
    legend below says how to read a mark), the fastest levels."""
    from kata.output import NBSP, say

    width = max((len(r.kata.slug) for r in rows), default=10)
    plain = plain_text_wanted()
    if rows:
        say("Best score per kata on its hidden suite:", markup=False)
    for r in rows:
        possible = r.kata.points or 1
        filled = round(20 * r.best / possible)
        bar = ("#" if plain else "█") * filled + ("." if plain else "░") * (20 - filled)
        line = f"{r.kata.slug:<{width}}  {bar} {r.best:g}/{possible}"
        graded = getattr(r, "best_graded", 0)
        if 0 < graded < possible:  # an exam question grades some levels: say so, as status does
            line += f" (of {graded:g} graded)"
        if r.per_session:
            spark = "".join(SPARKS[min(7, round(7 * pts / possible))] if not plain else
                            str(min(9, int(10 * pts / possible))) for _, pts in r.per_session)
            count = len(r.per_session)  # the marks are scores, so the label gives the count
            label = f"marks of {count} session{'s' if count != 1 else ''}:"
            line += "  " + label.replace(" ", NBSP) + NBSP + spark  # the label and marks on one line
        say(line, markup=False, indent=width + 2)
        if r.fastest:
            say(" " * (width + 2) + "fastest: " + ", ".join(f"L{lv} {elapsed(t)}"
                                                         for lv, t in r.fastest.items()),
                markup=False)
        if getattr(r, "beside", None):  # sessions a kind scores otherwise (a hunt's pin and fix)
            from kata.kinds import kind_named

            for name in dict.fromkeys(b["kind"] for b in r.beside):
                kind = kind_named(name)
                say(" " * (width + 2) + f"{name}s: " + ", ".join(
                    f"S{b['session']} {kind.words(b['note'])} {b['points_earned']:g}/{b['points_possible']:g}"
                    for b in r.beside if b["kind"] == name), markup=False, indent=width + 2)
        if getattr(r, "other_suite", None):
            say(" " * (width + 2) + "graded on an older hidden suite in session(s) "
                + ", ".join(map(str, r.other_suite)) + ": `kata regrade N` to compare",
                markup=False, indent=width + 2)
    if any(r.per_session for r in rows):
        scale = "0 = under 10%, 9 = 90% or more" if plain else f"{SPARKS[0]} = 0 points, {SPARKS[-1]} = full marks"
        say(f"marks: one per session, oldest first ({scale})", markup=False)
    if not any(r.per_session or r.best or getattr(r, "beside", None) for r in rows):
        say("Nothing yet: `kata start` a session, or `kata submit SLUG` to practise.", markup=False)


def assessment_lines(series) -> None:
    """The mock assessments side by side, one table per series: a column per exam with its best
    session score and how many sessions took it. `series` is session.assessment_progress()."""
    if not series:
        return
    out = console()
    out.print("\nMock assessments, best score per exam:", markup=False, highlight=False)
    for row in series:
        table = Table(show_edge=False)
        table.add_column("", no_wrap=True)
        for b in row:
            table.add_column(b.exam.name, no_wrap=True)
        table.add_row("best", *(f"{b.best:g}/{b.points_possible:g} ({100 * b.best / (b.points_possible or 1):.0f}%)"
                                if b.best is not None else f"-/{b.points_possible:g}" for b in row))
        table.add_row("sessions", *(str(b.sessions) for b in row))
        out.print(table)


def deadline_warning(remaining: float) -> str:
    """The warning for the last 10, 5 and 1 minute(s); '' before that."""
    for limit, text in ((60, "under 1 minute left: submit what you have"),
                        (300, "under 5 minutes left"), (600, "under 10 minutes left")):
        if remaining <= limit:
            return text
    return ""
