"""The typed bound model: DuckLake rendering, parsing back, validation, the 256-byte rule."""

from __future__ import annotations

import math
import random
import uuid
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.errors import InvalidStatsError
from service.values import (
    DATE_INFINITY,
    DATE_NEG_INFINITY,
    TS_INFINITY,
    TS_NEG_INFINITY,
    Kind,
    ShreddedType,
    check_bound,
    civil_from_days,
    decimal_from_unscaled,
    format_bound,
    parse_bound,
    to_float32,
    truncate_lower,
    truncate_upper,
)

T = ShreddedType


@pytest.mark.parametrize(
    ("t", "v", "s"),
    [
        (T(Kind.BOOLEAN), True, "1"),
        (T(Kind.INT64), -(2**63), "-9223372036854775808"),
        (T(Kind.FLOAT64), 1e16, "1e+16"),
        (T(Kind.FLOAT64), 1e-5, "1e-05"),
        (T(Kind.FLOAT64), -0.0, "-0.0"),
        (T(Kind.FLOAT64), math.inf, "inf"),
        (T(Kind.FLOAT32), to_float32(1 / 3), "0.33333334"),
        (T(Kind.FLOAT32), to_float32(3.4028235e38), "3.4028235e+38"),
        (T.parse("decimal(5,3)"), Decimal("-0.05"), "-0.050"),
        (T.parse("decimal(3,3)"), Decimal("-0.999"), "-.999"),
        (T.parse("decimal(38,10)"), Decimal("1234567890123456789012345678.0123456789"), "1234567890123456789012345678.0123456789"),
        (T.parse("decimal(38,38)"), Decimal("0.5"), "." + "5" + "0" * 37),
        (T(Kind.DATE), -735160, "0044-03-15 (BC)"),
        (T(Kind.DATE), 2**31 - 1, "infinity"),
        (T(Kind.DATE), 2932897, "10000-01-01"),
        (T(Kind.TIME), 86_400_000_000, "24:00:00"),
        (T(Kind.TIME), 45_296_120_000, "12:34:56.12"),
        (T(Kind.TIMESTAMP), 1704153600000000, "2024-01-02 00:00:00"),
        (T(Kind.TIMESTAMPTZ), 1704157445000000, "2024-01-02 01:04:05+00"),
        (T(Kind.TIMESTAMP_NS), 1704164645123456789, "2024-01-02 03:04:05.123456789"),
        (T(Kind.UUID), uuid.UUID("01234567-89ab-cdef-0123-456789abcdef"), "01234567-89ab-cdef-0123-456789abcdef"),
        (T(Kind.BLOB), b"\xff\x80", "FF80"),
        (T(Kind.VARCHAR), "日本", "日本"),
    ],
)
def test_ducklake_strings(t: ShreddedType, v: object, s: str) -> None:
    assert format_bound(t, v) == s  # type: ignore[arg-type]
    assert parse_bound(t, s) == v


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.tuples(st.just(T(Kind.INT64)), st.integers(-(2**63), 2**63 - 1)),
        st.tuples(st.just(T(Kind.FLOAT64)), st.floats(allow_nan=False)),
        st.tuples(st.just(T(Kind.FLOAT32)), st.floats(allow_nan=False, width=32)),
        st.tuples(st.just(T(Kind.DATE)), st.integers(-(2**31) + 1, 2**31 - 1)),
        st.tuples(st.just(T(Kind.TIMESTAMP)), st.integers(-(2**62), 2**62)),
        st.tuples(st.just(T(Kind.TIMESTAMPTZ_NS)), st.integers(-(2**62), 2**62)),
        st.tuples(st.just(T(Kind.TIME)), st.integers(0, 86_400_000_000)),
        st.tuples(st.just(T.parse("decimal(38,9)")), st.integers(-(10**38) + 1, 10**38 - 1).map(lambda n: decimal_from_unscaled(n, 9))),
        st.tuples(st.just(T(Kind.VARCHAR)), st.text()),
        st.tuples(st.just(T(Kind.BLOB)), st.binary()),
        st.tuples(st.just(T(Kind.UUID)), st.uuids()),
    )
)
def test_round_trip(tv: tuple[ShreddedType, object]) -> None:
    t, v = tv
    s = format_bound(t, v)  # type: ignore[arg-type]
    assert parse_bound(t, s) == v


def test_invalid_bounds_are_typed_errors() -> None:
    for t, s in [
        (T(Kind.INT8), "300"),
        (T(Kind.FLOAT64), "nan"),
        (T(Kind.DATE), "2024-02-30"),
        (T.parse("decimal(4,2)"), "123.456"),
        (T(Kind.UUID), "not-a-uuid"),
        (T(Kind.BLOB), "abc"),
        (T(Kind.BOOLEAN), "true"),
    ]:
        with pytest.raises(InvalidStatsError):
            parse_bound(t, s)
    with pytest.raises(InvalidStatsError):
        check_bound(T(Kind.INT64), True)
    with pytest.raises(InvalidStatsError):
        ShreddedType.parse("decimal(40,2)")
    with pytest.raises(InvalidStatsError):
        ShreddedType.parse("uint32")


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=0, max_size=400), st.text(min_size=0, max_size=400))
def test_truncated_bounds_stay_bounds(a: str, b: str) -> None:
    t = T(Kind.VARCHAR)
    lo_v, hi_v = min(a, b), max(a, b)
    lo, hi = truncate_lower(t, lo_v), truncate_upper(t, hi_v)
    assert len(lo.encode()) <= 256 and lo <= lo_v  # type: ignore[union-attr, operator]
    if hi is not None:
        assert len(hi.encode()) <= 256 and hi >= hi_v  # type: ignore[union-attr, operator]


def _reference_date(days: int) -> str:
    # Independent of the rendering under test: only the calendar and DuckDB's BC/infinity rules.
    if days == DATE_INFINITY:
        return "infinity"
    if days == DATE_NEG_INFINITY:
        return "-infinity"
    y, m, d = civil_from_days(days)
    return f"{1 - y:04d}-{m:02d}-{d:02d} (BC)" if y <= 0 else f"{y:04d}-{m:02d}-{d:02d}"


def _reference_timestamp(units: int, per_second: int, digits: int, tz: bool) -> str:
    if units == TS_INFINITY:
        return "infinity"
    if units == TS_NEG_INFINITY:
        return "-infinity"
    days, rem = divmod(units, 86_400 * per_second)
    secs, frac = divmod(rem, per_second)
    h, r = divmod(secs, 3600)
    mi, sec = divmod(r, 60)
    f = ("." + f"{frac:0{digits}d}".rstrip("0")) if frac else ""
    return f"{_reference_date(days)} {h:02d}:{mi:02d}:{sec:02d}{f}" + ("+00" if tz else "")


# Python's date/datetime render the common range fast; the edges of that range (years 1 and
# 9999) and beyond must render exactly as the general calendar rule does.
_DAY_EDGES = [-719163, -719162, -719161, 0, 2932895, 2932896, 2932897, DATE_INFINITY, DATE_NEG_INFINITY]
_US_EDGES = [
    -62135596800000001, -62135596800000000, -62135596799999999, 0, 1,
    253402300799999999, 253402300800000000, 253402300800000001, TS_INFINITY, TS_NEG_INFINITY,
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.sampled_from(_DAY_EDGES), st.integers(-(2**31) + 1, 2**31 - 1)))
def test_date_rendering_matches_the_calendar_rule(days: int) -> None:
    assert format_bound(T(Kind.DATE), days) == _reference_date(days)


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from([Kind.TIMESTAMP, Kind.TIMESTAMPTZ, Kind.TIMESTAMP_NS, Kind.TIMESTAMPTZ_NS]),
    st.one_of(st.sampled_from(_US_EDGES), st.integers(-(2**63) + 1, 2**63 - 1)),
)
def test_timestamp_rendering_matches_the_calendar_rule(kind: Kind, units: int) -> None:
    nanos = kind in (Kind.TIMESTAMP_NS, Kind.TIMESTAMPTZ_NS)
    tz = kind in (Kind.TIMESTAMPTZ, Kind.TIMESTAMPTZ_NS)
    expected = _reference_timestamp(units, 10**9 if nanos else 10**6, 9 if nanos else 6, tz)
    assert format_bound(T(kind), units) == expected


def test_nul_free_bounds_still_bound_their_values() -> None:
    from service.values import nul_free_bounds

    assert nul_free_bounds("a\x00b", "z\x00") == ("a", "z\x01")
    assert nul_free_bounds("\x00", "\x00\x00") == ("", "\x01")
    assert nul_free_bounds("ab", None) == ("ab", None)
    rnd = random.Random(7)
    alphabet = ["\x00", "\x01", "a", "b", "é", "\U0001f600"]
    for _ in range(2000):
        values = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 5))) for _ in range(rnd.randint(1, 6))]
        lo, hi = nul_free_bounds(min(values), max(values))
        assert lo is not None and hi is not None and "\x00" not in lo + hi
        # Python orders str by code point, as UTF-8 bytes order: the bounds hold every value.
        assert all(lo <= v <= hi for v in values), (values, lo, hi)
