"""The progress page's charts, drawn here as inline SVG: no chart library, nothing fetched.

Each function takes what `kata progress` and `kata history` print (session.progress,
session.assessment_progress, session.history) and returns an HTML fragment: one <figure> per
chart, or a line saying there is nothing to draw yet.

    kata_scores(rows)          each kata's score session by session (percent of its points), and the best so far
    mock_scores(series, hist)  each mock assessment's score attempt by attempt, one line per exam of a series
    level_minutes(hist)        the minutes each level took to pass, one bar per session and kata
"""

from __future__ import annotations

from html import escape

COLOURS = ("#2563eb", "#d97706", "#059669", "#db2777", "#7c3aed", "#0891b2", "#65a30d", "#dc2626")


def _empty(text: str) -> str:
    return f'<p class="empty">{escape(text)}</p>'


def _svg(width: int, height: int, body: list[str], label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}" role="img" aria-label="{escape(label)}">' + "".join(body) + "</svg>")


def _text(x: float, y: float, text: str, anchor: str = "start", cls: str = "lbl") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" class="{cls}">{escape(text)}</text>'


def _percent_axes(left: int, top: int, w: int, h: int) -> list[str]:
    """Horizontal grid lines at 0, 50 and 100 percent, labelled on the left."""
    out = []
    for pct in (0, 50, 100):
        y = top + h - h * pct / 100
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + w}" y2="{y:.1f}" class="grid"/>')
        out.append(_text(left - 6, y + 4, f"{pct}%", "end", "axis"))
    return out


def _line(points: list[tuple[float, float]], colour: str, dashed: bool = False) -> list[str]:
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    dash = ' stroke-dasharray="4 3"' if dashed else ""
    out = [f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>']
    if not dashed:
        out += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colour}"/>' for x, y in points]
    return out


def kata_scores(rows) -> str:
    """One small chart per kata with scored sessions: each session's official score (dots, in
    order) and the best so far (dashed)."""
    figures = []
    for r in rows:
        if not r.per_session:
            continue
        possible = r.kata.points or 1
        pcts = [100 * pts / possible for _, pts in r.per_session]
        left, top, w, h = 44, 14, 236, 84
        step = w / max(1, len(pcts) - 1) if len(pcts) > 1 else 0
        xs = [left + (i * step if len(pcts) > 1 else w / 2) for i in range(len(pcts))]

        best_so_far = [max(pcts[: i + 1]) for i in range(len(pcts))]
        body = _percent_axes(left, top, w, h)
        body += _line([(x, top + h - h * p / 100) for x, p in zip(xs, best_so_far, strict=True)], "#9ca3af",
                      dashed=True)
        body += _line([(x, top + h - h * p / 100) for x, p in zip(xs, pcts, strict=True)], COLOURS[0])
        body += [_text(x, top + h + 16, f"S{sid}", "middle", "axis") for x, (sid, _) in zip(xs, r.per_session, strict=True)]
        svg = _svg(300, 134, body, f"{r.kata.slug}: score per session")
        figures.append(f'<figure class="chart small"><figcaption><b>{escape(r.kata.slug)}</b> best '
                       f'{r.best:g}/{possible:g}</figcaption>{svg}</figure>')
    if not figures:
        return _empty("No kata scored in a session yet: start one, submit, and its score shows here.")
    return "".join(figures)


def mock_scores(series, hist) -> str:
    """One chart per series of mock assessments: every session of each exam, in the order they
    were taken (x), by its score in percent (y); the legend gives each exam's best."""
    figures = []
    for row in series:
        names = [b.exam.name for b in row]
        runs = [h for h in hist if h.session.kind == "exam" and h.session.name in names]
        left, top, w, h = 44, 14, 560, 150
        body = _percent_axes(left, top, w, h)
        step = w / max(1, len(runs) - 1) if len(runs) > 1 else 0
        for i, b in enumerate(row):
            colour = COLOURS[i % len(COLOURS)]
            pts = [(left + (n * step if len(runs) > 1 else w / 2),
                    top + h - h * (100 * r.points_earned / (r.points_possible or 1)) / 100)
                   for n, r in enumerate(runs) if r.session.name == b.exam.name]
            if pts:
                body += _line(pts, colour)
            best = f"{100 * b.best / (b.points_possible or 1):.0f}%" if b.best is not None else "not taken"
            lx = left + w + 18
            body.append(f'<rect x="{lx}" y="{top + 18 * i}" width="10" height="10" fill="{colour}"/>')
            body.append(_text(lx + 16, top + 18 * i + 9, f"{b.exam.name}: best {best} ({b.sessions})"))
        body += [_text(left + (n * step if len(runs) > 1 else w / 2), top + h + 16, f"S{r.session.id}", "middle",
                       "axis") for n, r in enumerate(runs)]
        svg = _svg(900, 190, body, "mock assessments: score per attempt")
        figures.append(f'<figure class="chart wide"><figcaption>{escape(", ".join(names))}</figcaption>{svg}</figure>')
    if not figures:
        return _empty("No series of mock assessments in this workbook.")
    return "".join(figures)


def level_minutes(hist, last: int = 12) -> str:
    """The minutes each level took to pass (from the previous level's pass, or the session's
    start), one stacked bar per session and kata, the newest `last` of them."""
    bars = []
    for h in hist:
        for slug, splits in h.splits.items():
            if splits:
                spans, before = [], 0.0
                for lv, at in sorted(splits.items()):
                    spans.append((lv, (at - before) / 60))
                    before = at
                bars.append((f"S{h.session.id} {slug}", spans))
    bars = bars[-last:]
    if not bars:
        return _empty("No level passed in a session yet.")
    longest = max(sum(m for _, m in spans) for _, spans in bars) or 1
    left, top, w, row = 230, 10, 560, 26
    body = []
    for i, (label, spans) in enumerate(bars):
        y = top + i * row
        body.append(_text(left - 8, y + 15, label, "end"))
        x = float(left)
        for lv, minutes in spans:
            width = max(2.0, w * minutes / longest)
            body.append(f'<rect x="{x:.1f}" y="{y + 3}" width="{width:.1f}" height="{row - 8}" '
                        f'fill="{COLOURS[(lv - 1) % len(COLOURS)]}"><title>level {lv}: {minutes:.1f} min</title></rect>')
            if width > 52:
                body.append(_text(x + 5, y + 15, f"L{lv} {minutes:.1f}m", cls="in"))
            x += width
        body.append(_text(x + 6, y + 15, f"{sum(m for _, m in spans):.1f} min", cls="axis"))
    height = top + len(bars) * row + 8
    svg = _svg(900, height, body, "minutes per level")
    return f'<figure class="chart wide">{svg}</figure>'
