"""Bounds: validation, DuckLake's string rendering and its inverse, and the 256-byte rule.

Strings are rendered exactly as DuckLake renders them in ``ducklake_file_variant_stats``
(DuckDB's VARCHAR casts); see ``docs/ducklake-format.md`` and ``../shared/NOTES.md`` §2.

Commits encode 10^4 bounds per batch, so :func:`bound_checker` and :func:`bound_formatter` are
specialised once per type (cached) with a fast path for the common representation; the fast
path falls back to the general rule of the same type, so each type has one rendering.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Callable
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from functools import cache, lru_cache, partial
from typing import cast

from service.errors import InvalidStatsError
from service.values.calendar import EPOCH_ORDINAL, civil_from_days, days_from_civil, valid_ymd
from service.values.decimals import DECIMAL_CONTEXT, quantize_to_scale, unscaled_of
from service.values.text import NUL_NOT_STORED, lone_surrogate, shown
from service.values.types import (
    DATE_INFINITY,
    DATE_NEG_INFINITY,
    FLOAT_KINDS,
    INT64_MAX,
    INT64_MIN,
    INTEGER_KINDS,
    INTEGER_RANGES,
    TIMESTAMP_KINDS,
    TS_INFINITY,
    TS_NEG_INFINITY,
    Bound,
    Kind,
    ShreddedType,
    to_float32,
)

# --- validation -------------------------------------------------------------------------------


def check_bound(t: ShreddedType, v: Bound) -> Bound:
    """Return ``v`` (decimals quantized to the type's scale) if it is a valid value of ``t``,
    else raise InvalidStatsError.

    The catalog accepts client-side statistics, so every bound crossing a trust boundary goes
    through here.
    """
    k = t.kind
    ok: bool
    if k is Kind.BOOLEAN:
        ok = isinstance(v, bool)
    elif k in INTEGER_KINDS:
        lo, hi = INTEGER_RANGES[k]
        ok = isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi
    elif k in FLOAT_KINDS:
        ok = (
            isinstance(v, float)
            and not math.isnan(v)
            and not (k is Kind.FLOAT32 and math.isfinite(v) and to_float32(v) != v)
        )
    elif k is Kind.DECIMAL:
        ok = isinstance(v, Decimal) and v.is_finite()
        if ok:
            assert isinstance(v, Decimal) and t.scale is not None and t.precision is not None
            unscaled = unscaled_of(v, t.scale)
            ok = unscaled == unscaled.to_integral_value(context=DECIMAL_CONTEXT) and unscaled.copy_abs() < 10**t.precision
    elif k is Kind.DATE:
        ok = isinstance(v, int) and not isinstance(v, bool) and DATE_NEG_INFINITY <= v <= DATE_INFINITY
    elif k is Kind.TIME:
        ok = isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 86_400_000_000
    elif k in TIMESTAMP_KINDS:
        ok = isinstance(v, int) and not isinstance(v, bool) and INT64_MIN <= v <= INT64_MAX
    elif k is Kind.UUID:
        ok = isinstance(v, uuid.UUID)
    elif k is Kind.BLOB:
        ok = isinstance(v, bytes)
    else:  # VARCHAR
        ok = isinstance(v, str)
        if isinstance(v, str) and lone_surrogate(v):
            raise InvalidStatsError(f"{shown(v)!r} is not a valid {t.name} bound: not valid Unicode")
    if not ok:
        raise InvalidStatsError(f"{v!r} is not a valid {t.name} bound")
    if k is Kind.DECIMAL:
        assert isinstance(v, Decimal) and t.scale is not None
        return quantize_to_scale(v, t.scale)
    return v


@cache
def bound_checker(t: ShreddedType) -> Callable[[Bound], Bound]:
    """:func:`check_bound` specialised for ``t`` (same result, same errors; a valid bound already
    in normal form is returned as the same object), for bounds to store: a varchar bound holding
    NUL is refused too (:data:`service.values.text.NUL_NOT_STORED`)."""
    k = t.kind
    if k in INTEGER_RANGES:
        lo, hi = INTEGER_RANGES[k]

        def check_int(v: Bound) -> Bound:
            if type(v) is int and lo <= v <= hi:
                return v
            return check_bound(t, v)

        return check_int
    if k in TIMESTAMP_KINDS:

        def check_ts(v: Bound) -> Bound:
            if type(v) is int and INT64_MIN <= v <= INT64_MAX:
                return v
            return check_bound(t, v)

        return check_ts
    if k is Kind.FLOAT64:

        def check_f64(v: Bound) -> Bound:
            if type(v) is float and v == v:
                return v
            return check_bound(t, v)

        return check_f64
    if k is Kind.VARCHAR:

        def check_str(v: Bound) -> Bound:
            # ASCII (most bounds) is valid Unicode; else a lone surrogate cannot be stored.
            if type(v) is str and (v.isascii() or not lone_surrogate(v)):
                if "\x00" in v:  # a stored bound only: a predicate's literal may hold NUL
                    raise InvalidStatsError(f"{v!r} is not a valid {t.name} bound: {NUL_NOT_STORED}")
                return v
            return check_bound(t, v)

        return check_str
    if k in (Kind.BLOB, Kind.UUID):
        cls = {Kind.BLOB: bytes, Kind.UUID: uuid.UUID}[k]

        def check_type(v: Bound) -> Bound:
            if type(v) is cls:
                return v
            return check_bound(t, v)

        return check_type
    if k is Kind.DECIMAL:
        exp = -(t.scale or 0)
        digits = t.precision or 0

        def check_dec(v: Bound) -> Bound:
            if type(v) is Decimal:
                tup = v.as_tuple()
                if tup.exponent == exp and len(tup.digits) <= digits:
                    return v
            return check_bound(t, v)

        return check_dec
    return partial(check_bound, t)


def is_negative_zero(v: Bound | None) -> bool:
    """-0.0 equals 0.0 (as in SQL) but renders differently, so merges break the tie by sign."""
    return isinstance(v, float) and v == 0.0 and math.copysign(1.0, v) < 0


# --- DuckLake string rendering ----------------------------------------------------------------

_EPOCH = datetime(1970, 1, 1)
#: Days / microseconds of 0001-01-01 and 9999-12-31 23:59:59.999999: Python's datetime range,
#: where the C-implemented ``isoformat`` renders exactly DuckDB's text.
_MIN_DAYS = date(1, 1, 1).toordinal() - EPOCH_ORDINAL
_MAX_DAYS = date(9999, 12, 31).toordinal() - EPOCH_ORDINAL
_MIN_US, _MAX_US = _MIN_DAYS * 86_400_000_000, (_MAX_DAYS + 1) * 86_400_000_000 - 1


def _format_date(days: int) -> str:
    if _MIN_DAYS <= days <= _MAX_DAYS:
        return date.fromordinal(EPOCH_ORDINAL + days).isoformat()
    if days == DATE_INFINITY:
        return "infinity"
    if days == DATE_NEG_INFINITY:
        return "-infinity"
    y, m, d = civil_from_days(days)
    if y <= 0:
        # Astronomical year 0 is 1 BC: DuckDB prints the BC year with a suffix.
        return f"{1 - y:04d}-{m:02d}-{d:02d} (BC)"
    return f"{y:04d}-{m:02d}-{d:02d}"


def _format_fraction(frac: int, digits: int) -> str:
    if frac == 0:
        return ""
    return "." + f"{frac:0{digits}d}".rstrip("0")


def _format_time_of_day(units: int, per_second: int, digits: int) -> str:
    secs, frac = divmod(units, per_second)
    h, rem = divmod(secs, 3600)
    mi, s = divmod(rem, 60)
    return f"{h:02d}:{mi:02d}:{s:02d}{_format_fraction(frac, digits)}"


def _format_time(v: int) -> str:
    return _format_time_of_day(v, 1_000_000, 6)


def _format_timestamp(per_second: int, digits: int, suffix: str, units: int) -> str:
    if per_second == 1_000_000 and _MIN_US <= units <= _MAX_US:
        s = (_EPOCH + timedelta(microseconds=units)).isoformat(" ")
        if len(s) > 19:
            s = s.rstrip("0")
        return s + suffix
    if units == TS_INFINITY:
        return "infinity"
    if units == TS_NEG_INFINITY:
        return "-infinity"
    days, rem = divmod(units, 86_400 * per_second)
    # BC timestamps keep the era marker right after the date: "3957-03-15 (BC) 12:00:00".
    return f"{_format_date(days)} {_format_time_of_day(rem, per_second, digits)}{suffix}"


def _format_float64(v: float) -> str:
    if v == math.inf:
        return "inf"
    if v == -math.inf:
        return "-inf"
    return repr(v)


def _format_float32(v: float) -> str:
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    # The shortest decimal that round-trips through float32, printed in Python's repr style
    # (the same exponent thresholds DuckDB uses for doubles).
    for digits in range(1, 10):
        s = f"{v:.{digits - 1}e}"
        if to_float32(float(s)) == v:
            return repr(float(s))
    return repr(v)


def _format_decimal(scale: int, no_leading_zero: bool, v: Decimal) -> str:
    if v.as_tuple().exponent != -scale:
        v = quantize_to_scale(v, scale)
    s = f"{v:f}"
    if no_leading_zero:
        # DuckDB prints DECIMAL(P,P) without the leading zero: .005 and -.999.
        s = s.replace("0.", ".", 1)
    return s


def _format_boolean(v: Bound) -> str:
    return "1" if v else "0"


def _format_blob(v: Bound) -> str:
    assert isinstance(v, bytes)
    return v.hex().upper()


_Formatter = Callable[[Bound], str]


@cache
def bound_formatter(t: ShreddedType) -> _Formatter:
    """The function rendering bounds of ``t`` as DuckLake stores them in min_value/max_value."""
    # Each formatter takes the Python type check_bound gives bounds of its kind: the casts say so.
    k = t.kind
    if k is Kind.BOOLEAN:
        return _format_boolean
    if k in INTEGER_KINDS:
        return str  # bounds are validated ints (never bools) before they are rendered
    if k is Kind.FLOAT64:
        return cast(_Formatter, _format_float64)
    if k is Kind.FLOAT32:
        return cast(_Formatter, _format_float32)
    if k is Kind.DECIMAL:
        assert t.scale is not None
        return partial(_format_decimal, t.scale, t.scale > 0 and t.precision == t.scale)
    if k is Kind.DATE:
        return cast(_Formatter, _format_date)
    if k is Kind.TIME:
        return cast(_Formatter, _format_time)
    if k in TIMESTAMP_KINDS:
        nanos = k in (Kind.TIMESTAMP_NS, Kind.TIMESTAMPTZ_NS)
        tz = k in (Kind.TIMESTAMPTZ, Kind.TIMESTAMPTZ_NS)
        return partial(
            _format_timestamp, 1_000_000_000 if nanos else 1_000_000, 9 if nanos else 6, "+00" if tz else ""
        )
    if k is Kind.BLOB:
        return _format_blob
    return str  # uuid and varchar


def format_bound(t: ShreddedType, v: Bound) -> str:
    """Render a bound exactly as DuckLake stores it in min_value / max_value."""
    return bound_formatter(t)(v)


_TIME_RE = re.compile(r"(\d{2,}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?")
_DATE_RE = re.compile(r"(-?\d{4,})-(\d{2})-(\d{2})( \(BC\))?")
_TS_RE = re.compile(r"(-?\d{4,})-(\d{2})-(\d{2})( \(BC\))? (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(\+00)?")


def _parse_date(s: str) -> int:
    if s == "infinity":
        return DATE_INFINITY
    if s == "-infinity":
        return DATE_NEG_INFINITY
    m = _DATE_RE.fullmatch(s)
    if not m:
        raise ValueError(s)
    year, month, day, bc = m.groups()
    days = _day_number(1 - int(year) if bc else int(year), int(month), int(day))
    if days is None:
        raise ValueError(s)
    return days


@lru_cache(maxsize=4096)
def _day_number(y: int, mo: int, d: int) -> int | None:
    """Days since 1970-01-01 of a valid (y, mo, d), else None. Cached: the bounds of a table's
    files fall on few days (the dashboard's range chart parses 10^3 timestamps per view)."""
    return days_from_civil(y, mo, d) if valid_ymd(y, mo, d) else None


def _frac(group: str | None, digits: int) -> int:
    return int((group or "").ljust(digits, "0")) if group else 0


def _parse_timestamp(s: str, per_second: int, digits: int, tz: bool) -> int:
    if s == "infinity":
        return TS_INFINITY
    if s == "-infinity":
        return TS_NEG_INFINITY
    m = _TS_RE.fullmatch(s)
    if not m:
        raise ValueError(s)
    year, month, day, bc, hour, minute, second, frac, zone = m.groups()
    if bool(zone) != tz or (frac and len(frac) > digits):
        raise ValueError(s)
    days = _day_number(1 - int(year) if bc else int(year), int(month), int(day))
    if days is None:
        raise ValueError(s)
    h, mi, sec = int(hour), int(minute), int(second)
    if h > 23 or mi > 59 or sec > 59:
        raise ValueError(s)
    return (days * 86_400 + h * 3600 + mi * 60 + sec) * per_second + _frac(frac, digits)


def parse_bound(t: ShreddedType, s: str) -> Bound:
    """Inverse of :func:`format_bound` (for DuckLake-format strings supplied by clients)."""
    k = t.kind
    try:
        v: Bound
        if k is Kind.BOOLEAN:
            if s not in ("0", "1"):
                raise ValueError(s)
            v = s == "1"
        elif k in INTEGER_KINDS:
            if not re.fullmatch(r"-?\d+", s):
                raise ValueError(s)
            v = int(s)
        elif k in FLOAT_KINDS:
            if s.lower() in ("nan", "-nan"):
                raise ValueError("NaN is never a bound")
            v = float(s)
            if k is Kind.FLOAT32:
                v = to_float32(v)
        elif k is Kind.DECIMAL:
            if not re.fullmatch(r"-?\d*\.?\d*", s) or s in ("", "-", ".", "-."):
                raise ValueError(s)
            v = Decimal(s)
        elif k is Kind.DATE:
            v = _parse_date(s)
        elif k is Kind.TIME:
            m = _TIME_RE.fullmatch(s)
            if not m or (m.group(4) and len(m.group(4)) > 6):
                raise ValueError(s)
            h, mi, sec = int(m.group(1)), int(m.group(2)), int(m.group(3))
            v = (h * 3600 + mi * 60 + sec) * 1_000_000 + _frac(m.group(4), 6)
        elif k is Kind.TIMESTAMP:
            v = _parse_timestamp(s, 1_000_000, 6, tz=False)
        elif k is Kind.TIMESTAMPTZ:
            v = _parse_timestamp(s, 1_000_000, 6, tz=True)
        elif k is Kind.TIMESTAMP_NS:
            v = _parse_timestamp(s, 1_000_000_000, 9, tz=False)
        elif k is Kind.TIMESTAMPTZ_NS:
            v = _parse_timestamp(s, 1_000_000_000, 9, tz=True)
        elif k is Kind.UUID:
            if not re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", s):
                raise ValueError(s)
            v = uuid.UUID(s)
        elif k is Kind.BLOB:
            if len(s) % 2 or not re.fullmatch(r"[0-9A-F]*", s):
                raise ValueError(s)
            v = bytes.fromhex(s)
        else:
            v = s
        return check_bound(t, v)
    except (ValueError, InvalidOperation, OverflowError):
        raise InvalidStatsError(f"{s!r} is not a valid {t.name} bound") from None


# --- DuckLake's 256-byte rule for strings and blobs ------------------------------------------

MAX_STRING_BOUND_BYTES = 256


def truncate_lower(t: ShreddedType, v: Bound) -> Bound:
    """A lower bound of at most 256 bytes: the prefix (a prefix sorts before the whole)."""
    if t.kind is Kind.BLOB:
        assert isinstance(v, bytes)
        return v[:MAX_STRING_BOUND_BYTES]
    if t.kind is Kind.VARCHAR:
        assert isinstance(v, str)
        raw = v.encode("utf-8")
        if len(raw) <= MAX_STRING_BOUND_BYTES:
            return v
        # Cut back to a character boundary so the bound is still valid UTF-8.
        return raw[:MAX_STRING_BOUND_BYTES].decode("utf-8", errors="ignore")
    return v


def truncate_upper(t: ShreddedType, v: Bound) -> Bound | None:
    """An upper bound of at most 256 bytes, or None when none can be made (the bound is lost).

    DuckLake keeps the prefix up to the last byte below 0x7F (varchar, to stay ASCII-safe) or
    below 0xFF (blob) among the first 256 bytes, and increments that byte.
    """
    if t.kind not in (Kind.BLOB, Kind.VARCHAR):
        return v
    raw = v.encode("utf-8") if isinstance(v, str) else v
    assert isinstance(raw, bytes)
    if len(raw) <= MAX_STRING_BOUND_BYTES:
        return v
    limit = 0x7F if t.kind is Kind.VARCHAR else 0xFF
    prefix = raw[:MAX_STRING_BOUND_BYTES]
    for i in range(len(prefix) - 1, -1, -1):
        if prefix[i] < limit:
            out = prefix[:i] + bytes([prefix[i] + 1])
            return out.decode("utf-8") if t.kind is Kind.VARCHAR else out
    return None


def nul_free_bounds(lo: str | None, hi: str | None) -> tuple[str | None, str | None]:
    """Varchar bounds the catalog can store (no U+0000, see :mod:`service.values.text`), still
    bounding what the given ones bound: the lower one cut before its first NUL (a prefix sorts
    first), the upper one cut there with U+0001 in the NUL's place (greater than anything that
    continues the prefix with a NUL). Where DuckLake keeps a bound holding NUL, shredcat's row
    has these instead (docs/ducklake-format.md)."""
    if lo is not None and "\x00" in lo:
        lo = lo[: lo.index("\x00")]
    if hi is not None and "\x00" in hi:
        hi = hi[: hi.index("\x00")] + "\x01"
    return lo, hi


def needs_truncation(t: ShreddedType, v: Bound) -> bool:
    if t.kind is Kind.BLOB:
        return len(cast(bytes, v)) > MAX_STRING_BOUND_BYTES
    if t.kind is Kind.VARCHAR:
        return len(cast(str, v).encode("utf-8")) > MAX_STRING_BOUND_BYTES
    return False
