"""Hive partition values from a data file's path, typed exactly as Spark's partition discovery.

A ``name=value`` directory (Spark's ``partitionBy`` layout, DuckDB's ``PARTITION_BY``) gives each
file under it the constant ``value`` for column ``name``. This module follows Spark 4
(``PartitioningUtils``, ``ExternalCatalogUtils``) with ``partitionColumnTypeInference.enabled``
(the default) and the default timestamp type (``TIMESTAMP_LTZ``):

* which segments count (:func:`partition_values`): walking up from the file's directory to
  ``base`` (the table's location), segments without ``=`` are skipped until the first
  ``name=value`` one, which starts a run that the next segment without ``=`` ends (Spark's
  ``parsePartition``). Without a base, only the run directly above the file counts. A
  ``_temporary`` directory on the way means the file has no partition values.
* names and string values are unescaped by ``unescapePathName`` (``%XX`` of two ASCII hex digits
  is the character U+00XX; anything else stays as it is: ``%C3%A9`` is ``Ã©``, as in Spark);
  ``__HIVE_DEFAULT_PARTITION__`` is SQL NULL.
* the type of one value (:func:`infer_type`), tried in Spark's order on the text *as it is in the
  path*: ``int`` (Java ``Integer.parseInt``: sign, Unicode decimal digits), ``bigint``,
  ``decimal(P,0)`` (Java ``BigDecimal`` with no fraction digits left, P <= 38: ``1e5`` is
  ``decimal(6,0)``), ``double`` (Java ``Double.parseDouble``: trims control characters and
  spaces, ``NaN``, ``Infinity``, ``1d``, hex ``0x1p3``), ``timestamp`` (exactly
  ``yyyy-MM-dd HH:mm:ss`` with at most one fraction digit, on the unescaped text), ``date``
  (exactly ``yyyy-MM-dd``), else ``string``.
* the column's type over all files (:func:`merge_types`): ``findWiderTypeForPartitionColumn``
  (int+bigint = bigint, int+double = double, bigint or decimal with double = string, integers
  with decimals widen the decimal, date+timestamp = timestamp, anything else = string); every
  value is then read again under that type (:func:`retype`, Spark's
  ``castPartValueToDesiredType``).

Spark types map onto the value model as int = ``int32``, bigint = ``int64``, decimal =
``decimal(P,S)``, double = ``float64``, date = ``date``, timestamp = ``timestamptz`` (an instant,
microseconds since the epoch), string = ``varchar``; a column whose every value is NULL has
Spark's ``void`` type, which :func:`merge_types` answers as ``None`` (no type: its terms never
prune). A ``timestamp`` partition value has no zone in the path: Spark reads it in the session
time zone, and shredcat types it in **UTC** (``spark.sql.session.timeZone=UTC``, as shredcat's own
Spark sessions set it). A plan read in another session zone keeps such terms unknown
(:mod:`service.pruning.zones`); declare such a column as a string, or write the table with UTC,
for them to prune there.

Pure functions, no I/O: the path is only text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation

from service.errors import InvalidPathError, InvalidStatsError
from service.stats.model import ColumnStats, PartitionValue
from service.values import (
    DECIMAL_CONTEXT,
    Bound,
    Kind,
    ShreddedType,
    days_from_civil,
    to_float32,
    valid_ymd,
)

__all__ = [
    "DEFAULT_PARTITION_NAME",
    "column_type",
    "escape_path_name",
    "infer_type",
    "merge_types",
    "partition_stats",
    "partition_values",
    "retype",
    "unescape_path_name",
]

DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"

INT32 = ShreddedType(Kind.INT32)
INT64 = ShreddedType(Kind.INT64)
FLOAT64 = ShreddedType(Kind.FLOAT64)
DATE = ShreddedType(Kind.DATE)
TIMESTAMPTZ = ShreddedType(Kind.TIMESTAMPTZ)
VARCHAR = ShreddedType(Kind.VARCHAR)

_MAX_DECIMAL_PRECISION = 38

# --- escaping (ExternalCatalogUtils) -----------------------------------------------------------

_HEX = "0123456789abcdefABCDEF"
_CHARS_TO_ESCAPE = frozenset(
    [chr(c) for c in range(0x20)] + ['"', "#", "%", "'", "*", "/", ":", "=", "?", "\\", "\x7f", "{", "[", "]", "^"]
)


def unescape_path_name(text: str) -> str:
    """Spark's ``unescapePathName``: ``%XX`` (two ASCII hex digits) is the character U+00XX."""
    if "%" not in text:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "%" and i + 2 < n and text[i + 1] in _HEX and text[i + 2] in _HEX:
            out.append(chr(int(text[i + 1 : i + 3], 16)))
            i += 3
        else:
            out.append(c)
            i += 1
    return "".join(out)


def escape_path_name(text: str) -> str:
    """Spark's ``escapePathName`` (POSIX set): the directory text Spark writes for a value."""
    return "".join(f"%{ord(c):02X}" if c in _CHARS_TO_ESCAPE else c for c in text)


# --- Java's number parsers --------------------------------------------------------------------

# Java's Character.digit(c, 10) accepts every Unicode decimal digit of the BMP (Python's \d is the
# same category, Nd; supplementary-plane digits are two UTF-16 chars in Java and fail there).
_JAVA_INTEGER = re.compile(r"[+-]?\d+")
_JAVA_BIG_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_JAVA_DOUBLE = re.compile(
    r"[+-]?(?:NaN|Infinity|(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?)"
)


def _bmp(text: str) -> bool:
    return all(ord(c) < 0x10000 for c in text)


def _java_integer(text: str, lo: int, hi: int) -> int | None:
    if not _JAVA_INTEGER.fullmatch(text) or not _bmp(text):
        return None
    v = int(text)
    return v if lo <= v <= hi else None


def _java_big_decimal(text: str) -> Decimal | None:
    if not _JAVA_BIG_DECIMAL.fullmatch(text) or not _bmp(text):
        return None
    try:
        return Decimal(text)
    except InvalidOperation:  # pragma: no cover - the pattern admits only valid decimals
        return None


def _java_double(text: str) -> float | None:
    # String.trim(): every character <= U+0020 at either end.
    i, j = 0, len(text)
    while i < j and text[i] <= " ":
        i += 1
    while j > i and text[j - 1] <= " ":
        j -= 1
    s = text[i:j]
    if not _JAVA_DOUBLE.fullmatch(s):
        return None
    if s[-1] in "fFdD" and "nfinity" not in s and "NaN" not in s:
        s = s[:-1]
    body = s.lstrip("+-")
    if body[:2] in ("0x", "0X"):
        v = float.fromhex(body)
        return -v if s.startswith("-") else v
    if body == "NaN":
        return math.nan
    if body == "Infinity":
        return -math.inf if s.startswith("-") else math.inf
    return float(s)


def _inferred_decimal(text: str) -> tuple[ShreddedType, Decimal] | None:
    """``DecimalType.fromDecimal(Decimal(new BigDecimal(raw)))`` for a raw with scale <= 0."""
    d = _java_big_decimal(text)
    if d is None:
        return None
    _sign, digits, exponent = d.as_tuple()
    assert isinstance(exponent, int)
    if exponent < 0:  # BigDecimal scale > 0: not inferred as a decimal (1.5 is a double)
        return None
    # Spark turns a negative BigDecimal scale into scale 0 with precision + |scale| digits
    # (measured: 1e5 and 0e5 are decimal(6,0)).
    precision = len(digits) + exponent
    if precision > _MAX_DECIMAL_PRECISION:
        return None
    return ShreddedType(Kind.DECIMAL, precision, 0), Decimal(int(d))


# --- dates and timestamps ---------------------------------------------------------------------

_INFER_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
# TimestampFormatter("yyyy-MM-dd HH:mm:ss[.S]") parses exactly one optional fraction digit
# (measured: .1 is a timestamp, .12 and .123456 are strings).
_INFER_TIMESTAMP = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]))?")
# What retype accepts for a declared date/timestamp: the common subset of Spark's lenient casts
# (anything else is refused rather than guessed).
_CAST_DATE = re.compile(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:[ T].*)?", re.DOTALL)
_CAST_TIMESTAMP = re.compile(
    r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:[ T]([0-9]{1,2}):([0-9]{1,2})(?::([0-9]{1,2})(?:\.([0-9]{1,9}))?)?"
    r"(Z|[+-][0-9]{2}:?[0-9]{2})?)?"
)
_MICROS_PER_SECOND = 1_000_000


def _date_days(y: str, m: str, d: str) -> int | None:
    yy, mm, dd = int(y), int(m), int(d)
    return days_from_civil(yy, mm, dd) if valid_ymd(yy, mm, dd) else None


def _infer_timestamp(unescaped: str) -> int | None:
    m = _INFER_TIMESTAMP.fullmatch(unescaped)
    if m is None:
        return None
    days = _date_days(m[1], m[2], m[3])
    hh, mi, ss = int(m[4]), int(m[5]), int(m[6])
    if days is None or hh > 23 or mi > 59 or ss > 59:
        return None
    frac = int(m[7]) * 100_000 if m[7] else 0
    return (days * 86_400 + hh * 3600 + mi * 60 + ss) * _MICROS_PER_SECOND + frac


def _cast_timestamp(text: str, with_zone: bool) -> int | None:
    m = _CAST_TIMESTAMP.fullmatch(text.strip())
    if m is None:
        return None
    days = _date_days(m[1], m[2], m[3])
    hh, mi, ss = int(m[4] or 0), int(m[5] or 0), int(m[6] or 0)
    if days is None or hh > 23 or mi > 59 or ss > 59:
        return None
    frac = int((m[7] or "0").ljust(9, "0")[:6])
    micros = (days * 86_400 + hh * 3600 + mi * 60 + ss) * _MICROS_PER_SECOND + frac
    zone = m[8]
    if zone and zone != "Z":
        if not with_zone:
            return None
        digits = zone[1:].replace(":", "")
        offset = (int(digits[:2]) * 60 + int(digits[2:])) * 60 * _MICROS_PER_SECOND
        micros -= offset if zone[0] == "+" else -offset
    elif zone == "Z" and not with_zone:
        return None
    return micros


# --- inference --------------------------------------------------------------------------------


def _infer(raw: str) -> tuple[ShreddedType | None, Bound | None]:
    """Spark's ``inferPartitionColumnValue`` on the text as it appears in the path, with the value
    ``castPartValueToDesiredType`` gives under that type. ``(None, None)`` is Spark's NullType."""
    v_int = _java_integer(raw, -(2**31), 2**31 - 1)
    if v_int is not None:
        return INT32, v_int
    v_long = _java_integer(raw, -(2**63), 2**63 - 1)
    if v_long is not None:
        return INT64, v_long
    dec = _inferred_decimal(raw)
    if dec is not None:
        return dec
    v_double = _java_double(raw)
    if v_double is not None:
        return FLOAT64, v_double
    ts = _infer_timestamp(unescape_path_name(raw))
    if ts is not None:
        return TIMESTAMPTZ, ts
    m = _INFER_DATE.fullmatch(raw)
    if m is not None:
        days = _date_days(m[1], m[2], m[3])
        if days is not None:
            return DATE, days
    if raw == DEFAULT_PARTITION_NAME:
        return None, None
    return VARCHAR, unescape_path_name(raw)


def infer_type(raw: str) -> ShreddedType | None:
    """The type Spark infers for one partition value, given as it appears in the path (escaped);
    ``None`` for ``__HIVE_DEFAULT_PARTITION__`` (Spark's NullType)."""
    return _infer(raw)[0]


def _split(path: str) -> list[str]:
    """Path components (an object-store URI's scheme and bucket are not components of interest,
    but they contain no ``=`` that could be mistaken for a value once the walk has stopped)."""
    if "://" in path:
        path = path.split("://", 1)[1]
        path = path.split("/", 1)[1] if "/" in path else ""
    return [p for p in path.split("/") if p]


def partition_values(path: str, base: str | None = None) -> tuple[PartitionValue, ...]:
    """The partition values of the data file at ``path``, outermost first, each typed by Spark's
    inference for that value alone (merge them per column with :func:`merge_types` and
    :func:`retype`).

    With ``base`` (the table's location), only directories below it are considered (as Spark's
    walk from the file up to its base path) and ``path`` must lie under it; without, only the
    contiguous run of ``name=value`` directories directly above the file counts. Raises
    :class:`~service.errors.InvalidPathError` for what Spark refuses: an empty name or value
    (``a=``), or one column twice in one path.
    """
    dirs = _split(path)[:-1]
    if base is not None:
        base_parts = _split(base)
        if dirs[: len(base_parts)] != base_parts or (("://" in path) != ("://" in base)):
            raise InvalidPathError(f"{path} is not inside the table location {base}", details={"path": path})
        if "://" in path and path.split("://", 1)[1].split("/", 1)[0] != base.split("://", 1)[1].split("/", 1)[0]:
            raise InvalidPathError(f"{path} is not inside the table location {base}", details={"path": path})
        dirs = dirs[len(base_parts) :]
    found: list[PartitionValue] = []
    for segment in reversed(dirs):
        if segment.lower() == "_temporary":
            return ()
        eq = segment.find("=")
        if eq < 0:
            # Spark skips such directories below the first partition directory (a=1/sub/f), but
            # only up to a base path it knows; without one, only the run directly above the
            # file counts, so that a "=" in some unrelated ancestor is never a column.
            if found or base is None:
                break
            continue
        name = unescape_path_name(segment[:eq])
        raw = segment[eq + 1 :]
        if not name or not raw:
            raise InvalidPathError(
                f"empty partition column {'name' if not name else 'value'} in {segment!r} of {path}",
                details={"path": path},
            )
        t, value = _infer(raw)
        found.append(
            PartitionValue(
                column=name,
                raw=None if t is None else unescape_path_name(raw),
                value_type=VARCHAR if t is None else t,
                value=value,
            )
        )
    found.reverse()
    seen: set[str] = set()
    for pv in found:
        # Spark resolves partition columns case-insensitively by default.
        key = pv.column.lower()
        if key in seen:
            raise InvalidPathError(f"partition column {pv.column!r} appears twice in {path}", details={"path": path})
        seen.add(key)
    return tuple(found)


# --- the column's type ------------------------------------------------------------------------

_NUMERIC_PRECEDENCE = (Kind.INT8, Kind.INT16, Kind.INT32, Kind.INT64, Kind.FLOAT32, Kind.FLOAT64)
_INTEGRAL_DECIMAL = {Kind.INT8: 3, Kind.INT16: 5, Kind.INT32: 10, Kind.INT64: 20}


def _wider_decimal(p1: int, s1: int, p2: int, s2: int) -> ShreddedType:
    scale = max(s1, s2)
    rng = max(p1 - s1, p2 - s2)
    return ShreddedType(Kind.DECIMAL, min(rng + scale, 38), min(scale, 38))


def _wider(t1: ShreddedType | None, t2: ShreddedType | None) -> ShreddedType | None:
    """Spark's ``findWiderTypeForPartitionColumn`` (for the types partition values can have)."""
    if t1 is None:
        return t2
    if t2 is None or t1 == t2:
        return t1
    k1, k2 = t1.kind, t2.kind
    kinds = {k1, k2}
    if Kind.FLOAT64 in kinds and (Kind.DECIMAL in kinds or Kind.INT64 in kinds):
        return VARCHAR
    if k1 in _NUMERIC_PRECEDENCE and k2 in _NUMERIC_PRECEDENCE:
        return t1 if _NUMERIC_PRECEDENCE.index(k1) > _NUMERIC_PRECEDENCE.index(k2) else t2
    if Kind.DECIMAL in kinds:
        d, o = (t1, t2) if k1 is Kind.DECIMAL else (t2, t1)
        assert d.precision is not None and d.scale is not None
        if o.kind is Kind.DECIMAL:
            assert o.precision is not None and o.scale is not None
            return _wider_decimal(d.precision, d.scale, o.precision, o.scale)
        if o.kind in _INTEGRAL_DECIMAL:
            digits = _INTEGRAL_DECIMAL[o.kind]
            if d.precision - d.scale >= digits:
                return d
            return _wider_decimal(d.precision, d.scale, digits, 0)
        if o.kind is Kind.FLOAT32:
            return FLOAT64
        return VARCHAR
    if kinds <= {Kind.DATE, Kind.TIMESTAMP, Kind.TIMESTAMPTZ}:
        return TIMESTAMPTZ if Kind.TIMESTAMPTZ in kinds else ShreddedType(Kind.TIMESTAMP)
    return VARCHAR


def merge_types(types: Iterable[ShreddedType | None]) -> ShreddedType | None:
    """The table-level type Spark gives a partition column whose values were inferred as
    ``types`` (``None`` = a NULL value). ``None`` when every value is NULL (Spark's ``void``)."""
    merged: ShreddedType | None = None
    for t in types:
        merged = _wider(merged, t)
    return merged


def column_type(values: Iterable[PartitionValue]) -> ShreddedType | None:
    """:func:`merge_types` over one column's values (NULL values do not take part)."""
    return merge_types(None if pv.value is None and pv.raw is None else pv.value_type for pv in values)


# --- a value under another type ---------------------------------------------------------------


def _refuse(pv: PartitionValue, t: ShreddedType) -> InvalidStatsError:
    return InvalidStatsError(
        f"partition value {pv.raw!r} of column {pv.column!r} is not a valid {t.name}",
        details={"column": pv.column, "value": pv.raw, "type": t.name},
    )


def retype(pv: PartitionValue, t: ShreddedType) -> PartitionValue:
    """``pv`` read as type ``t`` (the column's merged type, or a type the table declares), as
    Spark's ``castPartValueToDesiredType``; a value that does not convert raises
    :class:`~service.errors.InvalidStatsError` (Spark fails the read the same way). NULL stays
    NULL. Types Spark cannot give a partition column (time, uuid, nanosecond timestamps) are
    refused, and so are date/timestamp texts outside the common forms
    (``yyyy-m-d[ |T...]``, ``yyyy-m-d[ |T]h:m[:s[.f]][Z|+hh:mm]``) rather than guessed."""
    if pv.raw is None and pv.value is None:
        return PartitionValue(pv.column, None, t, None)
    raw = pv.raw
    assert raw is not None
    # Spark parses numbers and dates from the path's text: the canonical escaped form of ``raw``.
    text = escape_path_name(raw)
    k = t.kind
    value: Bound | None
    if k is Kind.VARCHAR:
        value = raw
    elif k in (Kind.INT8, Kind.INT16, Kind.INT32):
        v = _java_integer(text, -(2**31), 2**31 - 1)
        if v is None:
            raise _refuse(pv, t)
        # Integer.parseInt(value).toByte / .toShort wrap, as in Spark.
        bits = {Kind.INT8: 8, Kind.INT16: 16, Kind.INT32: 32}[k]
        v &= (1 << bits) - 1
        value = v - (1 << bits) if v >= 1 << (bits - 1) else v
    elif k is Kind.INT64:
        value = _java_integer(text, -(2**63), 2**63 - 1)
    elif k in (Kind.FLOAT64, Kind.FLOAT32):
        d = _java_double(text)
        value = None if d is None else (to_float32(d) if k is Kind.FLOAT32 else d)
    elif k is Kind.DECIMAL:
        dec = _java_big_decimal(text)
        value = None
        if dec is not None:
            assert t.scale is not None and t.precision is not None
            q = dec.quantize(Decimal(1).scaleb(-t.scale), context=DECIMAL_CONTEXT)
            # Only an exact value in range: Spark keeps the literal's own scale, so a rounded
            # value would not be Spark's.
            if q == dec and abs(q.scaleb(t.scale)) < Decimal(10) ** t.precision:
                value = q
    elif k is Kind.DATE:
        m = _CAST_DATE.fullmatch(text.strip())
        value = None if m is None else _date_days(m[1], m[2], m[3])
    elif k in (Kind.TIMESTAMPTZ, Kind.TIMESTAMP):
        value = _cast_timestamp(raw, with_zone=k is Kind.TIMESTAMPTZ)
    elif k is Kind.BOOLEAN:
        value = {"true": True, "false": False}.get(text.lower())
    elif k is Kind.BLOB:
        value = text.encode()
    else:
        value = None
    if value is None:
        raise _refuse(pv, t)
    return PartitionValue(pv.column, raw, t, value)


def partition_stats(pv: PartitionValue, record_count: int) -> ColumnStats:
    """The partition column as a plain column of a file with ``record_count`` rows: every row holds
    the value (min = max = value) or every row is NULL. Counts follow DuckLake's
    ``ducklake_file_column_stats`` (``value_count`` is the number of non-NULL values); no bytes
    are stored. NaN has no bound (``contains_nan`` true, bounds unknown)."""
    t = pv.value_type
    is_float = t.kind in (Kind.FLOAT32, Kind.FLOAT64)
    v = pv.value
    if v is None:
        return ColumnStats(pv.column, t, 0, 0, record_count, None, None, False if is_float else None)
    if isinstance(v, float) and math.isnan(v):
        return ColumnStats(pv.column, t, 0, record_count, 0, None, None, True)
    return ColumnStats(pv.column, t, 0, record_count, 0, v, v, False if is_float else None)
