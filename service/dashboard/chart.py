"""The path chart: each file's [min, max] for one Variant path, drawn as SVG on the server.

Files go along the x axis (in the order given), values up the y axis. Bounds become positions:

* numbers (integers, decimals, floats, booleans) as themselves;
* dates, times and timestamps as their integer encoding (days, microseconds, nanoseconds), with
  tick labels formatted back into dates and times;
* strings, blobs and uuids by their ordinal rank among all the bounds drawn (the axis then says
  "rank", with a few bound values as tick labels).

Numbers go on a symmetric log scale (``sign(x)·log10(1 + |x|)``, so zero and negatives keep
their place) when one file's range dwarfs the others (:func:`use_log_scale`). Tick labels of one
axis share one format: the same decimals, thousands separators, scientific notation for all or
none; dates and times with the unit of their step. "UTC" is written only for zoned timestamps.

Infinite bounds (float ±inf, DuckDB's date and timestamp infinities) are pinned to the edge of the
plot. A file with values but an unknown bound is drawn to the edge on that side, hatched (pruning
can never skip it on that side); a file whose path holds only nulls gets a grey mark on the
baseline. Each bar has a ``<title>`` (tooltip) and, for small charts, links to its file's page;
the bars are one tab stop (roving ``tabindex``: the first bar is tabbable, ``static/dashboard.js``
moves focus between them with the arrow keys).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

# The point-lookup estimate shown beside the chart is computed (and cached) by the catalog; its
# rules are tested with the chart's.
from service.catalog.estimates import point_keep_ratio as point_keep_ratio
from service.values import (
    DATE_INFINITY,
    DATE_NEG_INFINITY,
    FLOAT_KINDS,
    TS_INFINITY,
    TS_NEG_INFINITY,
    Bound,
    Kind,
    ShreddedType,
    format_bound,
    parse_bound,
)

WIDTH = 960
HEIGHT = 380
MARGIN_LEFT = 150
MARGIN_RIGHT = 16
MARGIN_TOP = 16
MARGIN_BOTTOM = 48
#: Bars are linked to their file's page up to this many files (links weigh on big charts).
LINK_LIMIT = 300

_TEMPORAL = {Kind.DATE, Kind.TIME, Kind.TIMESTAMP, Kind.TIMESTAMPTZ, Kind.TIMESTAMP_NS, Kind.TIMESTAMPTZ_NS}
_ORDINAL = {Kind.VARCHAR, Kind.BLOB, Kind.UUID}


@dataclass(frozen=True, slots=True)
class ChartFile:
    path: str
    value_count: int
    min_text: str | None
    max_text: str | None
    href: str | None = None


@dataclass(frozen=True, slots=True)
class Chart:
    svg: Markup
    drawn: int
    #: Files drawn with values and both bounds known / with an unknown bound / with no values.
    known: int
    unknown: int
    no_values: int
    axis: str
    #: The vertical axis alone (ticks and label, on the page's background), pinned at the left of
    #: the chart's scroll box on screens narrower than the chart, so it never scrolls away.
    axis_svg: Markup
    log_scale: bool = False


def _float_infinity(b: Bound) -> float | None:
    return b if isinstance(b, float) and math.isinf(b) else None


_DATE_INFINITIES: dict[Bound, float] = {DATE_INFINITY: math.inf, DATE_NEG_INFINITY: -math.inf}
_TS_INFINITIES: dict[Bound, float] = {TS_INFINITY: math.inf, TS_NEG_INFINITY: -math.inf}


def _infinity_test(t: ShreddedType) -> Callable[[Bound], float | None] | None:
    """The position (±inf) of a bound of ``t`` that is an infinity (float ±inf, DuckDB's date and
    timestamp infinities), None for a finite one; or None for a type that has none."""
    if t.kind in FLOAT_KINDS:
        return _float_infinity
    if t.kind is Kind.DATE:
        return _DATE_INFINITIES.get
    if t.kind in _TEMPORAL and t.kind is not Kind.TIME:
        return _TS_INFINITIES.get
    return None


def nice_ticks(lo: float, hi: float, target: int = 6) -> list[float]:
    """Round tick values (1, 2, 5 times a power of ten) covering [lo, hi]."""
    span = hi - lo
    if not math.isfinite(span) or span <= 0:
        return [lo]
    raw = span / max(1, target)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw)
    first = math.ceil(lo / step) * step
    out: list[float] = []
    x = first
    while x <= hi + step * 1e-9 and len(out) < 50:
        out.append(0.0 if abs(x) < step * 1e-9 else x)
        x += step
    return out


_SECOND_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200)
_DAY_STEPS = (1, 2, 7, 14, 28, 91, 182, 365)


def temporal_ticks(lo: float, hi: float, t: ShreddedType, target: int = 6) -> list[float]:
    """Tick values on a date/time axis at round steps (seconds, minutes, hours, days, weeks,
    roughly months and years), aligned to multiples of the step from the epoch (midnight UTC)."""
    if t.kind is Kind.DATE:
        per_day, steps = 1, [float(d) for d in _DAY_STEPS]
    else:
        per_second = 1_000_000_000 if t.kind in (Kind.TIMESTAMP_NS, Kind.TIMESTAMPTZ_NS) else 1_000_000
        per_day = 86_400 * per_second
        steps = [float(s * per_second) for s in _SECOND_STEPS] + [float(d * per_day) for d in _DAY_STEPS]
    span = hi - lo
    if not math.isfinite(span) or span <= 0:
        return [lo]
    raw = span / max(1, target)
    step = next((s for s in steps if s >= raw), None)
    if step is None:  # beyond a year per tick: whole multiples of 365 days
        years = nice_ticks(0, raw / (365 * per_day), 1)
        step = max(years[-1], 1.0) * 365 * per_day if years else 365.0 * per_day
        while step < raw:
            step *= 2
    first = math.ceil(lo / step) * step
    out: list[float] = []
    x = first
    while x <= hi and len(out) < 50:
        out.append(x)
        x += step
    return out


def format_ticks(values: Sequence[float], integral: bool) -> list[str]:
    """Labels of one numeric axis in one format: integers with thousands separators, or every
    label with the same number of decimals (the fewest that tell them apart exactly), or, beyond
    1e15 or below 1e-4, every label in scientific notation with the same mantissa digits."""
    if not values:
        return []
    big = max(abs(v) for v in values)
    if big >= 1e15 or 0 < big < 1e-4:
        labels = [f"{v:.0e}" for v in values]
        for d in range(0, 8):
            labels = [f"{v:.{d}e}" for v in values]
            if len(set(labels)) == len(labels):
                break
        return labels
    if integral:
        return [f"{round(v):,}" for v in values]
    labels = [f"{v:,.0f}" for v in values]
    for d in range(0, 10):
        labels = [f"{v:,.{d}f}" for v in values]
        if all(math.isclose(float(label.replace(",", "")), v, rel_tol=1e-9, abs_tol=1e-12) for label, v in zip(labels, values, strict=True)):
            break
    return labels


def _temporal_label(t: ShreddedType, x: float, step: float) -> str:
    """A date/time tick in the unit of the axis's step: dates for whole days, minutes for whole
    minutes, else seconds (every label of an axis has the same form)."""
    v = round(x)
    try:
        s = format_bound(t, v)
    except (ValueError, OverflowError):
        return ""
    per_second = 1_000_000_000 if t.kind in (Kind.TIMESTAMP_NS, Kind.TIMESTAMPTZ_NS) else 1_000_000
    if t.kind is Kind.DATE:
        return s
    s = s.split(".")[0].removesuffix("+00")
    minutes = step % (60 * per_second) == 0
    if t.kind is Kind.TIME:
        return s[:5] if minutes else s
    if step % (86_400 * per_second) == 0:
        return s.split(" ")[0]
    return s[:16] if minutes else s


#: :func:`use_log_scale`: the widest range is at least this many times the extent of all the
#: other files together...
LOG_DWARF = 50
#: ...and the log scale gives those others at least this many times their linear share of the axis.
LOG_GAIN = 3.0


def symlog(x: float) -> float:
    """The symmetric log: monotonic, 0 at 0, ``log10(1 + |x|)`` with the sign of ``x``."""
    return math.copysign(math.log10(1.0 + abs(x)), x)


def use_log_scale(intervals: Sequence[tuple[float, float]]) -> bool:
    """Whether a numeric axis drawing these finite ``(min, max)`` ranges should be logarithmic:
    one range is at least :data:`LOG_DWARF` times the extent of all the others together (which a
    linear axis squeezes into a sliver) and :func:`symlog` spreads them at least :data:`LOG_GAIN`
    times wider. Ranges of values close together far from zero gain nothing and stay linear."""
    if len(intervals) < 2:
        return False
    widest = max(range(len(intervals)), key=lambda i: intervals[i][1] - intervals[i][0])
    others = [iv for i, iv in enumerate(intervals) if i != widest]
    o_lo, o_hi = min(iv[0] for iv in others), max(iv[1] for iv in others)
    lo, hi = min(o_lo, intervals[widest][0]), max(o_hi, intervals[widest][1])
    if hi <= lo or intervals[widest][1] - intervals[widest][0] < LOG_DWARF * (o_hi - o_lo):
        return False
    linear = (o_hi - o_lo) / (hi - lo)
    logged = (symlog(o_hi) - symlog(o_lo)) / (symlog(hi) - symlog(lo))
    return logged > 0 and logged >= LOG_GAIN * linear


def log_ticks(lo: float, hi: float, target: int = 7) -> list[float]:
    """Tick values of a symlog axis covering the values [lo, hi]: 0 and ±powers of ten from 1 up
    (every k-th power when there are too many)."""
    top = max(abs(lo), abs(hi), 1.0)
    decades = range(0, math.floor(math.log10(top)) + 1)
    out = [0.0] if lo <= 0 <= hi else []
    out += [10.0**k for k in decades if lo <= 10.0**k <= hi]
    out += [-(10.0**k) for k in decades if lo <= -(10.0**k) <= hi]
    out.sort()
    every = max(1, math.ceil(len(out) / target))
    if every > 1:
        keep = {0.0} | {10.0**k for k in decades if k % every == 0} | {-(10.0**k) for k in decades if k % every == 0}
        out = [v for v in out if v in keep]
    return out


def _shorten(s: str, n: int = 20) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


@dataclass
class _Scale:
    lo: float
    hi: float
    top: float
    bottom: float

    def y(self, v: float) -> float:
        if self.hi == self.lo:
            return (self.top + self.bottom) / 2
        v = min(max(v, self.lo), self.hi)
        return self.bottom - (v - self.lo) / (self.hi - self.lo) * (self.bottom - self.top)


def _pinned_axis(ticks: Sequence[tuple[float, str]], axis: str, middle: float) -> Markup:
    """The chart's vertical axis as its own SVG, drawn exactly as in the chart (same coordinates,
    one CSS pixel per unit where it is shown): ``ticks`` as ``(y, text)``. Hidden from assistive
    technology, which reads the chart's own."""
    out = [
        f'<svg class="chart-axis" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {MARGIN_LEFT} {HEIGHT}" '
        f'width="{MARGIN_LEFT}" height="{HEIGHT}" aria-hidden="true" focusable="false">',
        f'<rect class="axis-bg" x="0" y="0" width="{MARGIN_LEFT}" height="{HEIGHT}"/>',
    ]
    out.extend(
        f'<text class="tick" x="{MARGIN_LEFT - 6}" y="{y + 4:.2f}" text-anchor="end">{escape(text)}</text>' for y, text in ticks
    )
    out.append(f'<text class="axis" transform="translate(14 {middle:.0f}) rotate(-90)" text-anchor="middle">{escape(axis)}</text>')
    out.append("</svg>")
    return Markup("".join(out))


@dataclass(frozen=True, slots=True)
class _Positions:
    """Each file's bounds parsed and placed in value space (see :func:`_positions`)."""

    parsed: list[tuple[ChartFile, Bound | None, Bound | None]]
    #: (min, max) per file in value space (None: no values).
    spans: list[tuple[float, float] | None]
    #: The known (both bounds) and finite spans, in file order, for the log-scale rule.
    finite_spans: list[tuple[float, float]]
    #: Value-space positions of the known, finite bounds (either side).
    finite: list[float]
    has_inf: bool
    #: The distinct bounds in order, for a type drawn by rank (empty otherwise).
    rank_values: list[Bound]


def _parse_bounds(t: ShreddedType, files: Sequence[ChartFile]) -> list[tuple[ChartFile, Bound | None, Bound | None]]:
    """Each file with its parsed bounds. Unparseable text (should not happen: the catalog
    validates) counts as unknown."""
    parsed: list[tuple[ChartFile, Bound | None, Bound | None]] = []
    for f in files:
        lo = hi = None
        if f.value_count > 0:
            try:
                lo = None if f.min_text is None else parse_bound(t, f.min_text)
                hi = None if f.max_text is None else parse_bound(t, f.max_text)
            except Exception:  # a corrupt row must not take the page down
                lo = hi = None
        parsed.append((f, lo, hi))
    return parsed


def _positions(t: ShreddedType, files: Sequence[ChartFile]) -> _Positions:
    """Each bound's value-space position, computed once, with no call per bound beyond the one
    conversion (a chart draws up to 500 files on every view of the page): a number as itself
    (every bound a numeric or temporal type parses to is a bool, int, float or Decimal: float()
    reads each), a string, blob or uuid as its rank; an infinity is ±inf and an unknown bound
    unbounded on its side."""
    parsed = _parse_bounds(t, files)
    to_pos: Callable[[Bound], float]
    rank_values: list[Bound] = []
    if t.kind in _ORDINAL:
        # Python's order is the type's value order (service.values.types).
        rank_values = sorted({v for _, a, b in parsed for v in (a, b) if v is not None})
        to_pos = {v: float(i) for i, v in enumerate(rank_values)}.__getitem__
    else:
        to_pos = float  # type: ignore[assignment]  # Bound holds uuid.UUID, but only ordinal kinds do
    infinite = _infinity_test(t)
    inf = math.inf
    spans: list[tuple[float, float] | None] = []
    finite_spans: list[tuple[float, float]] = []
    finite: list[float] = []
    has_inf = False
    for f, a, b in parsed:
        if f.value_count == 0:
            spans.append(None)
            continue
        if a is None:
            x_lo = -inf
        elif infinite is not None and (edge := infinite(a)) is not None:
            x_lo = edge
            has_inf = True
        else:
            x_lo = to_pos(a)
            finite.append(x_lo)
        if b is None:
            x_hi = inf
        elif infinite is not None and (edge := infinite(b)) is not None:
            x_hi = edge
            has_inf = True
        else:
            x_hi = to_pos(b)
            finite.append(x_hi)
        spans.append((x_lo, x_hi))
        if a is not None and b is not None and -inf < x_lo < inf and -inf < x_hi < inf:
            finite_spans.append((x_lo, x_hi))
    return _Positions(parsed, spans, finite_spans, finite, has_inf, rank_values)


def _value_range(drawn: Sequence[float], ordinal: bool, has_inf: bool) -> tuple[float, float]:
    """The y axis's [lo, hi] in drawn positions: the known, finite bounds padded by 4 % (and 4 %
    more for pinned infinities at both edges)."""
    lo_v, hi_v = (min(drawn), max(drawn)) if drawn else (0.0, 1.0)
    pad = (0.5 if ordinal else 1.0) if hi_v == lo_v else (hi_v - lo_v) * 0.04
    lo_v, hi_v = lo_v - pad, hi_v + pad
    if has_inf:
        pad = (hi_v - lo_v) * 0.04
        lo_v, hi_v = lo_v - pad, hi_v + pad
    return lo_v, hi_v


def _ticks(
    t: ShreddedType, pos: _Positions, log: bool, drawn: Sequence[float], lo_v: float, hi_v: float
) -> tuple[list[tuple[float, str]], str]:
    """The y axis's ticks as ``(drawn position, label)`` and the axis's name."""
    if t.kind in _ORDINAL:
        n = len(pos.rank_values)
        ticks: list[tuple[float, str]] = []
        if n:
            count = min(n, 6)
            idx = sorted({round(i * (n - 1) / max(1, count - 1)) for i in range(count)})
            ticks = [(float(i), _shorten(format_bound(t, pos.rank_values[i]))) for i in idx]
        return ticks, "rank among the bounds drawn"
    if log:
        # Tick values in value space, within the values drawn (not the padding around them),
        # placed through the same transform.
        inv = [math.copysign(10 ** abs(x) - 1, x) for x in ((min(drawn), max(drawn)) if drawn else (lo_v, hi_v))]
        vals = log_ticks(inv[0], inv[1])
        return list(zip((symlog(v) for v in vals), format_ticks(vals, True), strict=True)), "value (log scale)"
    integral = t.is_integer or t.kind in _TEMPORAL or t.kind is Kind.BOOLEAN
    vals = temporal_ticks(lo_v, hi_v, t) if t.kind in _TEMPORAL else nice_ticks(lo_v, hi_v)
    if integral:
        vals = [v for v in vals if float(v).is_integer()] or vals
    if t.kind in _TEMPORAL:
        step = vals[1] - vals[0] if len(vals) > 1 else 1.0
        axis = {Kind.DATE: "date", Kind.TIME: "time of day"}.get(t.kind, "timestamp")
        if t.kind in (Kind.TIMESTAMPTZ, Kind.TIMESTAMPTZ_NS):
            axis = "timestamp (UTC)"
        return [(v, _temporal_label(t, v, step)) for v in vals], axis
    if t.kind is Kind.BOOLEAN:
        return [(0.0, "false"), (1.0, "true")], "value"
    return list(zip(vals, format_ticks(vals, integral), strict=True)), "value"


@dataclass(frozen=True, slots=True)
class _Bars:
    parts: list[str]
    known: int
    unknown: int
    no_values: int


def _bars(pos: _Positions, draw: Callable[[float], float], lo_v: float, hi_v: float) -> _Bars:
    """One ``<rect>`` per file (linked to its page on small charts). What is the same for every
    bar is formatted once; the y coordinates are _Scale.y's arithmetic, in its order (so every
    coordinate is the same to the last bit), inlined."""
    plot_top, plot_bottom = MARGIN_TOP, HEIGHT - MARGIN_BOTTOM
    plot_left, plot_right = MARGIN_LEFT, WIDTH - MARGIN_RIGHT
    inf = math.inf
    n = len(pos.parsed)
    step = (plot_right - plot_left) / max(1, n)
    bar_w = min(24.0, max(step * 0.8, 0.6))
    centre = (step - bar_w) / 2
    width = f'" width="{bar_w:.2f}" height="'
    no_values_tail = f'" y="{plot_bottom - 3 - 2:.2f}" width="{max(bar_w, 2):.2f}" height="4"'
    flat = hi_v == lo_v  # only for bounds too large for the padding to move them
    middle = (plot_top + plot_bottom) / 2
    span_v, height = hi_v - lo_v, plot_bottom - plot_top

    def y_of(x: float) -> float:
        """The y coordinate of a value-space position (infinities pinned to the plot's edges)."""
        if x == inf or x == -inf:
            return plot_bottom if x < 0 else plot_top
        if flat:
            return middle
        v = min(max(draw(x), lo_v), hi_v)
        return plot_bottom - (v - lo_v) / span_v * height

    parts: list[str] = []
    known = unknown = no_values = 0
    link = n <= LINK_LIMIT
    for i, (f, a, b) in enumerate(pos.parsed):
        x = f"{plot_left + i * step + centre:.2f}"
        sp = pos.spans[i]
        if sp is None:
            no_values += 1
            label = f"{f.path}: no values (only nulls)"
            shape = f'<rect class="novalues" x="{x}{no_values_tail}'
        else:
            y_max = y_of(sp[1]) if b is not None else plot_top
            y_min = y_of(sp[0]) if a is not None else plot_bottom
            lo_s = "unknown" if f.min_text is None else f.min_text
            hi_s = "unknown" if f.max_text is None else f.max_text
            label = f"{f.path}: min {lo_s}, max {hi_s}, {f.value_count:,} values"
            if y_min - y_max < 2.0:  # a point (min = max) or nearly: a 2-unit tall mark
                y0, h = (y_min + y_max) / 2 - 1.0, 2.0
            else:
                y0, h = y_max, y_min - y_max
            if a is not None and b is not None:
                known += 1
                cls = "bar"
            else:
                unknown += 1
                cls = "bar unknown"
            shape = f'<rect class="{cls}" x="{x}" y="{y0:.2f}{width}{h:.2f}"'
        # Roving tabindex: the first bar is the chart's one tab stop (dashboard.js moves it). The
        # <title> is the tooltip and the bar's (or its link's) accessible name.
        tab = "0" if i == 0 else "-1"
        if link and f.href:
            parts.append(
                f'<a href="{escape(f.href)}" data-bar="{i}" tabindex="{tab}"><title>{escape(label)}</title>{shape}/></a>'
            )
        else:
            parts.append(f'{shape} data-bar="{i}" tabindex="{tab}" role="img"><title>{escape(label)}</title></rect>')
    return _Bars(parts, known, unknown, no_values)


def _svg(
    bars: _Bars, ticks: Sequence[tuple[float, str]], scale: _Scale, axis: str, *, x_label: str, title: str, log: bool
) -> str:
    """The chart's SVG: the plot, its grid and ticks, the bars and both axis labels."""
    n = len(bars.parts)
    plot_top, plot_bottom = MARGIN_TOP, HEIGHT - MARGIN_BOTTOM
    plot_left, plot_right = MARGIN_LEFT, WIDTH - MARGIN_RIGHT
    scale_attr = ' data-scale="log"' if log else ""
    svg: list[str] = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="group" aria-labelledby="chart-title chart-desc" data-files="{n}"{scale_attr}>',
        f'<title id="chart-title">{escape(title)}</title>',
        f'<desc id="chart-desc">{n} files along the x axis ({escape(x_label)}); each bar spans the '
        f"file's minimum to maximum on the y axis ({escape(axis)}). The bars are one tab stop: "
        "arrow keys move between them.</desc>",
        "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
        "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fde4c3\"/>"
        "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#d9822b\" stroke-width=\"3\"/></pattern></defs>",
        f'<rect class="plot" x="{plot_left}" y="{plot_top}" width="{plot_right - plot_left}" '
        f'height="{plot_bottom - plot_top}"/>',
    ]
    for v, text in ticks:
        y = scale.y(v)
        svg.append(
            f'<line class="grid" x1="{plot_left}" x2="{plot_right}" y1="{y:.2f}" y2="{y:.2f}"/>'
            f'<text class="tick" x="{plot_left - 6}" y="{y + 4:.2f}" text-anchor="end">{escape(text)}</text>'
        )
    svg.append('<g class="bars">')
    svg.extend(bars.parts)
    svg.append("</g>")
    svg.append(
        f'<text class="axis" x="{(plot_left + plot_right) / 2:.0f}" y="{HEIGHT - 14}" text-anchor="middle">'
        f"{escape(x_label)} →</text>"
    )
    svg.append(
        f'<text class="axis" transform="translate(14 {(plot_top + plot_bottom) / 2:.0f}) rotate(-90)" '
        f'text-anchor="middle">{escape(axis)}</text>'
    )
    svg.append("</svg>")
    return "".join(svg)


def render_chart(
    t: ShreddedType,
    files: Sequence[ChartFile],
    *,
    x_label: str,
    title: str,
) -> Chart:
    """The SVG chart of ``files`` (already capped and ordered by the caller), one bar each:
    bounds placed in value space, the axis's range and ticks, the bars, then the SVG."""
    pos = _positions(t, files)
    ordinal = t.kind in _ORDINAL
    numeric = not ordinal and t.kind not in _TEMPORAL and t.kind is not Kind.BOOLEAN
    log = numeric and use_log_scale(pos.finite_spans)
    draw: Callable[[float], float] = symlog if log else float
    drawn = [symlog(x) for x in pos.finite] if log else pos.finite  # drawn positions of known, finite bounds
    lo_v, hi_v = _value_range(drawn, ordinal, pos.has_inf)
    scale = _Scale(lo_v, hi_v, MARGIN_TOP, HEIGHT - MARGIN_BOTTOM)
    ticks, axis = _ticks(t, pos, log, drawn, lo_v, hi_v)
    bars = _bars(pos, draw, lo_v, hi_v)
    return Chart(
        svg=Markup(_svg(bars, ticks, scale, axis, x_label=x_label, title=title, log=log)),
        axis_svg=_pinned_axis([(scale.y(v), text) for v, text in ticks], axis, (MARGIN_TOP + HEIGHT - MARGIN_BOTTOM) / 2),
        drawn=len(bars.parts),
        known=bars.known,
        unknown=bars.unknown,
        no_values=bars.no_values,
        axis=axis,
        log_scale=log,
    )
