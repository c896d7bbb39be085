"""The bug zoo as patches: each wrong solution is a small unified diff against the reference.

A zoo entry `tests/bugs/<slug>/<name>.patch` is a header (`Bug:` what the mistake is, in a
reviewer's words; `Level:` the level whose tests catch it (the first hidden test that fails it, in
file order); `Breaks:` the rule it breaks: a learner sees all three after a hunt, and
`header_problems` says when one is missing or unfit), then a unified diff of `solutions/<slug>.py`:

    Bug: evicts while used_blocks >= capacity, so an exactly-full cache loses an entry.
    Level: 1
    Breaks: "Eviction stops as soon as `used_blocks <= capacity`"
    --- a/solutions/lru-kv-cache.py
    +++ b/lru-kv-cache/evict_at_equal.py
    @@ -120,7 +120,7 @@
    ...

Write one with `diff -u solutions/SLUG.py my_wrong_copy.py > tests/bugs/SLUG/NAME.patch` and put the
header on top. `kata validate` applies every patch to the current reference in a temporary folder
and fails, naming the entry and the hunk, when one no longer applies: a change to the reference can
never silently leave its bugs behind.

Example:
    apply_patch(reference_text, patch_text)  -> the wrong solution's text
    ZooPatch.parse(path).header["Level"]      -> "1"
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
SEARCH = 50  # lines a hunk may have moved since the patch was written


class PatchError(Exception):
    """A patch that cannot be read or no longer applies; the message says which hunk and why."""


@dataclass
class Hunk:
    old_start: int  # 1-based line in the reference
    lines: list[str] = field(default_factory=list)  # ' ', '-', '+' prefixed, without newline

    @property
    def before(self) -> list[str]:
        return [line[1:] for line in self.lines if line[:1] in (" ", "-")]

    @property
    def after(self) -> list[str]:
        return [line[1:] for line in self.lines if line[:1] in (" ", "+")]


@dataclass
class ZooPatch:
    path: Path
    header: dict[str, str]  # "Bug", "Level", "Breaks", ... from "Key: value" header lines
    description: str  # every header line, as written
    hunks: list[Hunk]

    @property
    def name(self) -> str:
        return self.path.stem

    @classmethod
    def parse(cls, path: Path) -> ZooPatch:
        return cls.from_text(path, path.read_text(encoding="utf-8"))

    @classmethod
    def from_text(cls, path: Path, text: str) -> ZooPatch:
        lines = text.splitlines()
        try:
            start = next(i for i, line in enumerate(lines) if line.startswith("--- "))
        except StopIteration:
            raise PatchError(f"{path.name}: no '--- ' line: not a unified diff (write it with diff -u)") from None
        head = lines[:start]
        header = {}
        for line in head:
            key, sep, value = line.partition(":")
            if sep and key.strip() and " " not in key.strip():
                header[key.strip()] = value.strip()
        hunks: list[Hunk] = []
        for line in lines[start + 2:]:
            m = _HUNK.match(line)
            if m:
                hunks.append(Hunk(int(m.group(1))))
            elif hunks and line[:1] in (" ", "-", "+"):
                hunks[-1].lines.append(line)
            elif hunks and line == "":
                hunks[-1].lines.append(" ")  # an empty context line whose space was trimmed
            elif line.startswith("\\ No newline"):
                continue
            elif line.strip():
                raise PatchError(f"{path.name}: unexpected line in the diff: {line[:60]!r}")
        if not hunks:
            raise PatchError(f"{path.name}: the diff has no hunk (@@ ... @@)")
        return cls(path, header, "\n".join(head).strip(), hunks)

    def apply(self, reference: str) -> str:
        return apply_hunks(reference, self.hunks, self.path.name)


def apply_hunks(reference: str, hunks: list[Hunk], name: str = "patch") -> str:
    """Apply hunks in order; each must find its context (exactly) near where it says it is."""
    lines = reference.splitlines()
    offset = 0  # lines added so far by earlier hunks
    for number, hunk in enumerate(hunks, start=1):
        before = hunk.before
        expected = hunk.old_start - 1 + offset if hunk.old_start else offset
        at = _find(lines, before, expected)
        if at is None:
            raise PatchError(
                f"{name}: hunk {number} (reference line {hunk.old_start}) no longer applies: its "
                "context is not in the reference: rewrite the bug on the current reference")
        lines[at:at + len(before)] = hunk.after
        offset += len(hunk.after) - len(before)
    return "\n".join(lines) + "\n"


def _find(lines: list[str], block: list[str], expected: int) -> int | None:
    n = len(block)
    for delta in range(SEARCH + 1):
        for at in ((expected + delta, expected - delta) if delta else (expected,)):
            if 0 <= at <= len(lines) - n and lines[at:at + n] == block:
                return at
    return None


def apply_patch(reference: str, patch_text: str, name: str = "patch") -> str:
    return ZooPatch.from_text(Path(name), patch_text).apply(reference)


def make_patch(reference: str, wrong: str, slug: str, name: str, header: dict[str, str]) -> str:
    """A zoo entry's text: the header, then `diff -u` of the reference and the wrong solution."""
    head = "".join(f"{k}: {v}\n" for k, v in header.items())
    diff = difflib.unified_diff(reference.splitlines(keepends=True), wrong.splitlines(keepends=True),
                                f"a/solutions/{slug}.py", f"b/{slug}/{name}.py", n=3)
    return head + "".join(diff)


HEADER_KEYS = ("Bug", "Level", "Breaks")
BUG_MAX = 200  # characters: a header is read in a review, next to the learner's code


def header_problems(patch: ZooPatch, levels: int) -> list[str]:
    """Why a patch's header is not fit to show a learner after a hunt ([] when it is): `Bug:`
    says what was wrong in a sentence, `Level:` is one of the kata's levels, `Breaks:` names the
    rule it breaks.

    Example: header_problems(ZooPatch.parse(p), 3) -> ['x.patch: no Breaks: line ...']"""
    name, head = patch.path.name, patch.header
    problems = [f"{name}: no {key}: line: add one (what was wrong / its level / the rule it breaks)"
                for key in HEADER_KEYS if not head.get(key)]
    bug = head.get("Bug", "")
    if bug and len(bug) > BUG_MAX:
        problems.append(f"{name}: Bug: is {len(bug)} characters: say it in one sentence of at most {BUG_MAX}")
    if bug and any(mark in bug for mark in ("@@", "+++", "---", "TODO", "XXX")):
        problems.append(f"{name}: Bug: reads like a diff or a note, not a reviewer's sentence: rewrite it")
    breaks = head.get("Breaks", "")
    if breaks and re.match(r"(\d+\.\s|\*\*|\()", breaks):  # a list item, a bold label, an aside
        problems.append(f"{name}: Breaks: {breaks!r} is a fragment of the prompt: state the rule "
                        "itself (a learner reads it alone, after the hunt)")
    level = head.get("Level", "")
    if level and not (level.isdigit() and 1 <= int(level) <= levels):
        problems.append(f"{name}: Level: {level!r} is not a level of the kata (1..{levels})")
    return problems


def entries(bugs_dir: Path) -> list[Path]:
    """The zoo's patch files, by name."""
    if not bugs_dir.is_dir():
        return []
    return sorted(p for p in bugs_dir.glob("*.patch") if not p.name.startswith("_"))


def materialise(kata, dest: Path) -> tuple[dict[Path, Path], list[str]]:
    """Apply every zoo patch of `kata` to its reference into dest/<name>.py.

    Returns ({bug file: patch file}, [one error line per patch that does not apply])."""
    dest.mkdir(parents=True, exist_ok=True)
    reference = kata.solution.read_text(encoding="utf-8")
    made, errors = {}, []
    for patch in entries(kata.bugs):
        try:
            text = ZooPatch.parse(patch).apply(reference)
        except PatchError as exc:
            errors.append(str(exc))
            continue
        if text == reference or text.rstrip("\n") == reference.rstrip("\n"):
            errors.append(f"{patch.name}: applies but changes nothing: a bug must change the code")
            continue
        target = dest / f"{patch.stem}.py"
        target.write_text(text, encoding="utf-8")
        made[target] = patch
    return made, errors
