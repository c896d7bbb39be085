"""The catalog: find the workbook, load and validate kata.toml and exams/*.toml.

Everything a command knows about a kata comes from here, as frozen dataclasses.
Each loader rejects unknown keys, missing keys and wrong types with a one-line
`CatalogError` that names the file, the key and what to do about it; nothing in
this module ever lets a user's typo surface as a traceback.

Layout of a workbook (see docs/ARCHITECTURE.md):

    katas/<slug>/kata.toml, PROMPT.md, <module>.py (the stub), test_visible.py
    solutions/<slug>.py      reference solution
    graders/<slug>/test_*.py hidden suite
    exams/<name>.toml        timed sets of katas

Example:
    wb = Workbook.find()
    kata = wb.kata("lru-kv-cache")       -> Kata(slug='lru-kv-cache', ...)
    wb.exam("llm-infra-oa").katas        -> ('lru-kv-cache', ...)
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

SLUG_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
DIFFICULTIES = ("easy", "medium", "hard")
DEFAULT_EXAM = "llm-infra-oa"
WORKBOOK_ENV = "KATA_WORKBOOK"
STATE_ENV = "KATA_STATE_DIR"
BUNDLE_MARKER = ".kata-student-bundle"  # a file at the root of a student bundle (kata bundle)


class CatalogError(Exception):
    """A problem with the workbook's files, stated in one actionable line."""


MAX_MINUTES = 24 * 60  # the longest timer a session may have: a day


def check_minutes(minutes: float | None) -> None:
    """--minutes: a positive, finite number of minutes, at most MAX_MINUTES (None: the default)."""
    if minutes is None:
        return
    if not minutes > 0:
        raise CatalogError(f"--minutes must be a positive number of minutes, got {minutes:g}")
    if not minutes <= MAX_MINUTES:  # inf too
        raise CatalogError(f"--minutes {minutes:g} is longer than a day: give at most {MAX_MINUTES}")


# --- schema helpers ---------------------------------------------------------


def _check_keys(where: str, data: dict, required: dict, optional: dict) -> None:
    """Reject unknown and missing keys and wrong types.

    required / optional: key -> expected type (or tuple of types).
    """
    allowed = {**required, **optional}
    for key in data:
        if key not in allowed:
            raise CatalogError(
                f"{where}: unknown key '{key}'; allowed keys are "
                f"{', '.join(sorted(allowed))}: remove or rename it"
            )
    for key in required:
        if key not in data:
            raise CatalogError(f"{where}: missing key '{key}': add it")
    for key, typ in allowed.items():
        if key in data:
            value = data[key]
            # bool is an int subclass; never accept it where a number is asked for
            bad_bool = isinstance(value, bool) and typ in (int, float, (int, float))
            if bad_bool or not isinstance(value, typ):
                name = typ.__name__ if isinstance(typ, type) else "/".join(t.__name__ for t in typ)
                raise CatalogError(
                    f"{where}: key '{key}' must be a {name}, got {type(value).__name__} {value!r}"
                )


def _str_list(where: str, key: str, value: list) -> tuple[str, ...]:
    if not all(isinstance(v, str) and v.strip() for v in value):
        raise CatalogError(f"{where}: every item of '{key}' must be a non-empty string")
    return tuple(value)


def _read_toml(path: Path) -> dict:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise CatalogError(f"{path}: file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{path}: not valid TOML ({exc}): fix the syntax") from None
    except UnicodeDecodeError as exc:
        raise CatalogError(f"{path}: byte {exc.start} is not UTF-8: save the file as UTF-8") from None


# --- sealed hints (student bundles) -------------------------------------------


def _hint_pad(slug: str, n: int) -> bytes:
    import hashlib

    pad = b""
    while len(pad) < n:
        pad += hashlib.sha256(f"{slug}:{len(pad)}".encode()).digest()
    return pad[:n]


def seal_hints(slug: str, hints: list[str]) -> str:
    """Hints as one opaque string, so a bundle's kata.toml does not show them in plain text.

    Not encryption: it keeps a hint from being read by accident (a glance, a grep), so that the
    one way to see it is `kata hint`, which records the reveal.
    """
    import base64
    import json
    import zlib

    data = zlib.compress(json.dumps(list(hints)).encode())
    return base64.b64encode(bytes(a ^ b for a, b in zip(data, _hint_pad(slug, len(data)), strict=True))).decode()


def unseal_hints(where: str, slug: str, sealed: str) -> tuple[str, ...]:
    import base64
    import binascii
    import json
    import zlib

    try:
        data = base64.b64decode(sealed.encode(), validate=True)
        hints = json.loads(zlib.decompress(bytes(a ^ b for a, b in zip(data, _hint_pad(slug, len(data)), strict=True))))
    except (binascii.Error, zlib.error, ValueError, UnicodeError):
        raise CatalogError(f"{where}: 'sealed_hints' cannot be read: write it with `kata bundle`") from None
    if not isinstance(hints, list):
        raise CatalogError(f"{where}: 'sealed_hints' cannot be read: write it with `kata bundle`")
    return _str_list(where, "sealed_hints", hints)


# --- dataclasses ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Level:
    number: int  # 1-based
    name: str
    points: int
    hints: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EquivalentMutant:
    """A mutant the author has judged equivalent to the reference (cannot be caught)."""

    name: str  # mutmut's mutant name, e.g. "lru_kv_cache.x_LRUKVCache__get__mutmut_3"
    reason: str


@dataclass(frozen=True, slots=True)
class Kata:
    slug: str
    title: str
    summary: str
    difficulty: str
    minutes: int
    module: str  # the learner's file name, e.g. "lru_kv_cache.py"
    tags: tuple[str, ...]
    levels: tuple[Level, ...]
    root: Path  # the workbook root
    equivalent_mutants: tuple[EquivalentMutant, ...] = field(default=())
    # graded across the process boundary (kata/boundary.py): the learner's code in its own process
    process_boundary: bool = False

    # paths, all derived from root + slug + module
    @property
    def dir(self) -> Path:
        return self.root / "katas" / self.slug

    @property
    def module_name(self) -> str:
        return self.module[:-3]

    @property
    def stub(self) -> Path:
        return self.dir / self.module

    @property
    def prompt(self) -> Path:
        return self.dir / "PROMPT.md"

    @property
    def visible_tests(self) -> Path:
        return self.dir / "test_visible.py"

    @property
    def solution(self) -> Path:
        return self.root / "solutions" / f"{self.slug}.py"

    @property
    def grader(self) -> Path:
        return self.root / "graders" / self.slug

    @property
    def bugs(self) -> Path:
        return self.root / "tests" / "bugs" / self.slug

    @property
    def points(self) -> int:
        return sum(level.points for level in self.levels)

    @property
    def hints(self) -> tuple[tuple[int, str], ...]:
        """Every hint in reveal order, as (level number, text)."""
        return tuple((lv.number, h) for lv in self.levels for h in lv.hints)

    def level(self, number: int) -> Level:
        for lv in self.levels:
            if lv.number == number:
                return lv
        raise CatalogError(f"{self.slug}: no level {number} (levels are 1..{len(self.levels)})")


REVEALS = ("all", "progressive")


# The question kinds an exam may name: name -> the kind (kata/kinds.py's Kind, which checks the
# levels a question of it may cover and says whether decoys apply to it). A kind's module
# registers it when imported (kata.kinds.register); the built-in ones are loaded by name on first
# use, as plug-ins are, so that neither this module nor kata/kinds.py imports a kind's module.
KINDS: dict[str, object] = {}
BUILTIN_KINDS = ("kata.kinds", "kata.hunt_questions")


def kinds() -> dict[str, object]:
    """The registry, with the built-in kinds loaded."""
    import importlib

    for name in BUILTIN_KINDS:
        importlib.import_module(name)
    return KINDS



@dataclass(frozen=True, slots=True)
class Question:
    """One question of an exam: a kata, the levels it covers, its own minutes."""

    kata: str  # slug
    levels: tuple[int, ...]  # ascending, 1-based
    minutes: float  # an exam's clock scaled by --minutes keeps decimals
    reveal: str = "all"  # "all": every covered level shown at once; "progressive": one at a time
    kind: str = "kata"  # a registered kind (kata/kinds.py)
    bug: str | None = None  # a hunt's zoo patch (its file stem), drawn at start; None: a decoy

    def to_json(self) -> dict:
        data = {"kata": self.kata, "levels": list(self.levels), "minutes": self.minutes,
                "reveal": self.reveal}
        if self.kind != "kata":
            data.update(kind=self.kind, bug=self.bug)
        return data

    @classmethod
    def from_json(cls, data: dict) -> Question:
        return cls(data["kata"], tuple(data["levels"]), data["minutes"], data.get("reveal", "all"),
                   data.get("kind", "kata"), data.get("bug"))


@dataclass(frozen=True, slots=True)
class Exam:
    name: str
    title: str
    minutes: int
    questions: tuple[Question, ...]
    description: str
    path: Path
    decoy_probability: float = 0.0  # a hunt question hands out the correct code this often
    # a project exam (one kata, levels gated): (low, high) minutes a level is reported to take,
    # per level; its score is also shown on the 200-600 scale (scaled_score). () for others.
    level_budgets: tuple[tuple[int, int], ...] = ()

    @property
    def katas(self) -> tuple[str, ...]:
        return tuple(q.kata for q in self.questions)

    @property
    def project(self) -> bool:
        return bool(self.level_budgets)


SCALE_LOW, SCALE_HIGH = 200, 600  # a project exam's score scale (like the real round's, not its formula)


def scaled_score(earned: float, possible: float) -> int:
    """The 200-600 score of a project exam: 200 for nothing, 600 for everything, linear in the
    weighted share of the hidden tests passed (every level counts, opened or not)."""
    share = earned / possible if possible else 0.0
    return round(SCALE_LOW + (SCALE_HIGH - SCALE_LOW) * min(max(share, 0.0), 1.0))


# --- loaders ----------------------------------------------------------------

KATA_REQUIRED = {
    "slug": str,
    "title": str,
    "summary": str,
    "difficulty": str,
    "minutes": int,
    "module": str,
    "tags": list,
    "levels": list,
}
KATA_OPTIONAL = {"equivalent_mutants": list, "process_boundary": bool}
LEVEL_REQUIRED = {"name": str, "points": int}
LEVEL_OPTIONAL = {"hints": list, "sealed_hints": str}
MUTANT_REQUIRED = {"name": str, "reason": str}
EXAM_REQUIRED = {"title": str, "minutes": int}
EXAM_OPTIONAL = {"description": str, "katas": list, "questions": list, "decoy_probability": (int, float),
                 "level_budgets": list}
QUESTION_REQUIRED = {"kata": str, "minutes": int}
QUESTION_OPTIONAL = {"levels": list, "reveal": str, "kind": str}


def load_kata(root: Path, slug: str) -> Kata:
    """Load katas/<slug>/kata.toml and check that the kata's learner-facing files exist."""
    path = root / "katas" / slug / "kata.toml"
    data = _read_toml(path)
    _check_keys(str(path), data, KATA_REQUIRED, KATA_OPTIONAL)
    if data["slug"] != slug:
        raise CatalogError(
            f"{path}: slug '{data['slug']}' does not match its folder '{slug}': make them equal"
        )
    if data["difficulty"] not in DIFFICULTIES:
        raise CatalogError(
            f"{path}: difficulty '{data['difficulty']}' must be one of {', '.join(DIFFICULTIES)}"
        )
    if data["minutes"] <= 0:
        raise CatalogError(f"{path}: minutes must be a positive whole number, got {data['minutes']}")
    module = data["module"]
    if not (module.endswith(".py") and module[:-3].isidentifier()):
        raise CatalogError(
            f"{path}: module '{module}' must be a Python file name such as 'my_module.py'"
        )
    if not data["levels"]:
        raise CatalogError(f"{path}: 'levels' is empty: add at least one [[levels]] table")
    levels = []
    for i, raw in enumerate(data["levels"], start=1):
        where = f"{path}: levels[{i}]"
        if not isinstance(raw, dict):
            raise CatalogError(f"{where} must be a table ([[levels]])")
        _check_keys(where, raw, LEVEL_REQUIRED, LEVEL_OPTIONAL)
        if raw["points"] <= 0:
            raise CatalogError(f"{where}: points must be positive, got {raw['points']}")
        if ("hints" in raw) == ("sealed_hints" in raw):
            raise CatalogError(f"{where}: give 'hints' (a list of strings) or 'sealed_hints', not both or neither")
        hints = (_str_list(where, "hints", raw["hints"]) if "hints" in raw
                 else unseal_hints(where, slug, raw["sealed_hints"]))
        if not hints:
            raise CatalogError(f"{where}: 'hints' is empty: give at least one hint per level")
        levels.append(Level(i, raw["name"], raw["points"], hints))
    mutants = []
    for i, raw in enumerate(data.get("equivalent_mutants", []), start=1):
        where = f"{path}: equivalent_mutants[{i}]"
        if not isinstance(raw, dict):
            raise CatalogError(f"{where} must be a table ([[equivalent_mutants]])")
        _check_keys(where, raw, MUTANT_REQUIRED, {})
        mutants.append(EquivalentMutant(raw["name"], raw["reason"]))
    kata = Kata(
        slug=slug,
        title=data["title"],
        summary=data["summary"],
        difficulty=data["difficulty"],
        minutes=data["minutes"],
        module=module,
        tags=_str_list(str(path), "tags", data["tags"]),
        levels=tuple(levels),
        root=root,
        equivalent_mutants=tuple(mutants),
        process_boundary=data.get("process_boundary", False),
    )
    for needed in (kata.prompt, kata.stub, kata.visible_tests):
        if not needed.is_file():
            raise CatalogError(f"{needed}: missing file of kata '{slug}': create it")
    return kata


def _question(where: str, raw, kata_of) -> Question:
    """One [[questions]] table of an exam file, checked."""
    if not isinstance(raw, dict):
        raise CatalogError(f"{where} must be a table ([[questions]])")
    _check_keys(where, raw, QUESTION_REQUIRED, QUESTION_OPTIONAL)
    kata = kata_of(where, raw["kata"])
    if raw["minutes"] <= 0:
        raise CatalogError(f"{where}: minutes must be a positive whole number, got {raw['minutes']}")
    reveal = raw.get("reveal", "all")
    if reveal not in REVEALS:
        raise CatalogError(f"{where}: reveal '{reveal}' must be one of {', '.join(REVEALS)}")
    all_levels = tuple(lv.number for lv in kata.levels) if kata is not None else ()
    levels = raw.get("levels", list(all_levels))
    if not levels:
        raise CatalogError(f"{where}: 'levels' is empty: list the kata levels it covers, e.g. [1, 2]")
    for lv in levels:
        if isinstance(lv, bool) or not isinstance(lv, int):
            raise CatalogError(f"{where}: every item of 'levels' must be a level number, got {lv!r}")
        if kata is not None and lv not in all_levels:
            raise CatalogError(f"{where}: kata '{raw['kata']}' has no level {lv} (levels are 1..{len(all_levels)})")
    if len(set(levels)) != len(levels):
        raise CatalogError(f"{where}: a level is listed twice in 'levels': list each once")
    kind = raw.get("kind", "kata")
    known = kinds()
    if kind not in known:
        raise CatalogError(f"{where}: kind '{kind}' must be one of {', '.join(sorted(known))}")
    why = known[kind].check_levels(sorted(levels))  # type: ignore[attr-defined]
    if why:
        raise CatalogError(f"{where}: {why}")
    return Question(raw["kata"], tuple(sorted(levels)), raw["minutes"], reveal, kind)


def load_exam(root: Path, name: str, known_katas) -> Exam:
    """exams/<name>.toml. `known_katas`: slug -> the kata's Kata (or anything with .levels and
    .minutes); a set of slugs is accepted for the old form's checks only.

    Two forms: `katas = ["slug", ...]` (every level of each kata, minutes from the kata), or
    `[[questions]]` tables with `kata`, `minutes`, and optionally `levels` (default: all) and
    `reveal` ("all" or "progressive"; default "all"), whose minutes must add up to the exam's.
    """
    path = root / "exams" / f"{name}.toml"
    data = _read_toml(path)
    _check_keys(str(path), data, EXAM_REQUIRED, EXAM_OPTIONAL)
    if data["minutes"] <= 0:
        raise CatalogError(f"{path}: minutes must be a positive whole number, got {data['minutes']}")
    if ("katas" in data) == ("questions" in data):
        raise CatalogError(f"{path}: give either 'katas' (a list of slugs) or [[questions]] tables, not both or neither")
    known = sorted(known_katas)

    def kata_of(where: str, slug: str):
        if slug not in known_katas:
            raise CatalogError(f"{where}: unknown kata '{slug}'; known katas: {', '.join(known) or 'none'}")
        return known_katas[slug] if isinstance(known_katas, dict) else None

    questions = []
    if "katas" in data:
        katas = _str_list(str(path), "katas", data["katas"])
        if not katas:
            raise CatalogError(f"{path}: 'katas' is empty: list at least one kata slug")
        if len(set(katas)) != len(katas):
            raise CatalogError(f"{path}: a kata is listed twice in 'katas': list each once")
        for slug in katas:
            kata = kata_of(str(path), slug)
            levels = tuple(lv.number for lv in kata.levels) if kata is not None else ()
            questions.append(Question(slug, levels, kata.minutes if kata is not None else 0, "all"))
    else:
        if not data["questions"]:
            raise CatalogError(f"{path}: 'questions' is empty: add at least one [[questions]] table")
        for i, raw in enumerate(data["questions"], start=1):
            questions.append(_question(f"{path}: questions[{i}]", raw, kata_of))
        slugs = [q.kata for q in questions]
        if len(set(slugs)) != len(slugs):
            dup = next(s for s in slugs if slugs.count(s) > 1)
            raise CatalogError(f"{path}: kata '{dup}' is in two questions: one question per kata")
        total = sum(q.minutes for q in questions)
        if total != data["minutes"]:
            raise CatalogError(
                f"{path}: the questions' minutes add up to {total}, but minutes = {data['minutes']}: make them agree"
            )
    decoys = data.get("decoy_probability", 0.0)
    if not 0 <= decoys <= 1:
        raise CatalogError(f"{path}: decoy_probability must be between 0 and 1, got {decoys}")
    if decoys and not any(getattr(kinds()[q.kind], "decoys", False) for q in questions):
        takes = [name for name, k in sorted(kinds().items()) if getattr(k, "decoys", False)]
        raise CatalogError(f"{path}: decoy_probability is set but no question is of a kind that hands "
                           f"out decoys ({', '.join(takes) or 'none'}): remove it or add such a question")
    return Exam(name, data["title"], data["minutes"], tuple(questions), data.get("description", ""), path,
                float(decoys), _level_budgets(str(path), data.get("level_budgets", []), questions))


def _level_budgets(where: str, raw: list, questions: list[Question]) -> tuple[tuple[int, int], ...]:
    """A project exam's `level_budgets = [[10, 15], [20, 30], ...]`: one [low, high] per level of
    its one question, whose levels open one at a time."""
    if not raw:
        return ()
    if len(questions) != 1 or questions[0].reveal != "progressive":
        raise CatalogError(f"{where}: level_budgets is for a project exam: one question with "
                           "reveal = \"progressive\"")
    if len(raw) != len(questions[0].levels):
        raise CatalogError(f"{where}: level_budgets has {len(raw)} entries, the question has "
                           f"{len(questions[0].levels)} levels: give one [low, high] per level")
    budgets = []
    for item in raw:
        if not (isinstance(item, list) and len(item) == 2 and all(isinstance(x, int) and not isinstance(x, bool)
                                                                  for x in item) and 0 < item[0] <= item[1]):
            raise CatalogError(f"{where}: each level_budgets entry is [low, high] minutes, "
                               f"0 < low <= high, got {item!r}")
        budgets.append((item[0], item[1]))
    return tuple(budgets)


# --- the workbook -----------------------------------------------------------


def _looks_like_workbook(path: Path) -> bool:
    return (path / "katas").is_dir()


# A learner's workbook (`kata init DIR`) holds no catalog: this file marks it, and the katas,
# suites and references are read from the installed package (content_root). An instructor's
# workbook (`kata init --instructor`, or a clone) holds the catalog itself (katas/, graders/ ...).
LEARNER_MARKER = "workbook.toml"
LAYOUTS = ("learner", "instructor")


def _marker_layout(path: Path) -> str | None:
    """The layout a workbook.toml at `path` names ("learner", "instructor"), or None without one."""
    marker = path / LEARNER_MARKER
    if not marker.is_file():
        return None
    data = _read_toml(marker)
    if "layout" not in data:  # another tool's file of that name: not a kata workbook
        return None
    layout = data["layout"]
    if layout not in LAYOUTS:
        raise CatalogError(f"{marker}: 'layout' must be one of {', '.join(LAYOUTS)}, got {layout!r}: "
                           "write layout = \"learner\" (or remake the workbook with `kata init`)")
    return layout


def _is_learner_workbook(path: Path) -> bool:
    return not _looks_like_workbook(path) and _marker_layout(path) == "learner"


def marker_text(layout: str) -> str:
    """workbook.toml as `kata init` writes it."""
    what = ("a learner's workbook: the catalog is read from the installed kata" if layout == "learner"
            else "an instructor's workbook: the catalog is katas/, graders/, solutions/ and exams/ here")
    return f"# Made by `kata init`: {what}.\nlayout = \"{layout}\"\n"


OLD_README = "Made by `kata init`. Practise here"  # the README an earlier kata init wrote


# what a workbook holds, relative to its root: `kata init` copies these, a wheel ships them
# (setup.py keeps the same list); docs/ for what prompts cite (docs/ENGINE.md's formulas)
CONTENT = ("katas", "solutions", "graders", "exams", "tests/bugs", "docs")


def packaged_content() -> Path:
    """Where a wheel keeps the workbook's content: kata/_content/ inside the installed package."""
    return Path(__file__).resolve().parent / "_content"


def content_root() -> Path | None:
    """The katas this installation carries: kata/_content/ in a wheel; in an editable install, the
    clone it was installed from (a clone is a workbook). None when neither has katas/."""
    for candidate in (packaged_content(), Path(__file__).resolve().parent.parent):
        if _looks_like_workbook(candidate):
            return candidate
    return None


def user_state_dir() -> Path:
    """The platform's user state folder for kata (~/.local/state/kata-workbook on Linux)."""
    from platformdirs import user_state_path

    return user_state_path("kata-workbook", appauthor=False)


@dataclass
class Workbook:
    """Where the catalog is (`root`: katas/, solutions/, graders/, exams/) and where the learner's
    state lives (`state_dir`: workspace/ and .kata/). In a learner's workbook the two differ: the
    catalog is the installed package's, the folder holds only the learner's files (`learner`)."""

    root: Path
    state_dir: Path
    learner: bool = False

    @classmethod
    def find(cls, explicit: str | os.PathLike | None = None) -> Workbook:
        """--workbook PATH, else $KATA_WORKBOOK, else the nearest folder up from here with a
        katas/ folder, else the katas this package was installed with (see content_root).

        State (workspace/ and .kata/) lives in $KATA_STATE_DIR if set, else in the workbook; when
        the workbook is the installed package's own content, in the platform's user state folder
        (never under site-packages)."""
        candidate = explicit or os.environ.get(WORKBOOK_ENV)
        if candidate:
            root = Path(candidate).expanduser().resolve()
            if _is_learner_workbook(root):
                return cls._learner(root)
            if not _looks_like_workbook(root):
                src = "--workbook" if explicit else f"${WORKBOOK_ENV}"
                raise CatalogError(f"{src} {root}: no katas/ folder and no {LEARNER_MARKER} there: "
                                   "point it at a workbook (`kata init DIR` makes one)")
        else:
            here = Path.cwd().resolve()
            found = next((p for p in (here, *here.parents)
                          if _looks_like_workbook(p) or _is_learner_workbook(p)), None)
            if found is not None and not _looks_like_workbook(found):
                return cls._learner(found)
            content = found or content_root()
            if content is None:
                raise CatalogError(
                    "no workbook found (a folder with katas/): run `kata init DIR` to make one, "
                    "or pass --workbook PATH"
                )
            root = content
        state = os.environ.get(STATE_ENV)
        if state:
            state_dir = Path(state).expanduser().resolve()
        elif root == packaged_content():
            state_dir = user_state_dir()
        else:
            state_dir = root
        # the installed package's own catalog, with state in the user's folder, is a learner's
        return cls(root=root, state_dir=state_dir, learner=root == packaged_content())

    @classmethod
    def _learner(cls, folder: Path) -> Workbook:
        """A learner's workbook: the catalog from the installation, state in `folder` (always: the
        folder is the learner's state, whatever $KATA_STATE_DIR says)."""
        content = content_root()
        if content is None:
            raise CatalogError(f"{folder}: a learner's workbook, but this installation carries no "
                               "katas (kata/_content is missing): reinstall kata-workbook")
        return cls(root=content, state_dir=folder, learner=True)

    @property
    def old_layout(self) -> bool:
        """A learner's workbook made by an earlier `kata init`: the whole catalog copied in (it
        keeps working; `kata init --upgrade DIR` moves it to the learner's layout)."""
        if self.learner or self.root != self.state_dir or _marker_layout(self.root) is not None:
            return False
        try:
            return OLD_README in (self.root / "README.md").read_text(encoding="utf-8")[:400]
        except (OSError, UnicodeDecodeError):
            return False

    # where the learner's files and the store live
    @property
    def workspace(self) -> Path:
        return self.state_dir / "workspace"

    @property
    def kata_dir(self) -> Path:
        return self.state_dir / ".kata"

    @property
    def is_student_bundle(self) -> bool:
        return (self.root / BUNDLE_MARKER).is_file()

    def slugs(self) -> list[str]:
        base = self.root / "katas"
        return sorted(p.name for p in base.iterdir() if p.is_dir() and (p / "kata.toml").is_file())

    def kata(self, slug: str) -> Kata:
        if not SLUG_RE.match(slug) or not (self.root / "katas" / slug / "kata.toml").is_file():
            hint = did_you_mean(slug, self.slugs()) or " `kata list` shows the katas."
            raise CatalogError(f"unknown kata '{slug}'.{hint}")
        return load_kata(self.root, slug)

    def katas(self) -> list[Kata]:
        return [load_kata(self.root, slug) for slug in self.slugs()]

    def exam_names(self) -> list[str]:
        base = self.root / "exams"
        if not base.is_dir():
            return []
        return sorted(p.stem for p in base.glob("*.toml"))

    def exam(self, name: str) -> Exam:
        if name not in self.exam_names():
            known = ", ".join(self.exam_names()) or "none"
            raise CatalogError(f"unknown exam '{name}'.{did_you_mean(name, self.exam_names())} Known exams: {known}")
        return load_exam(self.root, name, self._katas_by_slug())

    def exams(self) -> list[Exam]:
        known = self._katas_by_slug()
        return [load_exam(self.root, name, known) for name in self.exam_names()]

    def _katas_by_slug(self) -> _LazyKatas:
        return _LazyKatas(self.root, self.slugs())

    def workspace_file(self, kata: Kata) -> Path:
        return self.workspace / kata.module


def did_you_mean(name: str, choices: list[str]) -> str:
    """' Did you mean 'x'?' for the closest of `choices` (or the only one that starts with
    `name`: 'streaming' -> 'streaming-token-counter'), or '' when none is close."""
    import difflib

    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    starting = [c for c in choices if name and c.startswith(name)]
    if not close and len(starting) == 1:
        close = starting
    return f" Did you mean '{close[0]}'?" if close else ""


class _LazyKatas(dict):
    """slug -> Kata, loaded on first use (an exam names a few katas; loading all is waste)."""

    def __init__(self, root: Path, slugs: list[str]):
        super().__init__({slug: None for slug in slugs})
        self.root = root

    def __getitem__(self, slug: str) -> Kata:
        value = super().__getitem__(slug)
        if value is None:
            value = load_kata(self.root, slug)
            self[slug] = value
        return value


def find_kata_for_test_file(path: Path) -> tuple[Path, str] | None:
    """For a test file under graders/<slug>/ or katas/<slug>/, return (workbook root, slug)."""
    path = path.resolve()
    for parent in path.parents:
        if parent.parent.name in ("graders", "katas") and _looks_like_workbook(parent.parent.parent):
            return parent.parent.parent, parent.name
    return None


def find_workspace_test(path: Path) -> tuple[Kata, Path] | None:
    """For a workbook's workspace/test_<module>.py (the open levels' examples kata writes there),
    the kata and the learner's file beside it."""
    path = path.resolve()
    folder = path.parent
    if folder.name != "workspace" or not path.name.startswith("test_"):
        return None
    base = folder.parent
    if not (_looks_like_workbook(base) or _is_learner_workbook(base)):
        return None
    wb = Workbook.find(base)
    module = path.name[len("test_"):]
    for slug in wb.slugs():
        kata = load_kata(wb.root, slug)
        if kata.module == module:
            return kata, folder / module
    return None
