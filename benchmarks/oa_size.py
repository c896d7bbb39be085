"""How big is each question of an exam? Prints, per question: the prose words of the prompt as
shown (intro, common rules and the question's levels; code blocks and <details> background not
counted), and the lines of the reference solution that the question's hidden tests execute inside
functions, plus each such function's `def` line (distinct lines, so blank lines, comments and
docstrings never count, nor the given dataclasses and module-level code, nor code that only later
levels need).

    python benchmarks/oa_size.py                 # every online assessment (llm-infra-oa*)
    python benchmarks/oa_size.py llm-infra-oa-2  # one exam, or several, by name
    python benchmarks/oa_size.py llm-infra-full

Goals for an online-assessment question (docs/KATA_STANDARD.md): at most ~1,000 prose words and ~120 lines of
reference code; at most 4,000 prose words for the exam.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def executed_lines(kata, levels) -> int:
    """Distinct lines of the reference run by the hidden tests of `levels` (in this process)."""
    import pytest

    target = str(kata.solution.resolve())
    seen: set[int] = set()

    import inspect

    def tracer(frame, event, arg):
        code = frame.f_code
        if code.co_filename != target or not code.co_flags & inspect.CO_OPTIMIZED:
            return None  # other files, and module or class bodies (run at import, for every level)

        def local(frame, event, arg):
            if event == "line":
                seen.add(frame.f_lineno)
            return local

        seen.add(code.co_firstlineno)  # the def line (a decorator's line, if decorated)
        return local

    args = [str(kata.grader), "-q", "-p", "no:cacheprovider", "-m", "not complexity",
            "--kata-levels", ",".join(map(str, levels)), "--kata-impl", target]
    sys.settrace(tracer)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            code = pytest.main(args)
    finally:
        sys.settrace(None)
    if code not in (0, 5):
        raise SystemExit(f"{kata.slug}: the reference failed its hidden tests (pytest exit {code})")
    return len(seen)


OA_PREFIX = "llm-infra-oa"  # every exam whose name starts with this is an online assessment


def report(wb, name: str) -> None:
    """Print one exam's table: per question its levels, minutes, prose words and reference lines."""
    from kata.prompt import Prompt, prose_words

    exam = wb.exam(name)
    print(f"{exam.name}: {len(exam.questions)} questions, {exam.minutes} minutes")
    print(f"{'question':<26} {'levels':<8} {'min':>4} {'prose words':>11} {'reference lines':>15}")
    total_words = 0
    for q in exam.questions:
        kata = wb.kata(q.kata)
        shown = Prompt.parse(kata.prompt.read_text(encoding="utf-8")).render(q.levels)
        words = prose_words(shown)
        total_words += words
        lines = executed_lines(kata, q.levels)
        print(f"{q.kata:<26} {','.join(map(str, q.levels)):<8} {q.minutes:>4g} {words:>11} {lines:>15}")
    print(f"{'total':<26} {'':<8} {sum(q.minutes for q in exam.questions):>4g} {total_words:>11}")


def main(argv: list[str]) -> int:
    from kata.catalog import Workbook

    wb = Workbook.find(ROOT)
    names = argv or [e.name for e in wb.exams() if e.name.startswith(OA_PREFIX)]
    for i, name in enumerate(names):
        if i:
            print()
        report(wb, name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
