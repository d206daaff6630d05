"""A table's files, rows and bytes per snapshot, drawn as three small step charts (SVG, drawn on
the server). Each chart scales to its box's width (a ``viewBox`` and ``width: 100%``), so it fits
a phone as a desktop; each point is a link to what its snapshot added and removed, with a
``<title>`` giving its values."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from markupsafe import Markup, escape

from service.dashboard import format as fmt

if TYPE_CHECKING:
    from service.catalog.history import HistoryPoint

WIDTH = 600
HEIGHT = 150
LEFT = 8
RIGHT = 8
TOP = 36
BOTTOM = 8

#: (attribute, heading, value in words) of each chart.
SERIES: tuple[tuple[str, str, Callable[[int], str]], ...] = (
    ("files", "Live files", fmt.num),
    ("rows", "Rows", fmt.num),
    ("bytes", "Bytes", fmt.human_bytes),
)


def _points(values: Sequence[int]) -> list[tuple[float, float]]:
    """``(x, y)`` of each value: evenly spaced, scaled from 0 to the largest."""
    top = max(max(values, default=0), 1)
    n = len(values)
    step = (WIDTH - LEFT - RIGHT) / max(1, n - 1)
    return [
        (LEFT + (i * step if n > 1 else (WIDTH - LEFT - RIGHT) / 2), HEIGHT - BOTTOM - v / top * (HEIGHT - TOP - BOTTOM))
        for i, v in enumerate(values)
    ]


def history_charts(points: Sequence[HistoryPoint], href: Callable[[int], str]) -> list[Markup]:
    """One SVG per series of :data:`SERIES` over ``points`` (oldest first); ``href(snapshot)``: the
    link of a snapshot's point."""
    out = []
    for attr, heading, words in SERIES:
        values = [int(getattr(p, attr)) for p in points]
        xy = _points(values)
        line = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
        last = words(values[-1]) if values else "none"
        parts = [
            f'<svg class="history-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
            f'role="group" aria-label="{escape(heading)} per snapshot, now {escape(last)}" data-series="{attr}">',
            f'<text class="tick" x="{LEFT}" y="22">{escape(heading)}: {escape(last)} now '
            f"(max {escape(words(max(values, default=0)))})</text>",
            f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{HEIGHT - BOTTOM}" y2="{HEIGHT - BOTTOM}"/>',
            f'<polyline class="history-line" points="{line}"/>',
        ]
        for p, v, (x, y) in zip(points, values, xy, strict=True):
            when = fmt.when(p.time) if p.time is not None else "time unknown"
            label = f"snapshot {p.snapshot_id} ({when}): {words(v)}; +{p.added:,} / -{p.removed:,} files"
            parts.append(
                f'<a href="{escape(href(p.snapshot_id))}" data-snapshot="{p.snapshot_id}"><title>{escape(label)}</title>'
                f'<circle class="history-point" cx="{x:.1f}" cy="{y:.1f}" r="6"/></a>'
            )
        parts.append("</svg>")
        out.append(Markup("".join(parts)))
    return out
