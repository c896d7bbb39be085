"""A hunt: review code an assistant wrote, pin its bug with a test, then fix it.

A hunt question hands the learner a plausible solution of a kata's first levels with one defect in
it: a bug-zoo patch (tests/bugs/<slug>/<name>.patch) applied to the reference, cut down to the
levels the question covers (every definition of a later level is replaced by the stub's, and
private helpers nothing uses any more are dropped), so the whole reference is never handed out.
Sometimes (a decoy) the code handed out is the correct one.

The learner does two things, each graded on `kata submit`:

* **pin it**: `workspace/test_hunt_<module>.py` holds pytest tests that take the `impl` fixture.
  A pin counts when its tests fail on the handed-out code, pass on the reference, and pass on a
  few other zoo bugs of the kata that break a different rule (a hidden test fails on them that
  does not fail on the planted bug, and none that does); so a generic comparison with a copy of the
  correct code earns nothing. Every one of those implementations is first rewritten by
  kata.rewrite (fresh names, order and formatting on every run) and compiled, so the tests see
  behaviour, never text. For a decoy, the right answer is a file that says so:
  `HUNT_VERDICT = "correct"` at module level (a test in it must then pass on the code).
* **fix it**: the workspace file is graded on the hidden suite of the question's levels, as
  for any kata question.

The pin is worth as many points as the fix. A pin first made after the fix already passed
every hidden test earns half: spotting the bug before fixing it is the skill practised.

Example:
    text = handout(kata, "bool_capacity", 1)   -> the reference's level 1, with the bug in it
    judge(kata, "bool_capacity", 1, test_code).verdict   -> 'pinned' | 'not_caught' | ...
"""

from __future__ import annotations

import ast
import py_compile
import random
import re
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kata.catalog import CatalogError, Kata
from kata.results import ran_out_of_time
from kata.rewrite import parse
from kata.zoo import PatchError, ZooPatch, entries

CORRECT_CLAIM = "HUNT_VERDICT"  # `HUNT_VERDICT = "correct"` in the test file: "this code is correct"
VARIANTS = 3  # other zoo bugs a pin must pass on
_LEVEL_MARK = re.compile(r"^\s*# --- levels? (\d+)")


def test_file_name(kata: Kata) -> str:
    return f"test_hunt_{kata.module}"


# --- cutting the code to the question's levels -------------------------------------------------


_Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _defs(tree: ast.Module) -> dict[str, _Def]:
    """'name' or 'Class.name' -> its definition (top-level and one level into classes)."""
    found: dict[str, _Def] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[node.name] = node
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        found[f"{node.name}.{item.name}"] = item
    return found


def _span(node) -> tuple[int, int]:
    """Lines (0-based start, end exclusive) of a definition, decorators included."""
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return first - 1, node.end_lineno


def def_levels(stub: str) -> dict[str, int]:
    """The level of each definition of the stub, from its `# --- level N` section comments
    (`# --- levels 3 and 4` counts as 3; definitions above the first mark are level 0)."""
    marks = [(i, int(m.group(1))) for i, line in enumerate(stub.splitlines(), start=1)
             if (m := _LEVEL_MARK.match(line))]
    levels = {}
    for name, node in _defs(parse(stub)).items():
        before = [lv for line, lv in marks if line < node.lineno]
        levels[name] = before[-1] if before else 0
    return levels


def cut(code: str, stub: str, max_level: int) -> str:
    """`code` with every definition of a level above `max_level` replaced by the stub's, and the
    private helpers nothing refers to any more removed.

    Example: cut(reference, stub, 1) keeps put/get/... and stubs pin, get_block, get_or_put."""
    levels = def_levels(stub)
    stub_lines = stub.splitlines()
    stub_defs = _defs(parse(stub))
    lines = code.splitlines()
    spans = []
    for name, node in _defs(parse(code)).items():
        if levels.get(name, 0) > max_level and name in stub_defs and not (
                "." not in name and isinstance(node, ast.ClassDef) and _has_kept_method(name, levels, max_level)):
            a, b = _span(stub_defs[name])
            spans.append((_span(node), stub_lines[a:b]))
    for (a, b), new in sorted(_outermost(spans), key=lambda s: s[0][0], reverse=True):
        lines[a:b] = new
    return _drop_unused_privates("\n".join(lines) + "\n")


def _has_kept_method(cls: str, levels: dict[str, int], max_level: int) -> bool:
    return any(n.startswith(cls + ".") and lv <= max_level for n, lv in levels.items())


def _outermost(spans):
    """Drop spans nested in another (a method inside a class replaced whole)."""
    return [s for s in spans if not any(o is not s and o[0][0] <= s[0][0] and s[0][1] <= o[0][1]
                                        for o in spans)]


def _drop_unused_privates(code: str) -> str:
    """Remove private definitions (module-level or methods) that nothing refers to, repeatedly."""
    while True:
        tree = parse(code)
        used: dict[str, int] = {}
        for node in ast.walk(tree):
            name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
            if name is not None:
                used[name] = used.get(name, 0) + 1
        dead = []
        for qual, node in _defs(tree).items():
            name = qual.rsplit(".", 1)[-1]
            if name.startswith("_") and not name.startswith("__") and not used.get(name):
                dead.append(_span(node))
        if not dead:
            return code
        lines = code.splitlines()
        for a, _b in sorted(_outermost([(s, None) for s in dead]), key=lambda s: s[0][0], reverse=True):
            del lines[a[0]:a[1]]
        code = "\n".join(lines) + "\n"


# --- the zoo, as hunts ------------------------------------------------------------------------


@dataclass(frozen=True)
class Bug:
    name: str
    level: int
    header: dict[str, str]  # Bug, Level, Breaks
    text: str  # the wrong solution, whole


def bugs(kata: Kata, max_level: int) -> list[Bug]:
    """The zoo patches a hunt of levels 1..max_level can hand out: their level is covered and the
    cut code still differs from the cut reference."""
    if not kata.solution.is_file():
        raise CatalogError(f"{kata.slug}: no reference solution in this workbook (a student bundle?): "
                           "hunts are drawn from it, so run them in the full workbook")
    reference = kata.solution.read_text(encoding="utf-8")
    stub = kata.stub.read_text(encoding="utf-8")
    correct = cut(reference, stub, max_level)
    found = []
    for path in entries(kata.bugs):
        try:
            patch = ZooPatch.parse(path)
            level = int(patch.header.get("Level", ""))
            text = patch.apply(reference)
        except (PatchError, ValueError):
            continue
        if level <= max_level and cut(text, stub, max_level) != correct:
            found.append(Bug(patch.name, level, patch.header, text))
    return found


def bug(kata: Kata, name: str, max_level: int | None = None) -> Bug:
    every = bugs(kata, max_level or len(kata.levels))
    for b in every:
        if b.name == name:
            return b
    names = [p.stem for p in entries(kata.bugs)]
    if name in names:
        raise CatalogError(f"--bug {name}: that bug is not in the code of levels 1..{max_level}; "
                           f"give --level with its own level")
    from kata.catalog import did_you_mean

    near = did_you_mean(name, names)
    raise CatalogError(f"--bug {name}: no such zoo patch in tests/bugs/{kata.slug}/."
                       + (near or f" Its bugs: {', '.join(sorted(names))}."))


def handout(kata: Kata, bug_name: str | None, max_level: int) -> str:
    """The code handed out: the cut reference, with the bug in it (None: a decoy, the correct code)."""
    text = kata.solution.read_text(encoding="utf-8") if bug_name is None else bug(kata, bug_name, max_level).text
    return _retitle(cut(text, kata.stub.read_text(encoding="utf-8"), max_level), kata, max_level)


def _retitle(code: str, kata: Kata, max_level: int) -> str:
    """Put a neutral module docstring in place of the reference's (which says what it is)."""
    levels = "level 1" if max_level == 1 else f"levels 1-{max_level}"
    doc = (f'"""{kata.title}, {levels}: a solution an assistant wrote. Review it before you trust it.\n\n'
           f'The prompt is `kata show {kata.slug}`. Pin a bug in workspace/{test_file_name(kata)}, '
           'then fix it here.\n"""')
    tree = parse(code)
    lines = code.splitlines()
    first = tree.body[0] if tree.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        lines[first.lineno - 1:first.end_lineno] = doc.splitlines()
    else:
        lines[:0] = doc.splitlines()
    return "\n".join(lines) + "\n"


def draw(kata: Kata, max_level: int, rng: random.Random, decoy_probability: float = 0.0) -> str | None:
    """A bug for a hunt of levels 1..max_level (None: a decoy). CatalogError when none can be drawn."""
    found = bugs(kata, max_level)
    if not found:
        raise CatalogError(f"{kata.slug}: no zoo bug of level <= {max_level} changes its code: "
                           "no hunt can be drawn (add one to tests/bugs/)")
    if rng.random() < decoy_probability:
        return None
    return rng.choice(sorted(b.name for b in found))


# --- the learner's files ----------------------------------------------------------------------

TEMPLATE = '''"""Pin the bug: tests that fail on the code in workspace/{module} as handed out to you.

Each test takes the `impl` fixture (the module under test, as in the hidden suite) and states
the rule the code breaks, for instance:

    def test_rejects_a_bool(impl):
        with pytest.raises(ValueError):
            impl.SomeClass(True)

Your tests are run against the handed-out code (they must fail), the correct code (they must pass)
and code with other bugs (they must pass: pin this bug's rule, not any difference). If you find
no bug, write instead, at module level:

    HUNT_VERDICT = "correct"
"""

import pytest
'''


def template(kata: Kata) -> str:
    return TEMPLATE.format(module=kata.module)


def claims_correct(test_code: str) -> bool:
    """Whether the file says `HUNT_VERDICT = "correct"` at module level (read, not run)."""
    try:
        tree = parse(test_code)
    except SyntaxError:
        return False
    return any(isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == CORRECT_CLAIM
                                                for t in n.targets)
               and isinstance(n.value, ast.Constant) and n.value.value == "correct" for n in tree.body)


# --- judging a pin ----------------------------------------------------------------------------


# what a learner reads for each verdict (JSON keeps the codes)
VERDICT_WORDS = {
    "pinned": "pinned", "correct_claim": "rightly called correct",
    "wrong_claim": "wrong claim", "not_caught": "bug not caught",
    "not_specific": "not specific to the bug", "no_test": "no test", "error": "error",
    "timed_out": "timed out", "missed": "missed",
}


def verdict_words(verdict: str | None) -> str:
    """`verdict` in words: "not_caught" -> "bug not caught"; None -> "not submitted"."""
    return "not submitted" if not verdict else VERDICT_WORDS.get(verdict, verdict.replace("_", " "))


@dataclass
class Pin:
    verdict: str  # pinned | correct_claim | not_caught | wrong_claim | not_specific | no_test | error | timed_out | missed
    reason: str  # one line

    @property
    def earned(self) -> bool:
        return self.verdict in ("pinned", "correct_claim")


def pin_limits():
    from kata.grading import Limits

    return Limits(test_timeout=2.0, hard_test_grace=2.0, wall_timeout=40.0, import_timeout=10.0,
                  strike_timeout=1.0)


def variants(kata: Kata, bug_name: str, max_level: int) -> list[Bug]:
    """Up to VARIANTS other zoo bugs, breaking other rules, that a pin must pass on (the same
    ones every time for the same bug)."""
    planted = bug(kata, bug_name, max_level)
    breaks = planted.header.get("Breaks")
    others = [b for b in bugs(kata, max_level) if b.name != bug_name and
              not (breaks and b.header.get("Breaks") == breaks)]
    rng = random.Random(f"{kata.slug}:{bug_name}:variants")
    return rng.sample(others, min(VARIANTS, len(others)))


def judge(kata: Kata, bug_name: str | None, max_level: int, test_code: str) -> Pin:
    """The pin's verdict (see the module docstring), with a one-line reason."""
    try:
        parse(test_code)
    except SyntaxError as exc:
        return Pin("error", f"your test file does not parse (line {exc.lineno}: {exc.msg}): fix it")
    if claims_correct(test_code) and bug_name is not None:
        return Pin("missed", "your file says the code is correct, but it has a bug")
    # the variants that break other rules run in the same child as the handed-out and the correct
    # code, shuffled among them: a pin cannot tell the specificity check from the rest by what
    # shares its process (how many implementations, which come first)
    others = variants(kata, bug_name, max_level) if bug_name is not None and not claims_correct(test_code) else []
    stub = kata.stub.read_text(encoding="utf-8") if others else ""
    runs = _run_pin(kata, test_code, [handout(kata, bug_name, max_level), handout(kata, None, max_level),
                                      *[cut(v.text, stub, max_level) for v in others]])
    if isinstance(runs, Pin):
        if runs.verdict == "no_test" and claims_correct(test_code):
            return Pin("correct_claim", "the code was correct, and your file says so")
        return runs
    on_planted, on_correct, *on_variants = runs
    if claims_correct(test_code):
        if on_planted is not None:
            return Pin("wrong_claim", f"your file says the code is correct, but {on_planted}")
        return Pin("correct_claim", "the code was correct, and your file says so")
    if on_correct is not None:
        return Pin("wrong_claim", f"your test fails on correct code too: {on_correct}")
    if bug_name is None:
        return Pin("wrong_claim", "the code was correct, so a test that claims a bug is a wrong claim "
                   "(a file that finds no bug says HUNT_VERDICT = \"correct\")")
    if on_planted is None:
        return Pin("not_caught", "every test passes on the handed-out code: it does not pin the bug")
    return _specific(kata, bug_name, max_level, others, on_variants) or \
        Pin("pinned", f"fails on the handed-out code ({on_planted}) and passes on correct code")


def _specific(kata: Kata, bug_name: str, max_level: int, others: list, runs: list[str | None]) -> Pin | None:
    """None when the test passed on every variant that breaks another rule (`others`, whose runs
    are `runs`), else the verdict."""
    planted_fails: list[set[str]] = []  # the planted bug's failing hidden tests, once needed
    for variant, failed in zip(others, runs, strict=True):
        if failed is not None and not _same_rule(kata, bug_name, variant, max_level, planted_fails):
            return Pin("not_specific", "your test also fails on code with a different bug "
                       f"({variant.header.get('Bug', variant.name)}): pin this bug's rule")
    return None


def _first_line(message: str) -> str:
    """A failure's first line, for a one-line reason (pytest's diff and advice dropped)."""
    from kata.results import first_line

    return first_line(message)[:160]


def _run_pin(kata: Kata, test_code: str, codes: list[str]) -> list[str | None] | Pin:
    """Run the test file on each code (rewritten and compiled afresh), in one child; per code:
    None if every test passed, else 'TEST: message' of the first failure."""
    import shutil

    from kata.grading import PASS, run_tests
    from kata.pytest_plugin import SWEEP_SKIP
    from kata.rewrite import rewrite

    rng = random.Random(secrets.randbits(64))
    with tempfile.TemporaryDirectory(prefix="kata-hunt-") as tmp:
        root = Path(tmp) / "wb"
        shutil.copytree(kata.dir, root / "katas" / kata.slug,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        test = root / "katas" / kata.slug / test_file_name(kata)
        test.write_text(test_code, encoding="utf-8")
        paths = []
        for code in codes:
            where = Path(tmp) / f"i{rng.getrandbits(40):010x}"
            where.mkdir()
            source = where / "src.py"
            source.write_text(rewrite(code, rng), encoding="utf-8")
            compiled = where / f"{kata.module_name}.pyc"
            py_compile.compile(str(source), cfile=str(compiled), dfile=kata.module, doraise=True)
            source.unlink()
            paths.append(compiled)
        order = list(paths)
        rng.shuffle(order)  # the order of the runs tells nothing either
        result = run_tests([test], None, kata.module_name, root, pin_limits(), sweep=order,
                           canaries=False)
    if not result.tests:
        message = result.message or ""
        if "exited with code 5" in message or not message:  # pytest's "no tests collected"
            return Pin("no_test", "your test file has no test: write one that takes the impl fixture")
        error = next((line[1:].strip() for line in message.splitlines() if line.startswith("E ")),
                     message.splitlines()[0])
        return Pin("error", f"your test file could not be run: {error[:200]}")
    if result.tampered:
        return Pin("error", f"the run cannot be trusted: {result.tampered}")
    outcome = []
    for path in paths:
        mine = [t for t in result.tests if t.impl == str(path.resolve()) or t.impl == str(path)]
        if not mine:
            return Pin("error", "your tests did not run on the code: take the impl fixture")
        bad = next((t for t in mine if t.status != PASS and SWEEP_SKIP not in (t.message or "")), None)
        if bad is not None and ran_out_of_time(bad):
            return Pin("timed_out", f"{_short(bad.name)} {bad.message}: a pin must finish quickly")
        outcome.append(None if bad is None else f"{_short(bad.name)}: {_first_line(bad.message or bad.status)}")
    return outcome


def try_pin(kata: Kata, test_code: str, code: str) -> str:
    """What the pin file does on `code` (the learner's file as it is now), in words: `kata check`'s
    dry run during a hunt. It runs nothing else, so it tells nothing of the planted bug or of
    correct code: a pin must fail here on the handed-out code, and pass once it is fixed."""
    try:
        parse(test_code)
    except SyntaxError as exc:
        return f"does not parse (line {exc.lineno}: {exc.msg})"
    runs = _run_pin(kata, test_code, [code])
    if isinstance(runs, Pin):
        if runs.verdict == "no_test" and claims_correct(test_code):
            return f'no test: it says the code is correct ({CORRECT_CLAIM} = "correct")'
        return runs.reason
    return "every test passes on your file" if runs[0] is None else f"fails on your file: {runs[0]}"


def _short(node_id: str) -> str:
    """'katas/x/test_hunt_m.py::test_a[m0]' -> 'test_a'."""
    return node_id.split("::")[-1].split("[")[0]


def _same_rule(kata: Kata, bug_name: str, variant: Bug, max_level: int,
               planted_fails: list[set[str]]) -> bool:
    """Whether the variant fails a hidden test the planted bug fails (then it breaks the same
    rule, and a pin may catch it too). `planted_fails` keeps the planted bug's set between calls."""
    stub = kata.stub.read_text(encoding="utf-8")
    if not planted_fails:
        planted_fails.append(_hidden_failures(kata, handout(kata, bug_name, max_level), max_level))
    return bool(planted_fails[0] & _hidden_failures(kata, cut(variant.text, stub, max_level), max_level))


def _hidden_failures(kata: Kata, code: str, max_level: int) -> set[str]:
    from kata.grading import PASS, grade

    with tempfile.TemporaryDirectory(prefix="kata-hunt-") as tmp:
        path = Path(tmp) / kata.module
        path.write_text(code, encoding="utf-8")
        result = grade(kata, path, levels=list(range(1, max_level + 1)))
    return {t.name for t in result.tests if t.status != PASS}


# --- for `kata validate` ----------------------------------------------------------------------


def drawable(kata: Kata, limits=None, test_files: list[Path] | None = None) -> tuple[bool, str]:
    """Whether level-1 hunts (the ai-review exam's) can be drawn for the kata: some zoo bug is in
    the level-1 code, the cut reference (rewritten, as a pin sees it) passes every level-1 hidden
    test, and every drawable bug, cut the same way, still fails one. One child process.

    `test_files`: the hidden suite's files in the order to run them (kata validate passes them
    cheapest first, as for the bug zoo: a bug's tests stop at its first failure, so most bugs
    never reach a slow timing test); default, the grader folder's order.

    Example: drawable(kata) -> (True, '14 level-1 hunts (31 at any level); the cut reference passes level 1')"""
    from kata.grading import PASS, Limits, private_copy, run_tests
    from kata.pytest_plugin import SWEEP_SKIP
    from kata.rewrite import rewrite

    found = bugs(kata, 1)
    if not found:
        return False, f"no zoo bug of level 1 changes the level-1 code: add one to {kata.bugs.name}/"
    stub = kata.stub.read_text(encoding="utf-8")
    rng = random.Random(0)
    with tempfile.TemporaryDirectory(prefix="kata-hunts-") as tmp:
        root = private_copy(kata, Path(tmp))
        # implementation path -> its bug's name (None: the reference); looked up by a test's impl,
        # None outside the sweep
        impls: dict[str | None, str | None] = {}
        sweep: list[Path] = []  # the implementations, in order
        for name, text in [(None, kata.solution.read_text(encoding="utf-8"))] + [(b.name, b.text) for b in found]:
            where = Path(tmp) / "impl" / (name or "_reference")
            where.mkdir(parents=True)
            path = (where / kata.module).resolve()
            path.write_text(rewrite(cut(text, stub, 1), rng), encoding="utf-8")
            impls[str(path)] = name
            sweep.append(path)
        files = [root / Path(f).resolve().relative_to(kata.root.resolve()) for f in test_files] \
            if test_files else [root / "graders" / kata.slug]
        result = run_tests(files, None, kata.module_name, root,
                           limits or Limits(), sweep=sweep, levels=[1])
    failed = {impls.get(t.impl) for t in result.tests
              if t.status != PASS and SWEEP_SKIP not in (t.message or "")}
    ran = {impls.get(t.impl) for t in result.tests}
    if None in failed or None not in ran:
        bad = next((t for t in result.tests if impls.get(t.impl) is None and t.status != PASS), None)
        return False, ("the reference cut to level 1 fails " + (f"{bad.name}: {bad.message}" if bad
                       else f"to run: {result.message}"))
    missed = sorted(b.name for b in found if b.name not in failed)
    if missed:
        return False, f"cut to level 1, these bugs pass every level-1 hidden test: {', '.join(missed)}"
    total = len(bugs(kata, len(kata.levels)))
    return True, f"{len(found)} level-1 hunts ({total} at any level); the cut reference passes level 1"
