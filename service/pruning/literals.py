"""Literals of a predicate, and where they fall among the values of the term's target type.

Parsers hand over a :data:`LiteralValue` (what the user wrote, typed the way Spark types it);
:func:`literal_image` places it among the target type's values, following Spark's implicit
casts for the comparison, and the expression builder then rewrites the comparison so that its
literal *is* a target value (:mod:`service.pruning.expressions`):

* ``bigint = 42.0`` → ``= 42``; ``bigint < 42.5`` → ``<= 42``; ``tinyint < 300`` → ``<= 127``.
* ``bigint = 42.5`` or ``tinyint = 300``: no target value equals the literal.

Spark's comparison rules followed (in the session time zone, see below):

* int column vs decimal literal: both widened to a decimal: exact. Rejected when the common
  decimal would need more than 38 digits (Spark would then round).
* int column vs double literal: the column is cast to double, which is exact for |x| <= 2**53;
  a literal with |d| >= 2**53 is rejected, below that the comparison equals the exact one.
* ``IN (...)``: the term and every literal in the list's one common type (:func:`in_list_literals`):
  an int column with a double among the literals compares every literal as a double.
* float column vs int literal: without ANSI the literal is cast to float (rounded to float32),
  with ANSI both to double: only an integer float32 holds exactly is accepted (both agree).
* float column vs decimal/double literal: both cast to double; float32 values widen exactly.
* decimal column vs double/float literal: rejected (Spark compares in double, which is not the
  decimal order shredcat's bounds are in).
* date column vs timestamp literal: the date is cast to its midnight: exact.
* A SQL *string* literal compared with a numeric/date/timestamp column is cast to the column's
  type, and Spark's modes disagree about inexact strings ('42.5' for an int): such a string is
  accepted only when it names a target value exactly, else InvalidPredicateError. JSON
  numerals arrive as Decimal (see parse_json) and have exact-number semantics.
* NaN literals are rejected (use is_nan / not_nan): Spark's NaN = NaN is true, which is not
  what a JSON or SQL user usually means, and no bound can express it.

Timestamps without a zone are read in the session time zone (:mod:`service.pruning.zones`; UTC
unless the plan names another), as are dates compared with timestamps (their midnight). A
timestamp_ntz term compared with an instant depends on the zone's transitions in a way no bound
expresses: outside UTC it raises :class:`~service.pruning.zones.ZoneDependent` (the builders make
the comparison unknown).
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from service.errors import InvalidPredicateError
from service.pruning.spark_types import spark_type_name
from service.pruning.zones import ZoneDependent, current_zone
from service.values import (
    DATE_INFINITY,
    DATE_NEG_INFINITY,
    FLOAT32_MAX,
    INT64_MAX,
    INT64_MIN,
    INTEGER_KINDS,
    INTEGER_RANGES,
    MICROS_PER_DAY,
    Bound,
    Kind,
    ShreddedType,
    civil_from_days,
    days_from_civil,
    decimal_from_unscaled,
    to_float32,
    valid_ymd,
)
from service.values.text import lone_surrogate

# Digits of Spark's decimal image of each integer type (LongType → DECIMAL(20,0) etc.).
_INT_DECIMAL_DIGITS = {Kind.INT8: 3, Kind.INT16: 5, Kind.INT32: 10, Kind.INT64: 20}


@dataclass(frozen=True, slots=True)
class DateLiteral:
    """SQL ``DATE '...'``: days since 1970-01-01."""

    days: int


@dataclass(frozen=True, slots=True)
class TimestampLiteral:
    """SQL ``TIMESTAMP '...'`` (an instant, ``ntz=False``) or ``TIMESTAMP_NTZ '...'``."""

    micros: int
    ntz: bool


@dataclass(frozen=True, slots=True)
class Float32Literal:
    """SQL ``1.5F`` / ``CAST(.. AS FLOAT)``: a float32 value held as the equal double."""

    value: float


# str is a SQL string literal (cast to the column type by Spark); Decimal an exact numeral;
# float a double literal; int an integer literal.
LiteralValue = bool | int | Decimal | float | Float32Literal | str | bytes | DateLiteral | TimestampLiteral


@dataclass(frozen=True, slots=True)
class Image:
    """Where a literal falls among the values of a target type.

    ``exact`` is the equal target value, if there is one. Otherwise ``below``/``above`` are the
    nearest target values on each side (None past the end of the type's range).
    """

    exact: Bound | None
    below: Bound | None = None
    above: Bound | None = None


def _tn(t: ShreddedType) -> str:
    """A type as the user wrote it (Spark's name), for messages."""
    try:
        return spark_type_name(t)
    except InvalidPredicateError:
        return t.name


def _err(msg: str) -> InvalidPredicateError:
    return InvalidPredicateError(msg)


def describe_literal(v: LiteralValue) -> str:
    if isinstance(v, DateLiteral):
        return f"DATE '{format_date(v.days)}'"
    if isinstance(v, TimestampLiteral):
        return ("TIMESTAMP_NTZ" if v.ntz else "TIMESTAMP") + f" '{format_timestamp(v.micros, tz=not v.ntz)}'"
    if isinstance(v, Float32Literal):
        return f"{v.value!r}F"
    if isinstance(v, bytes):
        return f"X'{v.hex().upper()}'"
    return repr(v)


# --- dates and timestamps ---------------------------------------------------------------------

# Up to 7 year digits: Spark's and DuckDB's dates reach year 5881580.
_DATE_TEXT = re.compile(r"\s*([+-]?\d{4,7})-(\d{1,2})-(\d{1,2})\s*")
_TS_TEXT = re.compile(
    r"\s*([+-]?\d{4,7})-(\d{1,2})-(\d{1,2})"
    r"(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d*))?)?)?"
    r"\s*(Z|UTC|[+-]\d{2}(?::?\d{2})?)?\s*",
    re.IGNORECASE,
)


def _ymd_days(text: str, y: int, m: int, d: int) -> int:
    if not valid_ymd(y, m, d):
        raise _err(f"invalid date {text!r}")
    return days_from_civil(y, m, d)


def parse_date_text(text: str) -> int:
    """``'2024-01-01'`` → days since the epoch (astronomical years: ``-0043`` is 44 BC)."""
    m = _DATE_TEXT.fullmatch(text)
    if not m:
        raise _err(f"{text!r} is not a date (expected YYYY-MM-DD)")
    return _ymd_days(text, int(m.group(1)), int(m.group(2)), int(m.group(3)))


def parse_timestamp_text(text: str, *, ntz: bool) -> TimestampLiteral:
    """``'2024-01-01 10:00:00[.ffffff][Z|+02:00]'`` (``T`` also accepted) → micros since the
    epoch. Without a zone the text is read in the session time zone (an instant), or as a wall
    time for ``ntz``; a zone is an error for ``ntz``."""
    m = _TS_TEXT.fullmatch(text)
    if not m:
        raise _err(f"{text!r} is not a timestamp (expected YYYY-MM-DD[ HH:MM[:SS[.ffffff]]][zone])")
    days = _ymd_days(text, int(m.group(1)), int(m.group(2)), int(m.group(3)))
    h = int(m.group(4) or 0)
    mi = int(m.group(5) or 0)
    s = int(m.group(6) or 0)
    frac = m.group(7) or ""
    if h > 23 or mi > 59 or s > 59:
        raise _err(f"invalid time of day in {text!r}")
    if len(frac) > 6:
        # Spark keeps microseconds and its modes disagree on what happens to more digits.
        raise _err(f"{text!r} has more than 6 fractional digits (timestamps hold microseconds)")
    zone = m.group(8)
    offset_s = 0
    if zone is not None:
        if ntz:
            raise _err(f"{text!r} has a time zone, but the term is timestamp_ntz")
        z = zone.upper()
        if z not in ("Z", "UTC"):
            sign = -1 if z[0] == "-" else 1
            digits = z[1:].replace(":", "")
            oh, om = int(digits[:2]), int(digits[2:4] or 0)
            if oh > 18 or om > 59:
                raise _err(f"invalid zone offset in {text!r}")
            offset_s = sign * (oh * 3600 + om * 60)
    secs = days * 86_400 + h * 3600 + mi * 60 + s - offset_s
    micros = secs * 1_000_000 + int(frac.ljust(6, "0") or 0)
    if zone is None and not ntz:
        micros = current_zone().instant(micros)
    if not INT64_MIN <= micros <= INT64_MAX:
        raise _err(f"timestamp {text!r} is out of range")
    return TimestampLiteral(micros, ntz=ntz if zone is None else False)


def format_date(days: int) -> str:
    y, m, d = civil_from_days(days)
    ys = f"{y:04d}" if y >= 0 else f"-{-y:04d}"
    return f"{ys}-{m:02d}-{d:02d}"


def format_timestamp(micros: int, *, tz: bool, sep: str = " ") -> str:
    days, rem = divmod(micros, MICROS_PER_DAY)
    secs, frac = divmod(rem, 1_000_000)
    h, r = divmod(secs, 3600)
    mi, s = divmod(r, 60)
    out = f"{format_date(days)}{sep}{h:02d}:{mi:02d}:{s:02d}"
    if frac:
        out += "." + f"{frac:06d}".rstrip("0")
    return out + ("+00:00" if tz else "")


# --- numbers ----------------------------------------------------------------------------------

_NUMERAL = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*")
_INF = {
    "inf": math.inf,
    "+inf": math.inf,
    "infinity": math.inf,
    "+infinity": math.inf,
    "-inf": -math.inf,
    "-infinity": -math.inf,
}


def parse_numeral(text: str) -> Decimal | None:
    if not _NUMERAL.fullmatch(text):
        return None
    try:
        return Decimal(text.strip())
    except InvalidOperation:  # pragma: no cover - the regex admits only valid numerals
        return None


def _f32_bits(v: float) -> int:
    return int(struct.unpack("<i", struct.pack("<f", v))[0])


def _f32_from_bits(b: int) -> float:
    return float(struct.unpack("<f", struct.pack("<i", b))[0])


def next_float32(v: float, up: bool) -> float:
    """The adjacent float32 towards +inf (``up``) or -inf; v must be a float32 value."""
    if math.isinf(v):
        if (v > 0) == up:
            return v
        return FLOAT32_MAX if v > 0 else -FLOAT32_MAX
    if v == 0.0:
        tiny = _f32_from_bits(1)
        return tiny if up else -tiny
    b = _f32_bits(v)
    # For positive floats the bit pattern grows with the value; for negative ones it shrinks.
    b += 1 if (v > 0) == up else -1
    return _f32_from_bits(b)


def nearest_float32(x: Fraction) -> float:
    """x rounded once to the nearest float32 (ties to even), as Java's (float) cast does.

    Rounding through a double first can round twice; that differs only when the double lands
    exactly halfway between two float32 values, which is corrected here.
    """
    d = float(x) if abs(x) < 2**1024 else (math.inf if x > 0 else -math.inf)  # float(x) would overflow
    f = to_float32(d)
    if f == d or math.isinf(f):
        return f  # exact, or beyond FLOAT32_MAX by half an ulp or more: Java's cast gives infinity
    other = next_float32(f, up=d > f)
    if math.isfinite(other) and Fraction(f) + Fraction(other) == 2 * Fraction(d) and Fraction(d) != x:
        # A tie for the double but not for x: x's side decides.
        return max(f, other) if x > Fraction(d) else min(f, other)
    return f


def _reject_nan(v: LiteralValue) -> None:
    if isinstance(v, float) and math.isnan(v):
        raise _err("NaN is not a comparable literal; use is_nan / not_nan")
    if isinstance(v, Float32Literal) and math.isnan(v.value):
        raise _err("NaN is not a comparable literal; use is_nan / not_nan")
    if isinstance(v, Decimal) and not v.is_finite():
        raise _err(f"{v} is not a comparable literal")


def _decimal_digits(d: Decimal) -> tuple[int, int]:
    """(integer digits, scale) of a finite decimal literal, as Spark types it."""
    t = d.as_tuple()
    assert isinstance(t.exponent, int)
    scale = max(0, -t.exponent)
    digits = len(t.digits) + max(0, t.exponent)
    return max(0, digits - scale), scale


def check_spark_decimal_width(target: ShreddedType, lit: Decimal) -> None:
    """Reject a SQL decimal literal that Spark would round when widening it against the term
    (the common decimal type is capped at 38 digits). JSON numerals are exact and skip this."""
    if target.kind not in INTEGER_KINDS and target.kind is not Kind.DECIMAL:
        return
    if target.kind is Kind.DECIMAL:
        assert target.precision is not None and target.scale is not None
        t_int, t_scale = target.precision - target.scale, target.scale
    else:
        t_int, t_scale = _INT_DECIMAL_DIGITS[target.kind], 0
    l_int, l_scale = _decimal_digits(lit)
    if max(t_int, l_int) + max(t_scale, l_scale) > 38:
        raise _err(
            f"decimal literal {lit} against {_tn(target)} needs more than 38 digits; "
            "Spark would round it: write it with fewer digits"
        )


# --- the image of a literal in a target type -------------------------------------------------


def _discrete_domain(target: ShreddedType) -> tuple[int, int]:
    k = target.kind
    if k in INTEGER_KINDS:
        return INTEGER_RANGES[k]
    if k is Kind.DECIMAL:
        assert target.precision is not None
        lim = 10**target.precision - 1
        return -lim, lim
    if k is Kind.DATE:
        return DATE_NEG_INFINITY, DATE_INFINITY
    return INT64_MIN, INT64_MAX


def _discrete_bound(target: ShreddedType, n: int) -> Bound:
    if target.kind is Kind.DECIMAL:
        assert target.scale is not None
        return decimal_from_unscaled(n, target.scale)
    return n


def _discrete_image(target: ShreddedType, x: Fraction) -> Image:
    lo, hi = _discrete_domain(target)
    if x.denominator == 1 and lo <= x <= hi:
        return Image(_discrete_bound(target, int(x)))
    below = min(math.ceil(x) - 1, hi)
    above = max(math.floor(x) + 1, lo)
    return Image(
        None,
        _discrete_bound(target, below) if below >= lo else None,
        _discrete_bound(target, above) if above <= hi else None,
    )


def _fraction(d: Decimal) -> Fraction:
    """An exact Fraction of a decimal literal, without building 10**(10**9) for absurd
    exponents: past 10**80 every value behaves like 10**80 (beyond any target's range, even
    scaled by 10**38) and below 10**-80 like 10**-80 (strictly between two integers)."""
    if d == 0:
        return Fraction(0)
    sign = -1 if d < 0 else 1
    adj = d.adjusted()
    if adj > 80:
        return Fraction(sign * 10**80)
    if adj < -80:
        return Fraction(sign, 10**80)
    return Fraction(d)


def _discrete_value(target: ShreddedType, v: LiteralValue) -> Fraction:
    """The literal as an exact number in the units of the target's discrete domain."""
    k = target.kind
    if isinstance(v, bool):
        raise _err(f"boolean {v} cannot be compared with a {_tn(target)} term")
    if k in INTEGER_KINDS or k is Kind.DECIMAL:
        unit = 10**target.scale if k is Kind.DECIMAL and target.scale else 1
        if isinstance(v, int):
            return Fraction(v) * unit
        if isinstance(v, Decimal):
            return _fraction(v) * unit
        if isinstance(v, float):
            if k is Kind.DECIMAL:
                raise _err(
                    f"double literal {v!r} against {_tn(target)}: Spark compares them as doubles; use a decimal literal"
                )
            if math.isinf(v):
                lo, hi = _discrete_domain(target)
                return Fraction(hi + 1 if v > 0 else lo - 1)
            if abs(v) >= 2**53:
                raise _err(f"double literal {v!r} is too large to compare exactly with {_tn(target)}")
            return Fraction(v)
        if isinstance(v, str):
            if k is Kind.DECIMAL:
                # ANSI Spark compares a decimal with a string as two doubles, not in decimal order.
                raise _err(f"string {v!r} against {_tn(target)}: Spark compares them as doubles; use a decimal literal")
            d = parse_numeral(v)
            if d is None:
                raise _err(f"string {v!r} is not a valid {_tn(target)}")
            x = _fraction(d) * unit
            lo, hi = _discrete_domain(target)
            if x.denominator != 1 or not lo <= x <= hi:
                raise _err(
                    f"string {v!r} is not exactly a {_tn(target)} value and Spark's casts disagree about it; "
                    "write a numeric literal"
                )
            return x
        raise _err(f"{describe_literal(v)} cannot be compared with a {_tn(target)} term")
    if k is Kind.DATE:
        if isinstance(v, DateLiteral):
            return Fraction(v.days)
        if isinstance(v, TimestampLiteral):
            # Spark casts the date to its midnight (a wall time; an instant in the session zone
            # for a TIMESTAMP literal) and compares: midnights are increasing, so the literal
            # falls on a date's midnight or strictly between two.
            return Fraction(v.micros, MICROS_PER_DAY) if v.ntz else _date_of_instant(v.micros)
        if isinstance(v, str):
            return Fraction(parse_date_text(v))
        raise _err(f"{describe_literal(v)} cannot be compared with a date term")
    # timestamp (ntz: wall times) / timestamptz (instants)
    zone = current_zone()
    if k is Kind.TIMESTAMPTZ:
        if isinstance(v, TimestampLiteral):
            # A TIMESTAMP_NTZ literal is cast to an instant in the session zone: one value, exact.
            return Fraction(zone.instant(v.micros) if v.ntz else v.micros)
        if isinstance(v, DateLiteral):
            return Fraction(zone.instant(v.days * MICROS_PER_DAY))
        if isinstance(v, str):
            return Fraction(parse_timestamp_text(v, ntz=False).micros)
        raise _err(f"{describe_literal(v)} cannot be compared with a {_tn(target)} term")
    if isinstance(v, TimestampLiteral):
        if not v.ntz and not zone.is_utc:
            # Spark casts the *term* to an instant through the zone, which is not monotonic in a
            # gap (02:30 after 03:00): no bound on the wall times says which rows match.
            raise ZoneDependent(f"timestamp_ntz against {describe_literal(v)} in time zone {zone.name}")
        return Fraction(v.micros)
    if isinstance(v, DateLiteral):
        return Fraction(v.days * MICROS_PER_DAY)
    if isinstance(v, str):
        return Fraction(parse_timestamp_text(v, ntz=True).micros)
    raise _err(f"{describe_literal(v)} cannot be compared with a {_tn(target)} term")


def _date_of_instant(micros: int) -> Fraction:
    """Where an instant falls among dates' midnights in the session zone: the date whose midnight
    it is, else halfway between the dates around it."""
    zone = current_zone()
    if zone.is_utc:
        return Fraction(micros, MICROS_PER_DAY)
    d = zone.wall(micros) // MICROS_PER_DAY
    # The wall date's midnight is at or before the instant but for zones whose transitions cross
    # midnight: step until midnight(d) <= micros < midnight(d + 1).
    while zone.instant(d * MICROS_PER_DAY) > micros:
        d -= 1
    while zone.instant((d + 1) * MICROS_PER_DAY) <= micros:
        d += 1
    return Fraction(d) if zone.instant(d * MICROS_PER_DAY) == micros else Fraction(2 * d + 1, 2)


def _float_value(target: ShreddedType, v: LiteralValue) -> float:
    """The double Spark compares a float/double term with (float32 values widen exactly)."""
    if isinstance(v, bool):
        raise _err(f"boolean {v} cannot be compared with a {_tn(target)} term")
    if isinstance(v, Float32Literal):
        return v.value
    if isinstance(v, float):
        return v
    if isinstance(v, int):
        if target.kind is Kind.FLOAT32:
            # Without ANSI Spark casts the integer to FLOAT (rounded to float32), with ANSI (its
            # default) both sides to DOUBLE: the modes agree only on integers float32 holds exactly.
            g = nearest_float32(Fraction(v))
            if Fraction(g) != v:
                raise _err(
                    f"integer {v} is not exactly a float value and Spark's modes compare it differently "
                    "(as float without ANSI, as double with it)"
                )
            return g
        return float(v) if abs(v) < 2**1024 else math.copysign(math.inf, v)
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, str):
        low = v.strip().lower()
        if low in _INF:
            return _INF[low]
        if low in ("nan", "+nan", "-nan"):
            raise _err("NaN is not a comparable literal; use is_nan / not_nan")
        d = parse_numeral(v)
        if d is None:
            raise _err(f"string {v!r} is not a valid {_tn(target)}")
        f = float(d)
        if target.kind is Kind.FLOAT32:
            f = to_float32(f)
        if math.isfinite(f) and Fraction(f) != _fraction(d):
            raise _err(
                f"string {v!r} is not exactly a {_tn(target)} value and Spark's casts disagree about it; "
                "write a numeric literal"
            )
        return f
    raise _err(f"{describe_literal(v)} cannot be compared with a {_tn(target)} term")


def domain_extremes(target: ShreddedType) -> tuple[Bound, Bound]:
    """The least and greatest value of an ordered target type (floats: -inf and +inf, below NaN)."""
    k = target.kind
    if k in (Kind.FLOAT32, Kind.FLOAT64):
        return -math.inf, math.inf
    if k is Kind.BOOLEAN:
        return False, True
    if k in INTEGER_KINDS or k in (Kind.DECIMAL, Kind.DATE, Kind.TIMESTAMP, Kind.TIMESTAMPTZ):
        lo, hi = _discrete_domain(target)
        return _discrete_bound(target, lo), _discrete_bound(target, hi)
    raise _err(f"{_tn(target)} has no greatest value")  # varchar/blob images are always exact


def _no_neg_zero(f: float) -> float:
    # -0.0 == 0.0 for every comparison in Spark; one spelling keeps trees canonical.
    return 0.0 if f == 0 else f


def in_list_literals(target: ShreddedType, values: list[LiteralValue]) -> list[LiteralValue]:
    """The literals of ``term IN (values)`` as Spark compares them: all of them and the term in
    one common type (``In``'s type coercion), not each literal with the term on its own. The one
    case where that differs: an integer term and a DOUBLE literal in the list make the comparison
    DOUBLE for every literal, so ``bigint IN (2**60, 1.0D)`` holds for 2**60 + 1 (both cast to
    the same double) though ``bigint = 2**60`` does not. The other literals are then given as the
    doubles Spark casts them to (and the integer-vs-double rule of :func:`literal_image` applies:
    beyond 2**53 no bound is exact, an error, so the list is unknown)."""
    if target.kind not in INTEGER_KINDS or not any(type(v) is float for v in values):
        return values
    out: list[LiteralValue] = []
    for v in values:
        if isinstance(v, bool):
            out.append(v)
        elif isinstance(v, int | Decimal):
            out.append(float(v))  # Spark's casts to double round to nearest, as these do
        elif isinstance(v, str):
            d = parse_numeral(v)
            out.append(float(d) if d is not None else v)
        else:
            out.append(v)
    return out


_CANONICAL_INT = re.compile(r"-?(0|[1-9][0-9]*)")
_CANONICAL_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def check_sql_in_list(target: ShreddedType, values: list[LiteralValue]) -> None:
    """For Spark SQL text (JSON filters type their strings per value): an IN list with a string
    literal on a term that is not a string. ANSI Spark casts the strings to the term's type, Spark
    without ANSI casts the term and every literal to STRING (``1 IN ('01')``: true with ANSI, false
    without). The modes agree only when each literal is what the term's values print as:
    canonical integers (``'5'``, or ``5``) on an integer term, canonical dates (``'2024-03-01'``,
    or a DATE literal) on a date term. Anything else is an error (the list is unknown)."""
    k = target.kind
    if k in (Kind.VARCHAR, Kind.BLOB) or not any(isinstance(v, str) for v in values):
        return
    for v in values:
        if k in INTEGER_KINDS and (
            (type(v) is int) or (isinstance(v, str) and _CANONICAL_INT.fullmatch(v) is not None and v != "-0")
        ):
            continue
        if k is Kind.DATE and (
            isinstance(v, DateLiteral)
            or (isinstance(v, str) and _CANONICAL_DATE.fullmatch(v) is not None and v[:4] != "0000")
        ):
            continue
        raise _err(
            f"IN list mixing {describe_literal(v)} with string literals on a {_tn(target)} term: Spark compares "
            "it as strings without ANSI and as values with it"
        )


def literal_image(target: ShreddedType, v: LiteralValue) -> Image:
    """Place a literal among the target type's values (see the module docstring)."""
    _reject_nan(v)
    k = target.kind
    if k in INTEGER_KINDS or k in (Kind.DECIMAL, Kind.DATE, Kind.TIMESTAMP, Kind.TIMESTAMPTZ):
        return _discrete_image(target, _discrete_value(target, v))
    if k in (Kind.FLOAT32, Kind.FLOAT64):
        f = _float_value(target, v)
        if k is Kind.FLOAT64:
            return Image(_no_neg_zero(f))
        g = to_float32(f)
        if g == f:
            return Image(_no_neg_zero(g))
        # Between two float32 values (or past FLOAT32_MAX, where +inf is the next one).
        if g > f:
            return Image(None, _no_neg_zero(next_float32(g, up=False)), _no_neg_zero(g))
        return Image(None, _no_neg_zero(g), _no_neg_zero(next_float32(g, up=True)))
    if k is Kind.BOOLEAN:
        if isinstance(v, bool):
            return Image(v)
        if isinstance(v, str) and v.strip().lower() in ("true", "false"):
            return Image(v.strip().lower() == "true")
        raise _err(f"{describe_literal(v)} cannot be compared with a boolean term")
    if k is Kind.VARCHAR:
        if isinstance(v, str):
            if lone_surrogate(v):
                # A lone surrogate (possible in JSON text) is no Spark string: no value equals it.
                raise _err(f"string {v!r} is not valid Unicode")
            return Image(v)
        raise _err(
            f"{describe_literal(v)} cannot be compared with a string term (write it as a string literal)"
        )
    if k is Kind.BLOB:
        if isinstance(v, bytes):
            return Image(v)
        if isinstance(v, str):
            # Spark casts a string to BINARY as its UTF-8 bytes.
            return Image(v.encode("utf-8"))
        raise _err(f"{describe_literal(v)} cannot be compared with a binary term")
    raise _err(f"{_tn(target)} is not a supported target type")
