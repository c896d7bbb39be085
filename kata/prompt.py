"""A kata's PROMPT.md, split by level: what a learner sees when only some levels are open.

A prompt is an intro, then `## ` sections. A section whose heading starts `## Level N` belongs to
level N; every other section (rules common to all levels, say) is shown whenever any level is. A
`<details>` block is background: shown, but not counted as prose a candidate must read.

Example:
    p = Prompt.parse(text)
    p.levels                               -> [1, 2, 3, 4]
    p.render([1], of_levels=4, note=...)   -> the intro, the common rules and level 1 only
    prose_words(p.render([1]))             -> 832
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SECTION = re.compile(r"(?m)^## (.*)$")
_LEVEL = re.compile(r"^Level (\d+)\b")
_FENCE = re.compile(r"```.*?```", re.S)
_DETAILS = re.compile(r"<details>.*?</details>", re.S)


@dataclass(frozen=True, slots=True)
class Section:
    heading: str  # without the '## '
    body: str  # the text after the heading line, up to the next section
    level: int | None  # None: shown at every level


@dataclass(frozen=True, slots=True)
class Prompt:
    intro: str
    sections: tuple[Section, ...]

    @classmethod
    def parse(cls, text: str) -> "Prompt":
        parts = _SECTION.split(text)
        sections = []
        for heading, body in zip(parts[1::2], parts[2::2]):
            m = _LEVEL.match(heading)
            sections.append(Section(heading, body, int(m.group(1)) if m else None))
        return cls(parts[0], tuple(sections))

    @property
    def levels(self) -> list[int]:
        return sorted({s.level for s in self.sections if s.level is not None})

    def render(self, levels, note: str | None = None) -> str:
        """The intro, the common sections and the sections of `levels`, in the prompt's order;
        `note` (a line about the levels not shown) goes after the intro."""
        wanted = set(levels)
        out = [self.intro.rstrip("\n") + "\n"]
        if note:
            out.append(f"\n> {note}\n")
        for s in self.sections:
            if s.level is None or s.level in wanted:
                out.append(f"\n## {s.heading}{s.body.rstrip(chr(10))}\n")
        return "".join(out)


def prose_words(markdown: str) -> int:
    """Words a candidate reads: outside code blocks and outside <details> background."""
    return len(_DETAILS.sub("", _FENCE.sub("", markdown)).split())


def level_note(shown: list[int], question_levels: list[int], total_levels: int,
               progressive: bool) -> str:
    """One line saying which levels this view holds and how the next one opens."""
    shown = sorted(shown)
    covered = sorted(question_levels)
    if covered != list(range(1, total_levels + 1)):
        scope = (f"This question covers level{'s' if len(covered) > 1 else ''} "
                 f"{', '.join(map(str, covered))} of the kata's {total_levels}.")
    else:
        scope = f"This kata has {total_levels} level{'s' if total_levels > 1 else ''}."
    hidden = [lv for lv in covered if lv not in shown]
    if not hidden:
        return scope + (" All of them are shown." if len(covered) > 1 else "")
    nxt = hidden[0]
    return (f"{scope} You see level{'s' if len(shown) > 1 else ''} {', '.join(map(str, shown))}; "
            + (f"level {nxt} opens when every hidden test of level {shown[-1]} passes on a "
               "`kata submit`." if progressive else ""))
