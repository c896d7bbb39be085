"""A kata's PROMPT.md, split by level: what a learner sees when only some levels are open.

A prompt is an intro, then `## ` sections. A section whose heading starts `## Level N` belongs to
level N; every other section (rules common to all levels, say) is shown whenever any level is. A
`<details>` block is background: shown, but not counted as prose a candidate must read. The cuts
follow markdown's own tokens (markdown-it): a `## ` line inside a code block is code.

Example:
    p = Prompt.parse(text)
    p.levels                               -> [1, 2, 3, 4]
    p.render([1], of_levels=4, note=...)   -> the intro, the common rules and level 1 only
    prose_words(p.render([1]))             -> 832
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LEVEL = re.compile(r"^Level (\d+)\b")
_DETAILS = re.compile(r"<details>.*?</details>", re.S)


@dataclass(frozen=True, slots=True)
class Block:
    kind: str  # "prose" or "code"
    text: str  # prose: markdown source; code: the code, without its fences
    lang: str = ""  # code: the fence's language ("" when it names none)


def _tokens(text: str):
    """The block tokens of markdown `text` (markdown-it, CommonMark): a `## ` inside a fenced
    code block is code, never a heading."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").parse(text)


def blocks(text: str) -> list[Block]:
    """Markdown cut into prose and code blocks, in order, by markdown's own tokens.

    Example:
        blocks("Intro\n\n```python\nx = 1\n```\n")
        -> [Block("prose", "Intro\n\n"), Block("code", "x = 1\n", "python")]
    """
    lines = text.splitlines(keepends=True)
    out: list[Block] = []
    cursor = 0
    for tok in _tokens(text):
        if tok.level != 0 or tok.map is None or tok.type not in ("fence", "code_block"):
            continue
        start, end = tok.map
        if "".join(lines[cursor:start]).strip():
            out.append(Block("prose", "".join(lines[cursor:start])))
        lang = tok.info.strip().split()[0] if tok.type == "fence" and tok.info.strip() else ""
        out.append(Block("code", tok.content, lang))
        cursor = end
    if "".join(lines[cursor:]).strip():
        out.append(Block("prose", "".join(lines[cursor:])))
    return out


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
        """Cut at each second-level heading that markdown sees as one (never at a `## ` line
        inside a code block)."""
        lines = text.splitlines(keepends=True)
        toks = _tokens(text)
        heads = [(tok.map, toks[i + 1].content) for i, tok in enumerate(toks)
                 if tok.type == "heading_open" and tok.tag == "h2" and tok.level == 0]
        if not heads:
            return cls(text, ())
        sections = []
        for n, ((start, end), heading) in enumerate(heads):
            stop = heads[n + 1][0][0] if n + 1 < len(heads) else len(lines)
            m = _LEVEL.match(heading)
            sections.append(Section(heading, "\n" + "".join(lines[end:stop]),
                                    int(m.group(1)) if m else None))
        return cls("".join(lines[:heads[0][0][0]]), tuple(sections))

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
    prose = "".join(b.text for b in blocks(markdown) if b.kind == "prose")
    return len(_DETAILS.sub("", prose).split())


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
