"""The one typed value model for every min/max bound shredcat handles.

A bound is always carried together with its :class:`ShreddedType`. Python representation per type:

=============  ===========================================================
boolean        ``bool``
int8..int64    ``int``
float32/64     ``float`` (a float32 is held as the exactly equal double)
decimal(P,S)   ``decimal.Decimal`` with exponent ``-S``
date           ``int`` days since 1970-01-01 (DuckDB's range, BC and ±infinity included)
time           ``int`` microseconds since midnight
timestamp*     ``int`` microseconds since the epoch (``timestamp_ns``/``timestamptz_ns``: nanoseconds)
uuid           ``uuid.UUID`` (ordered by its 16 big-endian bytes, which ``UUID`` comparison does)
blob           ``bytes``
varchar        ``str`` (ordered by UTF-8 bytes, which equals code-point order)
=============  ===========================================================

Strings are rendered exactly as DuckLake renders them in ``ducklake_file_variant_stats``
(DuckDB's VARCHAR casts); see ``docs/ducklake-format.md`` and ``../shared/NOTES.md`` §2.
"""

from __future__ import annotations

import math
import re
import struct
import uuid
from dataclasses import dataclass
from decimal import Context, Decimal, InvalidOperation
from enum import StrEnum
from typing import Union

from service.errors import InvalidStatsError

Bound = Union[bool, int, float, Decimal, str, bytes, uuid.UUID]  # noqa: UP007 - used at runtime in isinstance-free code


class Kind(StrEnum):
    """DuckLake's names for shredded types (``shredded_type`` column)."""

    BOOLEAN = "boolean"
    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    DECIMAL = "decimal"
    DATE = "date"
    TIME = "time"
    TIMESTAMP = "timestamp"
    TIMESTAMPTZ = "timestamptz"
    TIMESTAMP_NS = "timestamp_ns"
    # Parquet TIMESTAMP(true, NANOS): the spec's timestamptz(9). DuckDB has no such type and DuckLake
    # never writes it; shredcat names it in DuckLake's style rather than losing the nanoseconds.
    TIMESTAMPTZ_NS = "timestamptz_ns"
    UUID = "uuid"
    BLOB = "blob"
    VARCHAR = "varchar"


INTEGER_KINDS = (Kind.INT8, Kind.INT16, Kind.INT32, Kind.INT64)
FLOAT_KINDS = (Kind.FLOAT32, Kind.FLOAT64)
INTEGER_RANGES = {
    Kind.INT8: (-(2**7), 2**7 - 1),
    Kind.INT16: (-(2**15), 2**15 - 1),
    Kind.INT32: (-(2**31), 2**31 - 1),
    Kind.INT64: (-(2**63), 2**63 - 1),
}
# DuckDB keeps date infinities as the extreme int32 values and timestamp infinities as the
# extreme int64 values; a Parquet file written by DuckDB carries them verbatim.
DATE_INFINITY = 2**31 - 1
DATE_NEG_INFINITY = -(2**31 - 1)
TS_INFINITY = 2**63 - 1
TS_NEG_INFINITY = -(2**63 - 1)

# Python's default context keeps 28 digits; DECIMAL(38,S) needs 38 exactly (and a sum of scale
# and digits a little more). Every decimal operation goes through this context.
DECIMAL_CONTEXT = Context(prec=100)


def decimal_from_unscaled(unscaled: int, scale: int) -> Decimal:
    """The exact decimal ``unscaled * 10**-scale`` (no rounding, whatever the digit count)."""
    sign = 1 if unscaled < 0 else 0
    return Decimal((sign, tuple(int(c) for c in str(abs(unscaled))), -scale))


def unscaled_of(v: Decimal, scale: int) -> Decimal:
    return v.scaleb(scale, context=DECIMAL_CONTEXT)


def quantize_to_scale(v: Decimal, scale: int) -> Decimal:
    return v.quantize(Decimal(1).scaleb(-scale), context=DECIMAL_CONTEXT)


_DECIMAL_NAME = re.compile(r"decimal\((\d+),(\d+)\)")


@dataclass(frozen=True, slots=True)
class ShreddedType:
    kind: Kind
    precision: int | None = None
    scale: int | None = None

    def __post_init__(self) -> None:
        if self.kind is Kind.DECIMAL:
            p, s = self.precision, self.scale
            if p is None or s is None or not (1 <= p <= 38) or not (0 <= s <= p):
                raise InvalidStatsError(f"invalid decimal precision/scale ({p},{s})")
        elif self.precision is not None or self.scale is not None:
            raise InvalidStatsError(f"{self.kind.value} takes no precision/scale")

    @property
    def name(self) -> str:
        if self.kind is Kind.DECIMAL:
            return f"decimal({self.precision},{self.scale})"
        return self.kind.value

    def __str__(self) -> str:
        return self.name

    @classmethod
    def parse(cls, name: str) -> ShreddedType:
        """Parse a DuckLake ``shredded_type`` string (``int64``, ``decimal(18,2)``...)."""
        m = _DECIMAL_NAME.fullmatch(name)
        if m:
            return cls(Kind.DECIMAL, int(m.group(1)), int(m.group(2)))
        try:
            kind = Kind(name)
        except ValueError:
            raise InvalidStatsError(f"unknown shredded_type {name!r}") from None
        if kind is Kind.DECIMAL:
            raise InvalidStatsError("decimal needs precision and scale, e.g. decimal(18,2)")
        return cls(kind)

    @property
    def is_float(self) -> bool:
        return self.kind in FLOAT_KINDS

    @property
    def is_integer(self) -> bool:
        return self.kind in INTEGER_KINDS

    @property
    def is_string_like(self) -> bool:
        return self.kind in (Kind.VARCHAR, Kind.BLOB)


# --- validation -------------------------------------------------------------------------------


def check_bound(t: ShreddedType, v: Bound) -> Bound:
    """Return ``v`` if it is a valid value of ``t``, else raise InvalidStatsError.

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
        ok = isinstance(v, float) and not math.isnan(v)
        if ok and k is Kind.FLOAT32 and math.isfinite(v):
            ok = to_float32(v) == v
    elif k is Kind.DECIMAL:
        ok = isinstance(v, Decimal) and v.is_finite()
        if ok:
            assert t.scale is not None and t.precision is not None
            unscaled = unscaled_of(v, t.scale)
            ok = unscaled == unscaled.to_integral_value(context=DECIMAL_CONTEXT) and unscaled.copy_abs() < 10**t.precision
    elif k is Kind.DATE:
        ok = isinstance(v, int) and not isinstance(v, bool) and DATE_NEG_INFINITY <= v <= DATE_INFINITY
    elif k is Kind.TIME:
        ok = isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 86_400_000_000
    elif k in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ, Kind.TIMESTAMP_NS, Kind.TIMESTAMPTZ_NS):
        ok = isinstance(v, int) and not isinstance(v, bool) and -(2**63) <= v < 2**63
    elif k is Kind.UUID:
        ok = isinstance(v, uuid.UUID)
    elif k is Kind.BLOB:
        ok = isinstance(v, bytes)
    else:  # VARCHAR
        ok = isinstance(v, str)
    if not ok:
        raise InvalidStatsError(f"{v!r} is not a valid {t.name} bound")
    if k is Kind.DECIMAL:
        assert isinstance(v, Decimal) and t.scale is not None
        return quantize_to_scale(v, t.scale)
    return v


# --- ordering ---------------------------------------------------------------------------------


def sort_key(t: ShreddedType, v: Bound) -> object:
    """A key giving the type's value order. Python's own order is already right for every
    type (-0.0 == 0.0 as in SQL; str by code point = UTF-8 byte order; UUID by its int)."""
    return v


def less(t: ShreddedType, a: Bound, b: Bound) -> bool:
    return sort_key(t, a) < sort_key(t, b)  # type: ignore[operator]


# --- DuckLake string rendering ----------------------------------------------------------------


def _civil_from_days(z: int) -> tuple[int, int, int]:
    """Proleptic Gregorian (y, m, d) from days since 1970-01-01, for any int.

    Python's ``date`` stops at year 1; DuckDB dates go far into BC, so this is H. Hinnant's
    ``civil_from_days`` algorithm, exact for every integer.
    """
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + (1 if m <= 2 else 0), m, d)


def _days_from_civil(y: int, m: int, d: int) -> int:
    y -= 1 if m <= 2 else 0
    era = y // 400
    yoe = y - era * 400
    mp = m + (-3 if m > 2 else 9)
    doy = (153 * mp + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _format_date(days: int) -> str:
    if days == DATE_INFINITY:
        return "infinity"
    if days == DATE_NEG_INFINITY:
        return "-infinity"
    y, m, d = _civil_from_days(days)
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


def _format_timestamp(units: int, per_second: int, digits: int, tz: bool) -> str:
    if units == TS_INFINITY:
        return "infinity"
    if units == TS_NEG_INFINITY:
        return "-infinity"
    day_units = 86_400 * per_second
    days, rem = divmod(units, day_units)
    date_s = _format_date(days)
    time_s = _format_time_of_day(rem, per_second, digits)
    # BC timestamps keep the era marker right after the date: "3957-03-15 (BC) 12:00:00".
    return f"{date_s} {time_s}" + ("+00" if tz else "")


FLOAT32_MAX = 3.4028234663852886e38
# Doubles at or above the midpoint between FLOAT32_MAX and 2**128 round to infinity.
_FLOAT32_OVERFLOW = 2.0**128 - 2.0**103


def to_float32(v: float) -> float:
    """Round a double to the nearest float32 (ties to even), as a double; struct refuses
    values just above FLOAT32_MAX that still round down to it."""
    if math.isnan(v) or math.isinf(v):
        return v
    if abs(v) >= _FLOAT32_OVERFLOW:
        return math.copysign(math.inf, v)
    if abs(v) > FLOAT32_MAX:
        return math.copysign(FLOAT32_MAX, v)
    return struct.unpack("<f", struct.pack("<f", v))[0]


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


def _format_decimal(t: ShreddedType, v: Decimal) -> str:
    assert t.scale is not None and t.precision is not None
    q = quantize_to_scale(v, t.scale)
    s = f"{q:f}"
    if t.scale > 0 and t.precision == t.scale:
        # DuckDB prints DECIMAL(P,P) without the leading zero: .005 and -.999.
        s = s.replace("0.", ".", 1)
    return s


def format_bound(t: ShreddedType, v: Bound) -> str:
    """Render a bound exactly as DuckLake stores it in min_value / max_value."""
    k = t.kind
    if k is Kind.BOOLEAN:
        return "1" if v else "0"
    if k in INTEGER_KINDS:
        return str(int(v))  # type: ignore[arg-type]
    if k is Kind.FLOAT64:
        assert isinstance(v, float)
        return "inf" if v == math.inf else "-inf" if v == -math.inf else repr(v)
    if k is Kind.FLOAT32:
        assert isinstance(v, float)
        return _format_float32(v)
    if k is Kind.DECIMAL:
        assert isinstance(v, Decimal)
        return _format_decimal(t, v)
    if k is Kind.DATE:
        assert isinstance(v, int)
        return _format_date(v)
    if k is Kind.TIME:
        assert isinstance(v, int)
        return _format_time_of_day(v, 1_000_000, 6)
    if k is Kind.TIMESTAMP:
        assert isinstance(v, int)
        return _format_timestamp(v, 1_000_000, 6, tz=False)
    if k is Kind.TIMESTAMPTZ:
        assert isinstance(v, int)
        return _format_timestamp(v, 1_000_000, 6, tz=True)
    if k is Kind.TIMESTAMP_NS:
        assert isinstance(v, int)
        return _format_timestamp(v, 1_000_000_000, 9, tz=False)
    if k is Kind.TIMESTAMPTZ_NS:
        assert isinstance(v, int)
        return _format_timestamp(v, 1_000_000_000, 9, tz=True)
    if k is Kind.UUID:
        return str(v)
    if k is Kind.BLOB:
        assert isinstance(v, bytes)
        return v.hex().upper()
    assert isinstance(v, str)
    return v


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
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if m.group(4):
        y = 1 - y
    _check_ymd(y, mo, d)
    return _days_from_civil(y, mo, d)


def _check_ymd(y: int, mo: int, d: int) -> None:
    if not (1 <= mo <= 12 and 1 <= d <= 31) or _civil_from_days(_days_from_civil(y, mo, d)) != (y, mo, d):
        raise ValueError(f"{y}-{mo}-{d}")


def _frac(group: str | None, digits: int) -> int:
    return int((group or "").ljust(digits, "0")) if group else 0


def _parse_timestamp(s: str, per_second: int, digits: int, tz: bool) -> int:
    if s == "infinity":
        return TS_INFINITY
    if s == "-infinity":
        return TS_NEG_INFINITY
    m = _TS_RE.fullmatch(s)
    if not m or bool(m.group(9)) != tz or (m.group(8) and len(m.group(8)) > digits):
        raise ValueError(s)
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if m.group(4):
        y = 1 - y
    _check_ymd(y, mo, d)
    h, mi, sec = int(m.group(5)), int(m.group(6)), int(m.group(7))
    if h > 23 or mi > 59 or sec > 59:
        raise ValueError(s)
    days = _days_from_civil(y, mo, d)
    return (days * 86_400 + h * 3600 + mi * 60 + sec) * per_second + _frac(m.group(8), digits)


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


def needs_truncation(t: ShreddedType, v: Bound) -> bool:
    if t.kind is Kind.BLOB:
        return len(v) > MAX_STRING_BOUND_BYTES  # type: ignore[arg-type]
    if t.kind is Kind.VARCHAR:
        return len(v.encode("utf-8")) > MAX_STRING_BOUND_BYTES  # type: ignore[union-attr]
    return False


# --- index keys for the catalog ---------------------------------------------------------------

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True, slots=True)
class IndexKey:
    """Order-preserving key of a bound in exactly one of three SQL column families.

    ``num`` (BIGINT) holds every integer-like type: booleans, ints, dates, times, timestamps and
    decimals as their unscaled integer (same scale within one shredded type). ``real`` holds
    floats. ``bin`` holds varchar (UTF-8), blob and uuid (16 big-endian bytes): bytea/BLOB
    comparison is unsigned byte order on both PostgreSQL and SQLite, which is the type order.
    A decimal whose unscaled value does not fit int64 gets no key (the file is then kept).
    """

    num: int | None = None
    real: float | None = None
    bin: bytes | None = None


def index_key(t: ShreddedType, v: Bound | None) -> IndexKey:
    if v is None:
        return IndexKey()
    k = t.kind
    if k in FLOAT_KINDS:
        return IndexKey(real=float(v))  # type: ignore[arg-type]
    if k is Kind.VARCHAR:
        return IndexKey(bin=v.encode("utf-8"))  # type: ignore[union-attr]
    if k is Kind.BLOB:
        return IndexKey(bin=v)  # type: ignore[arg-type]
    if k is Kind.UUID:
        return IndexKey(bin=v.bytes)  # type: ignore[union-attr]
    if k is Kind.DECIMAL:
        assert isinstance(v, Decimal) and t.scale is not None
        n = int(unscaled_of(v, t.scale))
        return IndexKey(num=n) if INT64_MIN <= n <= INT64_MAX else IndexKey()
    return IndexKey(num=int(v))  # type: ignore[arg-type]


def family(t: ShreddedType) -> str:
    """Which IndexKey field carries keys of this type: 'num', 'real' or 'bin'."""
    if t.kind in FLOAT_KINDS:
        return "real"
    if t.kind in (Kind.VARCHAR, Kind.BLOB, Kind.UUID):
        return "bin"
    return "num"
