"""The range chart's rules as plain functions: one tick format per axis, when the scale goes
logarithmic, "UTC" only for zoned timestamps, the point-lookup estimate with files of other
types, one tab stop for the bars; and the playground's click-to-insert list."""

from __future__ import annotations

import math
import re

import pytest

from service.catalog import PathCoverage
from service.dashboard.chart import (
    ChartFile,
    format_ticks,
    log_ticks,
    point_keep_ratio,
    render_chart,
    symlog,
    use_log_scale,
)
from service.dashboard.pages.path import as_variant_path
from service.dashboard.pages.playground import _caret, insert_items
from service.values import DATE_NEG_INFINITY, ShreddedType

INT64 = ShreddedType.parse("int64")


@pytest.mark.parametrize(
    ("values", "integral", "labels"),
    [
        ([0.0, 0.5, 1.0, 1.5], False, ["0.0", "0.5", "1.0", "1.5"]),
        ([0.0, 2.5, 5.0, 7.5, 10.0], False, ["0.0", "2.5", "5.0", "7.5", "10.0"]),
        ([0.0, 250000.0, 500000.0], False, ["0", "250,000", "500,000"]),
        ([1000.0, 2000.0], True, ["1,000", "2,000"]),
        ([0.0, 5e15, 1e16], True, ["0e+00", "5e+15", "1e+16"]),
        ([1e-5, 2e-5, 3e-5], False, ["1e-05", "2e-05", "3e-05"]),
        ([0.01, 0.02, 0.03], False, ["0.01", "0.02", "0.03"]),
    ],
)
def test_one_tick_format_per_axis(values: list[float], integral: bool, labels: list[str]) -> None:
    assert format_ticks(values, integral) == labels


def test_log_scale_rule() -> None:
    small = [(10.0 * i, 10.0 * i + 9) for i in range(20)]
    assert use_log_scale([*small, (0.0, 1e9)])  # one range dwarfs all the others
    assert not use_log_scale(small)  # comparable ranges
    assert not use_log_scale([(0.0, 10.0), (0.0, 11.0)])
    # Values close together far from zero: a log scale would not spread them, so it stays linear.
    assert not use_log_scale([(1e9 + i, 1e9 + i + 1) for i in range(10)] + [(1e9, 1e9 + 1e6)])
    assert not use_log_scale([(5.0, 5.0), (0.0, 1e9)])  # the others are one point: nothing to spread
    assert not use_log_scale([(0.0, 1e9)])
    assert symlog(0) == 0 and symlog(-9) == -1 and symlog(99) == pytest.approx(2)
    assert log_ticks(0, 1e9) == [0.0, 1.0, 100.0, 10_000.0, 1_000_000.0, 100_000_000.0]
    assert log_ticks(-100, 100) == [-100.0, -10.0, -1.0, 0.0, 1.0, 10.0, 100.0]


def test_log_scale_only_for_numbers() -> None:
    files = [ChartFile(f"f{i}", 10, str(10 * i), str(10 * i + 9)) for i in range(20)] + [ChartFile("big", 10, "0", "1000000000")]
    c = render_chart(INT64, files, x_label="x", title="t")
    assert c.log_scale and 'data-scale="log"' in c.svg and c.axis == "value (log scale)"
    date = ShreddedType.parse("date")
    d = render_chart(date, [ChartFile("a", 1, "2024-01-01", "2024-01-02"), ChartFile("b", 1, "1970-01-01", "2200-01-01")], x_label="x", title="t")
    assert not d.log_scale and d.axis == "date"


def test_utc_only_for_zoned_timestamps() -> None:
    files = [ChartFile("a", 1, "2024-01-01 00:00:00", "2024-01-01 05:00:00")]
    zoned = render_chart(ShreddedType.parse("timestamptz"), [ChartFile("a", 1, "2024-01-01 00:00:00+00", "2024-01-01 05:00:00+00")], x_label="x", title="t")
    plain = render_chart(ShreddedType.parse("timestamp"), files, x_label="x", title="t")
    assert zoned.axis == "timestamp (UTC)" and plain.axis == "timestamp"
    assert "UTC" not in plain.svg
    labels = re.findall(r'<text class="tick"[^>]*>([^<]+)</text>', plain.svg)
    assert len({len(x) for x in labels}) == 1 and all(re.fullmatch(r"2024-01-01 \d\d:\d\d", x) for x in labels), labels


def test_point_lookup_estimate_counts_files_kept_whatever_the_value() -> None:
    lows, highs = [0, 10, 20, 30], [9, 19, 29, 39]  # disjoint: each probe keeps its own file
    assert point_keep_ratio(INT64, lows, highs, 4) == pytest.approx(1 / 4)
    # Two more files store the path as another type: every probe keeps them too.
    assert point_keep_ratio(INT64, lows, highs, 4, always_kept=2) == pytest.approx(3 / 6)


def test_point_lookup_estimate_reads_keys_as_pruning_does() -> None:
    # a [0, 9], b [?, 5] (no min key: unbounded below, as pruning treats it), d [5, 5]. Probes at
    # every finite bound: 0 keeps a, b; 5 (three times) a, b, d; 9 keeps a.
    assert point_keep_ratio(INT64, [0, 5], [5, 5, 9], 3) == pytest.approx((2 + 3 + 3 + 3 + 1) / (5 * 3))
    # Infinite bounds are not probed; a range to infinity holds every probe.
    assert point_keep_ratio(ShreddedType.parse("float64"), [-math.inf, 1.0], [2.0, math.inf], 2) == pytest.approx(1.0)
    # Strings as their keys (UTF-8 bytes, the type's order): disjoint ranges, one file of two.
    assert point_keep_ratio(ShreddedType.parse("varchar"), [b"apple", b"lemon"], [b"kiwi", b"zebra"], 2) == pytest.approx(0.5)
    # DuckDB's date infinities are not probed either: 0 and 10 (twice) each keep both files.
    date = ShreddedType.parse("date")
    assert point_keep_ratio(date, [DATE_NEG_INFINITY, 0], [10, 10], 2) == pytest.approx(1.0)
    assert point_keep_ratio(INT64, [], [], 2) == 1.0  # no bound known: every lookup keeps all
    assert point_keep_ratio(INT64, [], [], 0) is None


@pytest.mark.parametrize("seed", range(20))
def test_point_lookup_estimate_matches_probing_every_file(seed: int) -> None:
    """Against the definition, file by file: ties, unknown sides and infinities included."""
    import random

    rng = random.Random(seed)
    ranges: list[tuple[float | None, float | None]] = []
    # Few values (ties) or many (distinct keys); unknown and infinite sides in some runs only.
    pool = range(10) if seed % 2 else range(10**6)
    edges = seed % 4 < 2
    for _ in range(rng.randint(1, 40)):
        lo = rng.choice([None, -math.inf]) if edges and rng.random() < 0.2 else float(rng.choice(pool))
        hi = rng.choice([None, math.inf]) if edges and rng.random() < 0.2 else None
        if hi is None and not (edges and rng.random() < 0.5):
            hi = (lo if lo is not None and math.isfinite(lo) else 0.0) + rng.choice(pool)
        ranges.append((lo, hi))
    probes = [x for r in ranges for x in r if x is not None and math.isfinite(x)]
    lows = sorted(lo for lo, _ in ranges if lo is not None)
    highs = sorted(hi for _, hi in ranges if hi is not None)
    got = point_keep_ratio(ShreddedType.parse("float64"), lows, highs, len(ranges), always_kept=seed % 3)
    if not probes:
        assert got == 1.0
        return

    def holds(r: tuple[float | None, float | None], x: float) -> bool:
        return (r[0] is None or r[0] <= x) and (r[1] is None or x <= r[1])

    n, a = len(ranges), seed % 3
    expected = sum((sum(holds(r, x) for r in ranges) + a) / (n + a) for x in probes) / len(probes)
    assert got == pytest.approx(expected)


def test_bars_are_one_tab_stop() -> None:
    linked = [ChartFile(f"f{i}", 10, str(i), str(i + 1), href=f"/file/{i}") for i in range(5)]
    c = render_chart(INT64, linked, x_label="x", title="t")
    assert c.svg.count('tabindex="0"') == 1 and c.svg.count('tabindex="-1"') == 4
    assert c.svg.count("data-bar=") == 5 and '<a href="/file/0" data-bar="0" tabindex="0"' in c.svg
    many = [ChartFile(f"f{i}", 10, str(i), str(i + 1), href=f"/file/{i}") for i in range(400)]  # unlinked beyond 300
    m = render_chart(INT64, many, x_label="x", title="t")
    assert m.svg.count('tabindex="0"') == 1 and m.svg.count("<a ") == 0
    assert re.search(r'<rect class="bar" [^>]* data-bar="0" tabindex="0" role="img"><title>f0: min 0, max 1, 10 values</title></rect>', m.svg)
    assert '<a href="/file/0" data-bar="0" tabindex="0"><title>f0: min 0, max 1, 10 values</title><rect ' in c.svg


def test_insert_list_takes_any_columns() -> None:
    cov = [
        PathCoverage("v", '"user"."name"', 5, 5, (("varchar", 4), ("int64", 1))),
        PathCoverage("v", '"tags".element', 5, 5, (("varchar", 5),)),  # an element: no variant_get spelling
        PathCoverage("v", '"n"', 5, 2, (("decimal(10,2)", 2),)),
    ]
    items = insert_items([("v", "Variant column"), ("event_date", "partition column")], cov)
    assert [(i.label, i.text) for i in items] == [
        ("v", "v"),
        ("event_date", "event_date"),
        ("v $.user.name", "variant_get(v, '$.user.name', 'string')"),
        ("v $.n", "variant_get(v, '$.n', 'decimal(10,2)')"),
    ]
    assert items[2].note == "varchar in 4 of 5 files"
    one = insert_items([("v", "Variant column")], cov[:1])
    assert one[1].label == "$.user.name"  # one column: the path alone


def test_caret_and_path_spelling() -> None:
    assert _caret("a = 1\nAND b =", 13) == ("AND b =", " " * 7)
    assert _caret("x =", 3) == ("x =", "   ")
    assert _caret("x", None) is None and _caret("x", 5) is None
    assert as_variant_path("$.user.name") == '"user"."name"'
    assert as_variant_path('"user"."name"') == '"user"."name"'


def test_bounds_the_padding_cannot_separate_are_drawn_mid_height() -> None:
    """1e18 - 1 == 1e18 in floating point: an axis of one such value has no extent at all; its
    marks sit at mid-height (the plot spans y 16 to 332) rather than dividing by zero."""
    files = [ChartFile("a", 1, "1e+18", "1e+18"), ChartFile("b", 1, "1e+18", "1e+18")]
    svg = render_chart(ShreddedType.parse("float64"), files, x_label="x", title="t").svg
    assert re.findall(r'<rect class="bar"[^>]* y="([\d.]+)"[^>]* height="([\d.]+)"', svg) == [("173.00", "2.00")] * 2
