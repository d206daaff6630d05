"""Parity of shredcat's extractor with the real DuckLake 1.5.5 extension.

Every case writes a table through DuckLake, runs :func:`extract_file` on each of DuckLake's data
files and compares our rows with the rows DuckLake stored for that file, keyed by
(column, variant_path): identical strings in every ``ducklake_file_variant_stats`` column.

The only places where the expected value is not DuckLake's are the deliberate differences of
``docs/ducklake-format.md`` (§0, §2, §4 and "DuckLake defects found by the parity suite"):
float32 digits (compared by value), files with several row groups (DuckLake drops paths and
bounds and takes ``contains_nan`` from the last row group) and long strings that cannot be
bounded from above without being the max (DuckLake drops both bounds). There the expected value
is the truth, computed in this module from the very values the SQL inserts.

Cases marked xfail(strict) document shredcat bugs found here (none open: the 38-digit decimal
rounding found by this module is fixed in service.values.DECIMAL_CONTEXT).

Speed: opening a DuckLake connection costs ~0.15 s and a table ~0.05 s per statement, so all
cases that share options write their tables into one catalog (one table per case) over one
connection kept open for the module. Tables are independent in the catalog, so this changes
nothing in the per-file rows.
"""

from __future__ import annotations

import math
import os
import random
import re
import struct
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
import pytest

from service.stats.extract import extract_file

from .ducklake import (
    VARIANT_STATS_KEYS,
    DuckLakeFileStats,
    DuckLakeTable,
    ducklake_available,
    ducklake_connection,
    read_ducklake_table,
    unavailable_reason,
)

if TYPE_CHECKING:
    import duckdb

# One worker runs the whole module: the connections of the `lake` fixture are shared.
pytestmark = [pytest.mark.xdist_group("ducklake")]

# docs/ducklake-format.md §1/§4: row groups never go below 2048 rows; one thread makes the row
# group layout (and the order of rows) deterministic.
RG = 2048
SEVERAL_ROW_GROUPS: Mapping[str, object] = {"parquet_row_group_size": RG}

Row = dict[str, Any]
Truth = dict[str, Any]
"""The true values of some ``ducklake_file_variant_stats`` columns of one path (DuckLake's
string rendering), computed from the inserted data."""


# --- building inserts -------------------------------------------------------------------------


def q(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def typed(sql_type: str, *values: str | None) -> str:
    """One insert: each value, given as text, CAST to ``sql_type`` then to VARIANT, in order.

    Casting from text reaches every value DuckDB can parse ('nan', '-0.0', 'infinity',
    '0044-03-15 (BC)', '24:00:00', ...), which SQL literals cannot always express (the literal
    -0.0 is DECIMAL 0, docs §2). None is an SQL NULL row.
    """
    rows = ", ".join("(NULL)" if v is None else f"({q(v)})" for v in values)
    return f"SELECT CAST(x AS {sql_type})::VARIANT FROM (VALUES {rows}) t(x)"


def variants(*exprs: str) -> str:
    """One insert: one row per SQL expression, each cast to VARIANT, in order (VALUES keeps it)."""
    rows = ", ".join(f"(({e})::VARIANT)" for e in exprs)
    return f"SELECT v FROM (VALUES {rows}) t(v)"


def over_range(n: int, expr: str) -> str:
    """One insert of ``n`` rows, ``expr`` (in terms of ``i``) cast to VARIANT."""
    return f"SELECT ({expr})::VARIANT FROM range({n}) t(i)"


def fields_row(sql_type: str, values: Sequence[str]) -> str:
    """One row: an object with one field per value (f0, f1, ...), each CAST to ``sql_type``."""
    body = ", ".join(f"'f{n}': CAST({q(v)} AS {sql_type})" for n, v in enumerate(values))
    return f"SELECT {{{body}}}::VARIANT"


def blob(data: bytes) -> str:
    """A BLOB expression (unhex keeps any byte, including 0x00 and 0xFF)."""
    return f"unhex('{data.hex()}')"


# --- the truth, computed in Python ----------------------------------------------------------

MAX_BOUND_BYTES = 256  # docs/ducklake-format.md §2, strings and blobs longer than 256 bytes


def truncated_min(value: bytes, *, varchar: bool) -> bytes:
    """The lower bound DuckDB keeps for a long string/blob: its first 256 bytes, cut back to a
    character boundary for varchar (docs §2: `'x'*255 + 'é' + 'zz'` → `'x'*255`)."""
    if len(value) <= MAX_BOUND_BYTES:
        return value
    prefix = value[:MAX_BOUND_BYTES]
    return prefix.decode("utf-8", errors="ignore").encode() if varchar else prefix


def truncated_max(value: bytes, *, varchar: bool) -> bytes | None:
    """The upper bound DuckDB keeps: the first 256 bytes up to the last byte below 0x7F
    (varchar) / 0xFF (blob), that byte incremented; None when there is no such byte."""
    if len(value) <= MAX_BOUND_BYTES:
        return value
    prefix = value[:MAX_BOUND_BYTES]
    limit = 0x7F if varchar else 0xFF
    for i in range(len(prefix) - 1, -1, -1):
        if prefix[i] < limit:
            return prefix[:i] + bytes([prefix[i] + 1])
    return None


def _is_nan(v: object) -> bool:
    return isinstance(v, float) and math.isnan(v)


def truth(shredded_type: str, values: Sequence[object], fmt: Callable[[Any], str] = str) -> Truth:
    """The row one leaf deserves, from its entries (None = a null entry: missing key, Variant
    null, SQL NULL row, empty array).

    NaN counts as a value but never bounds; of equal values the first one seen is kept
    (Python's min/max do that, as DuckDB does for -0.0 and 0.0).
    """
    present = [v for v in values if v is not None]
    ordered = [v for v in present if not _is_nan(v)]
    lo: Any = min(ordered) if ordered else None  # type: ignore[type-var]
    hi: Any = max(ordered) if ordered else None  # type: ignore[type-var]
    if shredded_type in ("varchar", "blob") and lo is not None:
        varchar = shredded_type == "varchar"
        raw_lo = lo.encode() if varchar else lo
        raw_hi = hi.encode() if varchar else hi
        t_lo, t_hi = truncated_min(raw_lo, varchar=varchar), truncated_max(raw_hi, varchar=varchar)
        if t_hi is None:
            # A max that cannot be bounded loses both bounds, in DuckLake and in shredcat.
            lo = hi = None
        else:
            lo, hi = (t_lo.decode(), t_hi.decode()) if varchar else (t_lo, t_hi)
    is_float = shredded_type in ("float32", "float64")
    return {
        "shredded_type": shredded_type,
        "value_count": len(present),
        "null_count": len(values) - len(present),
        "min_value": None if lo is None else fmt(lo),
        "max_value": None if hi is None else fmt(hi),
        "contains_nan": any(_is_nan(v) for v in present) if is_float else None,
    }


def hex_upper(b: bytes) -> str:
    return b.hex().upper()


# --- cases ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    inserts: tuple[str, ...]
    create: str = "(v VARIANT)"
    row_groups: bool = False
    """Write with ``parquet_row_group_size`` 2048 and one thread (several row groups)."""
    pre_sql: tuple[str, ...] = ()
    truth: Mapping[str, Truth] = field(default_factory=dict)
    """variant_path of column ``v`` in the (single) file -> the true row, where DuckLake differs
    deliberately. With ``row_groups`` it must name every path shredcat reports."""
    why: str = ""
    """For cases with a truth: the documented difference it is about."""
    xfail: str | None = None


def case(case_id: str, *inserts: str, **kw: Any) -> Case:
    return Case(case_id, tuple(inserts), **kw)


def _f32_text(rng: random.Random) -> str:
    while True:
        (f,) = struct.unpack("<f", rng.getrandbits(32).to_bytes(4, "little"))
        if math.isfinite(f):
            return repr(f)  # the exact float32 value as a double: casts back exactly


def _f64_text(rng: random.Random) -> str:
    while True:
        (d,) = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))
        if math.isfinite(d):
            return repr(d)


_rng = random.Random(20240102)
RANDOM_FLOATS = [_f32_text(_rng) for _ in range(300)]
RANDOM_DOUBLES = [_f64_text(_rng) for _ in range(300)]
# Floats of everyday magnitudes, where DuckDB's fmt falls back to exact digits most often (§0).
UNIFORM_FLOATS = [
    repr(struct.unpack("<f", struct.pack("<f", _rng.uniform(-1e9, 1e9)))[0]) for _ in range(300)
]

E_200 = "é" * 200  # 400 bytes, no byte below 0x7F: cannot be bounded from above

PRIMITIVES = [
    case("boolean", typed("BOOLEAN", "true", None, "false")),
    case("boolean-true-only", typed("BOOLEAN", "true", "true")),
    case("tinyint", typed("TINYINT", "-128", "127", "0")),
    case("smallint", typed("SMALLINT", "-32768", "32767")),
    case("integer", typed("INTEGER", "-2147483648", None, "2147483647")),
    case("bigint", typed("BIGINT", "-9223372036854775808", "9223372036854775807")),
    case("bigint-range", "SELECT i FROM range(100) t(i)"),
    # Unsigned and 128-bit integers are written but never shredded (docs §1): no row.
    case("hugeint-no-row", typed("HUGEINT", "1", "2")),
    case("uhugeint-no-row", typed("UHUGEINT", "1", "2")),
    case("ubigint-no-row", typed("UBIGINT", "1", "2")),
    case("uinteger-no-row", typed("UINTEGER", "1", "4000000000")),
    case("usmallint-no-row", typed("USMALLINT", "0", "65535")),
    case("utinyint-no-row", typed("UTINYINT", "0", "255")),
    # float32
    case("float", typed("FLOAT", "1.0", "0.33333334", "3.4028235e38", "-1.5")),
    case("float-1e16-1e-5", typed("FLOAT", "1e16", "1e-5", "0.1")),
    case("float-nan", typed("FLOAT", "1.0", "nan", "-2.5")),
    case("float-nan-inf", typed("FLOAT", "nan", "inf")),
    case("float-nan-neg-inf", typed("FLOAT", "nan", "-inf")),
    case("float-inf-neg-inf", typed("FLOAT", "inf", "-inf")),
    case("float-nan-only", typed("FLOAT", "nan", None)),
    case("float-neg-zero-first", typed("FLOAT", "-0.0", "0.0")),
    case("float-zero-first", typed("FLOAT", "0.0", "-0.0")),
    case("float-neg-zero-max", typed("FLOAT", "-1", "-0.0")),
    case("float-fmt-exact-digits", typed("FLOAT", "-334609.625", "607368768", "226431808")),
    case("float-random", typed("FLOAT", *RANDOM_FLOATS)),
    # One path per random float: every value is its own min and max, so 300 renderings are compared.
    case("float-random-fields", fields_row("FLOAT", RANDOM_FLOATS)),
    case("float-uniform-fields", fields_row("FLOAT", UNIFORM_FLOATS)),
    case("float-denormal", typed("FLOAT", "1e-45", "-1.17549435e-38", "1e-40")),
    # float64
    case("double", typed("DOUBLE", "1.0", "1e16", "1e-5")),
    case("double-exponent-thresholds", typed("DOUBLE", "1e15", "1.2345678901234568e20", "1e21", "1e22")),
    case("double-extremes", typed("DOUBLE", "1e100", "-1e-100", "5e-324")),
    case("double-nan", typed("DOUBLE", "1.0", "nan", "-2.5")),
    case("double-nan-only", typed("DOUBLE", "nan")),
    case("double-nan-neg-inf", typed("DOUBLE", "nan", "-inf")),
    case("double-nan-inf", typed("DOUBLE", "inf", "nan")),
    case("double-inf-neg-inf", typed("DOUBLE", "inf", "-inf", None)),
    case("double-neg-zero-first", typed("DOUBLE", "-0.0", "0.0")),
    case("double-zero-first", typed("DOUBLE", "0.0", "-0.0")),
    case("double-neg-zero-min", typed("DOUBLE", "-0.0", "1")),
    case("double-neg-zero-max", typed("DOUBLE", "-1", "-0.0")),
    case("double-1e16-1e-5-float-values", typed("DOUBLE", "0.1", "1e-5", "1e16", "123456789.125")),
    case("double-random", typed("DOUBLE", *RANDOM_DOUBLES)),
    case("double-random-fields", fields_row("DOUBLE", RANDOM_DOUBLES)),
    # decimals: every physical width (INT32, INT64, FIXED_LEN_BYTE_ARRAY(16)), P = S, negatives
    case("decimal-4-2", typed("DECIMAL(4,2)", "-12.34", "0.05", "99.99")),
    case("decimal-4-2-single", typed("DECIMAL(4,2)", "1.5")),
    case("decimal-9-3", typed("DECIMAL(9,3)", "-0.05", "123456.789", None)),
    case("decimal-18-6", typed("DECIMAL(18,6)", "-0.000001", "123456789012.345678")),
    case("decimal-18-6-negative", typed("DECIMAL(18,6)", "-999999999999.999999", "-0.5")),
    case(
        "decimal-38-10",
        typed("DECIMAL(38,10)", "-1.5", "1234567890123456789012345678.0123456789"),

    ),
    case(
        "decimal-38-10-negative",
        typed("DECIMAL(38,10)", "-9999999999999999999999999999.9999999999", "-0.0000000001"),

    ),
    case("decimal-38-10-zero-one", typed("DECIMAL(38,10)", "0", "1")),
    case(
        "decimal-38-0-wide",
        typed("DECIMAL(38,0)", "-12345678901234567890123456789012345678", "7"),

    ),
    case("decimal-28-digits", typed("DECIMAL(38,10)", "-123456789012345678.0123456789", "0.5")),
    case("decimal-3-3", typed("DECIMAL(3,3)", "0.005", "-0.999")),
    case("decimal-9-9", typed("DECIMAL(9,9)", "0.5", "-0.000000001")),
    case("decimal-18-18", typed("DECIMAL(18,18)", "0.5", "-0.1")),
    case("decimal-38-38", typed("DECIMAL(38,38)", "0.5", "-0.1")),
    case("decimal-38-38-zero", typed("DECIMAL(38,38)", "0", "0.00000000000000000000000000000000000001")),
    case("decimal-5-3", typed("DECIMAL(5,3)", "-0.05", "1.5")),
    case("decimal-5-0", typed("DECIMAL(5,0)", "-5", "12345")),
    case("decimal-2-1", typed("DECIMAL(2,1)", "-0.5", "1.5")),
    # dates
    case("date", typed("DATE", "2024-01-02", "1970-01-01")),
    case("date-bc", typed("DATE", "0044-03-15 (BC)", "2024-01-02")),
    case("date-bc-only", typed("DATE", "0001-01-01 (BC)", "4713-11-24 (BC)")),
    case("date-infinity", typed("DATE", "infinity", "-infinity", "2000-01-01")),
    case("date-years-over-9999", typed("DATE", "0001-01-01", "9999-12-31", "10000-01-01")),
    case("date-far-future", typed("DATE", "275000-06-30", "2000-02-29")),
    case("date-extremes", typed("DATE", "5877642-06-25 (BC)", "5881580-07-10")),
    # times
    case("time", typed("TIME", "00:00:00", "12:34:56.5", "23:59:59.999999")),
    case("time-fractions", typed("TIME", "12:34:56.120", "01:02:03")),
    case("time-micro", typed("TIME", "00:00:00.000001", "12:00:00")),
    case("time-24h", typed("TIME", "24:00:00")),
    case("time-24h-and-midnight", typed("TIME", "24:00:00", "00:00:00", None)),
    # timestamps
    case(
        "timestamp",
        typed("TIMESTAMP", "2024-01-02 03:04:05", "2024-01-02 03:04:05.120", "1969-12-31 23:59:59.999999"),
    ),
    case("timestamp-infinity", typed("TIMESTAMP", "infinity", "2024-01-02")),
    case("timestamp-neg-infinity", typed("TIMESTAMP", "-infinity", "2024-01-02 00:00:00.000001")),
    case("timestamp-bc", typed("TIMESTAMP", "3957-03-15 (BC) 12:00:00", "2024-01-02")),
    case("timestamp-bc-fraction", typed("TIMESTAMP", "0001-12-31 (BC) 23:59:59.5", "0001-01-01 00:00:00")),
    case("timestamp-year-10000", typed("TIMESTAMP", "10000-01-01 00:00:01", "1970-01-01")),
    case(
        "timestamp-extremes", typed("TIMESTAMP", "290309-12-22 (BC) 00:00:00", "294247-01-10 04:00:54.775806")
    ),
    case(
        "timestamp_ns",
        typed("TIMESTAMP_NS", "2024-01-02 03:04:05.123456789", "2024-01-02 03:04:05.1", "1970-01-01"),
    ),
    case(
        "timestamp_ns-pre-epoch",
        typed("TIMESTAMP_NS", "2024-01-02 03:04:05.1234", "1969-12-31 23:59:59.999999999"),
    ),
    case("timestamp_ns-infinity", typed("TIMESTAMP_NS", "infinity", "1969-12-31 23:59:59.999999999")),
    case(
        "timestamp_ns-extremes", typed("TIMESTAMP_NS", "1677-09-22 00:00:00", "2262-04-11 23:47:16.854775806")
    ),
    case("timestamptz", typed("TIMESTAMPTZ", "2024-01-02 03:04:05+02", "2024-01-02 03:04:05.5+00")),
    case("timestamptz-infinity", typed("TIMESTAMPTZ", "infinity", "2024-01-02 03:04:05+02", "-infinity")),
    case(
        "timestamptz-bc", typed("TIMESTAMPTZ", "0044-03-15 (BC) 12:00:00+00", "0001-01-01 00:00:00.000001+00")
    ),
    # DuckLake renders TIMESTAMPTZ bounds in UTC whatever the session time zone.
    case(
        "timestamptz-session-tz",
        typed("TIMESTAMPTZ", "2024-06-01 00:30:00+09", "2024-01-02 03:04:05.25+00"),
        pre_sql=("SET TimeZone = 'Asia/Tokyo'",),
    ),
    # uuid: unsigned big-endian byte order
    case(
        "uuid",
        typed(
            "UUID",
            "01234567-89ab-cdef-0123-456789abcdef",
            "ffffffff-0000-0000-0000-000000000000",
            "7fffffff-0000-0000-0000-000000000000",
            "80000000-0000-0000-0000-000000000000",
        ),
    ),
    case(
        "uuid-sign-bit",
        typed("UUID", "7fffffff-0000-0000-0000-000000000000", "80000000-0000-0000-0000-000000000000"),
    ),
    case(
        "uuid-middle",
        typed("UUID", "00000000-0000-0000-8000-000000000000", "00000000-0000-0000-7fff-000000000000", None),
    ),
    # blob and varchar
    case(
        "blob-high-bytes-empty",
        variants(blob(b"\xff\x00"), blob(b""), blob(b"\x80"), blob(b"\x7f\xff"), "NULL::BLOB"),
    ),
    case("blob-byte-order", variants(blob(b"\x00\x80"), blob(b"\x7f"), blob(b"\x00"), blob(b"\x00\x00"))),
    case("varchar-unicode-empty", typed("VARCHAR", "", "é", "😀", "abc", "Z", None, "ünïcödé")),
    case("varchar-empty-only", typed("VARCHAR", "", "")),
    case(
        "varchar-nul-char",
        variants("chr(0)", "'a' || chr(0)", "'a'", "''"),
        truth={"root": {**truth("varchar", ["\x00", "a\x00", "a", ""]), "max_value": "a\x01"}},
        why="docs §9: a bound holding NUL, which PostgreSQL cannot store, is cut to a NUL-free one "
        "that still bounds the data ('a' || chr(0) -> 'a' || chr(1))",
    ),
    case(
        "varchar-nul-min",
        variants("'b' || chr(0) || 'c'", "'z'"),
        truth={"root": {**truth("varchar", ["b\x00c", "z"]), "min_value": "b"}},
        why="docs §9: the min cut before its first NUL (a prefix sorts first)",
    ),
    case("boolean-false-only", typed("BOOLEAN", "false", None)),
    case(
        "uuid-nil-max",
        typed("UUID", "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff"),
    ),
    case("varchar-newline-quote", typed("VARCHAR", "a\nb", "it's", '"q"', "\t")),
    # other inputs DuckDB shreds as one of the types above (docs §2)
    case("enum", "SELECT x::ENUM('a', 'b')::VARIANT FROM (VALUES ('b'), ('a')) t(x)"),
    case("union", variants("union_value(n := 1)::UNION(n INT, s VARCHAR)")),
    case("json-decimals", typed("JSON", "1.5", "2.25")),
    case("json-negative-ints", typed("JSON", "-1", "-99999999999")),
    case("json-huge-int", typed("JSON", "123456789012345678901234567890")),
    # A non-negative JSON int is a UINT64 Variant: typed INT64 column, value in `value` -> no row.
    case("json-non-negative-int-no-row", typed("JSON", "2", "0")),
    case("json-mixed-scalars-no-row", typed("JSON", '"s"', "true", "null", '"é"')),
]

LONG_STRINGS = [
    # Every row of the truncation table of docs/ducklake-format.md §2.
    case("varchar-256-bytes-not-truncated", variants(f"repeat('x', {MAX_BOUND_BYTES})", "'a'")),
    case("varchar-257-bytes", variants("repeat('x', 257)", "'a'")),
    case("varchar-300-bytes", variants("repeat('x', 300)", "'a'")),
    case("varchar-long-min-and-long", variants("repeat('a', 300)", "repeat('b', 300)", "'c'")),
    case("varchar-min-cut-at-char-boundary", variants("repeat('x', 255) || 'ézz'", "'z'")),
    case("varchar-max-cut-at-char-boundary", variants("repeat('x', 255) || 'ézz'", "'a'")),
    case("varchar-max-cut-before-char", variants("repeat('x', 254) || 'ézz'", "'a'")),
    case("varchar-max-after-multibyte-run", variants("'a' || repeat('é', 200)", "'a'")),
    case("varchar-0x7f-not-incremented", variants("'xxxxxxxxxx' || repeat(chr(127), 300)", "'a'")),
    case("varchar-0x7e-incremented", variants("'xxxxxxxxxx' || repeat('~', 300)", "'a'")),
    # The long value is the max and cannot be bounded: both bounds dropped, in shredcat too.
    case("varchar-unboundable-max", variants(f"'{E_200}'", "'é'")),
    case("varchar-unboundable-max-only-value", variants(f"'{E_200}'")),
    case(
        "varchar-unboundable-neither",
        variants("'a'", f"'{E_200}'", "'😀'"),
        truth={"root": truth("varchar", ["a", E_200, "😀"])},
        why="docs §0/§2: an unboundable long value that is neither min nor max makes DuckLake drop "
        "both bounds; shredcat bounds the true min/max, truncated by the 256-byte rule",
    ),
    case(
        "varchar-unboundable-min",
        variants(f"'{E_200}'", "'ÿ'"),
        truth={"root": truth("varchar", [E_200, "ÿ"])},
        why="docs 'DuckLake defects found by the parity suite': an unboundable long value that is "
        "the min makes DuckLake drop both bounds; its 256-byte prefix is a valid lower bound",
    ),
    case("blob-long-zeros-min", variants(blob(b"\x00" * 300), blob(b"\x01"))),
    case("blob-257-bytes", variants(blob(b"\x41" * 257), blob(b"\x01"))),
    case("blob-0x80-run", variants(blob(b"\x80" * 300), blob(b"\x01"))),
    case("blob-0x7f-incremented", variants(blob(b"\x41" + b"\x7f" * 300), blob(b"\x01"))),
    case("blob-0xff-tail", variants(blob(b"\x10" + b"\xfe" * 100 + b"\xff" * 200), blob(b"\x01"))),
    case("blob-256-bytes-not-truncated", variants(blob(b"\xff" * 256), blob(b"\x01"))),
    # All 0xFF: the max cannot be bounded, both bounds dropped (shredcat too).
    case("blob-unboundable-max", variants(blob(b"\xff" * 300), blob(b"\x01"))),
]

STRUCTURE = [
    case("object-nested", over_range(5, "{'a': i, 'b': {'c': i::VARCHAR, 'd': {'e': i * 1.5}}}")),
    case("array", over_range(5, "[i, i + 1]")),
    case("array-of-objects", over_range(100, "[{'a': i}, {'a': i + 100}]")),
    case("list-of-lists", over_range(5, "[[i, i + 1], [i + 2]]")),
    case("list-of-lists-of-objects", over_range(4, "[[{'x': i::VARCHAR}], [], [{'x': 'z'}]]")),
    case("array-null-element-empty", variants("[1, NULL, 3]", "[]::INT[]", "[7]")),
    case("array-sql-null-row", variants("[1, NULL, 3]", "[]::INT[]", "[7]", "NULL::INT[]")),
    case("array-only-empty", variants("[]::INT[]", "[]::INT[]")),
    case("array-only-null-elements", variants("[NULL::INT]", "[NULL::INT, NULL::INT]")),
    case(
        "object-with-array-field",
        variants("{'tags': [1, 2], 'x': 'a'}", "{'tags': []::INT[], 'x': 'b'}", "{'tags': [3], 'x': NULL}"),
    ),
    case(
        "array-of-objects-with-arrays",
        over_range(3, "[{'a': [i, NULL]}::VARIANT, {'a': []::BIGINT[]}::VARIANT, {'b': 1}::VARIANT]"),
    ),
    case("map", variants("MAP {'k': 1, 'z': 2}", "MAP {'k': 3}")),
    case("map-in-object", variants("{'m': MAP {'k': 1.5::DOUBLE}}", "{'m': MAP {'a': 'nan'::DOUBLE}}")),
    case("missing-fields", variants("{'a': 1}", "{'b': 'x'}", "{'a': 2, 'b': 'y'}", "{'c': true}")),
    case("variant-nulls", variants("{'a': 1}", "{'a': NULL}", "'null'::JSON", "{'a': 3}")),
    case("sql-null-rows", variants("1", "NULL", "3", "NULL")),
    case("sql-null-rows-objects", variants("{'a': 1}", "NULL", "{'a': 3}")),
    case("all-sql-null", variants("NULL", "NULL", "NULL")),
    case("all-null-field", variants("{'a': 1, 'b': NULL}", "{'a': 2, 'b': NULL}")),
    case("mixed-types-no-row", variants("{'a': 1, 'b': 1}", "{'a': 'x', 'b': 2}", "{'a': 2, 'b': 3}")),
    case("mixed-types-tie-no-row", variants("{'a': 1}", "{'a': 'x'}")),
    case(
        "mixed-int-widths-no-row", variants("{'a': 1::TINYINT}", "{'a': 1::TINYINT}", "{'a': 1000::SMALLINT}")
    ),
    case("mixed-int-bigint-root-no-row", variants("1::INT", "2::BIGINT", "3::BIGINT")),
    case("mixed-unsigned-no-row", variants("{'a': 1::UTINYINT}", "{'a': 2::INT}")),
    case(
        "mixed-float-double-no-row",
        variants("{'f': 'nan'::DOUBLE}", "{'f': 1.5::DOUBLE}", "{'f': 2.5::FLOAT}"),
    ),
    case("mixed-array-elements-no-row", variants("[1::VARIANT, 'a'::VARIANT, 2::VARIANT]")),
    case(
        "ancestor-holds-scalar", variants("{'a': {'b': 1}}", "{'a': {'b': 2}}", "{'a': 5}", "{'a': {'b': 3}}")
    ),
    case("root-scalar-beside-objects", variants("{'a': 1}", "{'a': 2}", "7")),
    case("root-scalar-beside-arrays", variants("[1, 2]", "[3]", "'x'")),
    case(
        "json-non-negative-ints-in-object",
        typed("JSON", '{"a": 0, "b": -1, "c": 1.5, "d": "s"}', '{"a": 7, "b": -2, "c": 2.5, "d": "t"}'),
    ),
    case("json-key-case-collapse", typed("JSON", '{"a": -1, "A": -2}')),
    case(
        "object-many-types",
        over_range(
            3,
            "{'b': i % 2 = 0, 'f': (i / 3)::FLOAT, 'd': i::DECIMAL(9,2), 'dt': DATE '2024-01-01' + i::INT, "
            "'ts': TIMESTAMP '2024-01-01' + INTERVAL (i) SECOND, "
            "'u': ('00000000-0000-0000-0000-00000000000' || i)::UUID, 'bl': unhex(printf('%02x', i))}",
        ),
    ),
    case("deep-nesting", over_range(3, "{'a': {'b': {'c': {'d': [[{'e': i}]]}}}}")),
]

FIELD_NAMES = [
    case(
        "field-names",
        variants(
            "{'q\"uote': 1, 'a.b': 2, 's t': 3, 'ünï': 4, 'element': 5, 'root': 6, '[0]': 7, "
            "'x''y': 8, '\"': 9, 'a\".\"b': 10}"
        ),
    ),
    case(
        "field-names-control-chars",
        typed("JSON", '{"a\\nb": "n", "t\\tab": "t", "back\\\\slash": "b", "sl/ash": "s"}'),
    ),
    case("field-names-nested", variants("{'x.y': {'s t': [{'u.v': 1}, {'u.v': 2}]}}")),
    case("field-named-element-and-root-nested", variants("{'element': {'root': [{'element': 'e'}]}}")),
]

TABLES = [
    case(
        "two-variant-columns",
        "SELECT i::INT, {'a': i}::VARIANT, 'n' || i, ['w' || i]::VARIANT FROM range(5) t(i)",
        create="(id INT, v VARIANT, name VARCHAR, w VARIANT)",
    ),
    case(
        "two-variant-columns-one-unshredded",
        "SELECT i::INT, i::VARIANT, (CASE WHEN i % 2 = 0 THEN i::VARIANT ELSE 'x'::VARIANT END) FROM range(6) t(i)",
        create="(id INT, v VARIANT, w VARIANT)",
    ),
    case(
        "variant-column-names",
        "SELECT {'a': 1}::VARIANT, [2]::VARIANT, 3::VARIANT",
        create='("my col" VARIANT, "a.b" VARIANT, "q""c" VARIANT)',
    ),
    case(
        "several-files",
        "SELECT {'a': i, 'b': 'x' || i}::VARIANT FROM range(10) t(i)",
        "SELECT {'a': i + 100}::VARIANT FROM range(5) t(i)",
        variants("NULL", "NULL"),
        typed("DOUBLE", "nan", "1.5"),
        variants("{'a': 'str'}", "{'a': 'str2'}"),
    ),
    case(
        "several-files-two-columns",
        "SELECT i::INT, i::VARIANT, [i]::VARIANT FROM range(3) t(i)",
        "SELECT i::INT, ('s' || i)::VARIANT, NULL FROM range(3) t(i)",
        create="(id INT, v VARIANT, w VARIANT)",
    ),
]


def _ints(n: int, f: Callable[[int], int | None]) -> list[int | None]:
    return [f(i) for i in range(n)]


def _f64(v: float) -> str:
    return repr(v)


_N = 3 * RG  # three row groups
_NAN = math.nan
_STRINGS_MIDDLE = ["m" + str(i) for i in range(_N)]
_STRINGS_MIDDLE[3000] = E_200
_STRINGS_MIDDLE[6000] = "😀"

ROW_GROUP_WHY = (
    "docs §0/§4: with several row groups DuckLake drops paths/bounds when row groups disagree "
    "and takes contains_nan from the last row group; shredcat decides per row group"
)


def rg_case(case_id: str, insert: str, paths: Mapping[str, Truth]) -> Case:
    return Case(case_id, (insert,), row_groups=True, truth=paths, why=ROW_GROUP_WHY)


ROW_GROUPS = [
    rg_case(
        "rg-range-10000", "SELECT i FROM range(10000) t(i)", {"root": truth("int64", list(range(10000)))}
    ),
    rg_case(
        "rg-ints-then-strings",
        over_range(_N, "CASE WHEN i < 4096 THEN i::VARIANT ELSE ('s' || i)::VARIANT END"),
        {},
    ),
    rg_case(
        "rg-null-field-then-ints",
        over_range(_N, f"{{'a': CASE WHEN i >= {RG} THEN i::INT END, 'b': i}}"),
        {
            '"a"': truth("int32", _ints(_N, lambda i: i if i >= RG else None)),
            '"b"': truth("int64", list(range(_N))),
        },
    ),
    rg_case(
        "rg-ints-then-null-field",
        over_range(_N, f"{{'a': CASE WHEN i < {RG} THEN i::INT END, 'b': i}}"),
        {
            '"a"': truth("int32", _ints(_N, lambda i: i if i < RG else None)),
            '"b"': truth("int64", list(range(_N))),
        },
    ),
    rg_case(
        "rg-half-null-then-ints",
        over_range(_N, f"{{'a': CASE WHEN i < {RG} AND i % 2 = 1 THEN NULL ELSE i::INT END}}"),
        {'"a"': truth("int32", _ints(_N, lambda i: None if i < RG and i % 2 else i))},
    ),
    rg_case(
        "rg-null-field-everywhere",
        over_range(_N, "{'a': NULL::INT, 'b': i}"),
        {'"a"': truth("int32", [None] * _N), '"b"': truth("int64", list(range(_N)))},
    ),
    rg_case(
        "rg-field-then-missing",
        over_range(
            _N, f"CASE WHEN i < {RG} THEN {{'a': i::INT, 'b': i}}::VARIANT ELSE {{'b': i}}::VARIANT END"
        ),
        {
            '"a"': truth("int32", _ints(_N, lambda i: i if i < RG else None)),
            '"b"': truth("int64", list(range(_N))),
        },
    ),
    rg_case(
        # Only row group 0 decides the shredding schema: "b" has no typed column at all.
        "rg-field-then-other-field",
        over_range(_N, f"CASE WHEN i < {RG} THEN {{'a': i::INT}}::VARIANT ELSE {{'b': i::INT}}::VARIANT END"),
        {'"a"': truth("int32", _ints(_N, lambda i: i if i < RG else None))},
    ),
    rg_case(
        "rg-array-then-empty",
        over_range(_N, f"CASE WHEN i < {RG} THEN [i::INT] ELSE []::INT[] END"),
        {"element": truth("int32", _ints(_N, lambda i: i if i < RG else None))},
    ),
    rg_case(
        "rg-array-then-null-element",
        over_range(_N, f"CASE WHEN i < {RG} THEN [i::INT] ELSE [NULL::INT] END"),
        {"element": truth("int32", _ints(_N, lambda i: i if i < RG else None))},
    ),
    rg_case(
        "rg-sql-null-then-ints",
        over_range(_N, f"CASE WHEN i >= {RG} THEN i::INT END"),
        {"root": truth("int32", _ints(_N, lambda i: i if i >= RG else None))},
    ),
    rg_case(
        "rg-double-nan-last-group",
        over_range(_N, "CASE WHEN i = 5000 THEN 'nan'::DOUBLE ELSE i::DOUBLE END"),
        {"root": truth("float64", [_NAN if i == 5000 else float(i) for i in range(_N)], _f64)},
    ),
    rg_case(
        "rg-double-nan-middle-group",
        over_range(_N, "CASE WHEN i = 3000 THEN 'nan'::DOUBLE ELSE i::DOUBLE END"),
        {"root": truth("float64", [_NAN if i == 3000 else float(i) for i in range(_N)], _f64)},
    ),
    rg_case(
        "rg-double-then-nan-groups",
        over_range(_N, f"CASE WHEN i >= {RG} THEN 'nan'::DOUBLE ELSE i::DOUBLE END"),
        {"root": truth("float64", [_NAN if i >= RG else float(i) for i in range(_N)], _f64)},
    ),
    rg_case(
        "rg-nan-group-then-doubles",
        over_range(_N, f"CASE WHEN i < {RG} THEN 'nan'::DOUBLE ELSE i::DOUBLE END"),
        {"root": truth("float64", [_NAN if i < RG else float(i) for i in range(_N)], _f64)},
    ),
    rg_case(
        "rg-float-nan-middle-group",
        over_range(_N, "CASE WHEN i = 2500 THEN 'nan'::FLOAT ELSE i::FLOAT END"),
        # Rendered as doubles: float32 bounds are compared by value (_same).
        {"root": truth("float32", [_NAN if i == 2500 else float(i) for i in range(_N)], _f64)},
    ),
    rg_case(
        # The first zero seen decides the sign, across row groups as inside one.
        "rg-zero-signs",
        over_range(
            _N, f"CASE WHEN i = 0 THEN '-0.0'::DOUBLE WHEN i = {RG} THEN 0.0::DOUBLE ELSE i::DOUBLE END"
        ),
        {
            "root": truth(
                "float64", [-0.0 if i == 0 else 0.0 if i == RG else float(i) for i in range(_N)], _f64
            )
        },
    ),
    rg_case(
        "rg-short-then-long-strings",
        over_range(_N, f"CASE WHEN i < {RG} THEN i::VARCHAR ELSE repeat('x', 300) || i END"),
        {"root": truth("varchar", [str(i) if i < RG else "x" * 300 + str(i) for i in range(_N)])},
    ),
    rg_case(
        "rg-unboundable-everywhere",
        over_range(_N, "repeat('ÿ', 200) || i"),
        {"root": truth("varchar", ["ÿ" * 200 + str(i) for i in range(_N)])},
    ),
    rg_case(
        "rg-unboundable-in-middle-group",
        over_range(_N, f"CASE WHEN i = 3000 THEN '{E_200}' WHEN i = 6000 THEN '😀' ELSE 'm' || i END"),
        {"root": truth("varchar", _STRINGS_MIDDLE)},
    ),
    rg_case(
        "rg-blob-groups",
        over_range(_N, "unhex(printf('%04x', i))"),
        {"root": truth("blob", [i.to_bytes(2, "big") for i in range(_N)], hex_upper)},
    ),
]

CASES: list[Case] = PRIMITIVES + LONG_STRINGS + STRUCTURE + FIELD_NAMES + TABLES + ROW_GROUPS


def _params(cases: Sequence[Case]) -> list[Any]:
    out = []
    for c in cases:
        marks = [pytest.mark.xfail(strict=True, reason=c.xfail)] if c.xfail else []
        out.append(pytest.param(c, id=c.id, marks=marks))
    return out


# --- the DuckLake writer fixture --------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def _require_ducklake() -> None:
    if ducklake_available():
        return
    if os.environ.get("CI") == "true":
        # CI installs the extension: a missing peer there is a broken environment, and a skip
        # would silently turn the whole parity suite off.
        pytest.fail(f"CI=true but the DuckLake peer is unavailable: {unavailable_reason()}", pytrace=False)
    pytest.skip(unavailable_reason())


class Lake:
    """One DuckLake catalog (and one open connection) per distinct option set; one table per case."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._stack = ExitStack()
        self._cons: dict[tuple[bool, tuple[str, ...]], duckdb.DuckDBPyConnection] = {}
        self._tables = 0

    def _con(self, c: Case) -> duckdb.DuckDBPyConnection:
        key = (c.row_groups, c.pre_sql)
        if key not in self._cons:
            workdir = self._root / f"catalog{len(self._cons)}"
            self._cons[key] = self._stack.enter_context(
                ducklake_connection(
                    workdir,
                    ducklake_options=SEVERAL_ROW_GROUPS if c.row_groups else None,
                    pre_sql=("SET threads = 1", *c.pre_sql),
                )
            )
        return self._cons[key]

    def write(self, c: Case) -> DuckLakeTable:
        con = self._con(c)
        self._tables += 1
        name = f"t{self._tables}"
        con.execute(f"CREATE TABLE dl.{name} {c.create}")
        for sql in c.inserts:
            con.execute(f"INSERT INTO dl.{name} {sql}")
        return read_ducklake_table(con, name)

    def close(self) -> None:
        self._stack.close()


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lake]:
    lk = Lake(tmp_path_factory.mktemp("ducklake"))
    try:
        yield lk
    finally:
        lk.close()


# --- comparison -------------------------------------------------------------------------------


def _f32_bits(text: str) -> bytes:
    """The float32 a bound string denotes (nearest, ties to even), as its 4 bytes, so that -0.0
    and 0.0 differ. struct refuses doubles just above FLOAT32_MAX that still round to it."""
    v = float(text)
    try:
        return struct.pack("<f", v)
    except OverflowError:
        return struct.pack("<f", math.copysign(3.4028234663852886e38, v))


def _same(key: str, shredded_type: str, ours: object, expected: object) -> bool:
    if (
        key in ("min_value", "max_value")
        and shredded_type == "float32"
        and isinstance(ours, str)
        and isinstance(expected, str)
    ):
        # docs §0: DuckDB's fmt prints some float32 values with their exact (double) digits
        # instead of the shortest round-trip digits shredcat prints: compare by value.
        return _f32_bits(ours) == _f32_bits(expected)
    return ours == expected


_STEP = re.compile(r'"((?:[^"]|"")*)"|element')


def _typed_value_column(column: str, variant_path: str) -> str:
    """Parquet path of the ``typed_value`` leaf of ``variant_path`` in a DuckDB file (docs §6)."""
    parts = [column, "typed_value"]
    if variant_path != "root":
        for m in _STEP.finditer(variant_path):
            if m.group(1) is None:
                parts += ["list", "element", "typed_value"]
            else:
                parts += [m.group(1).replace('""', '"'), "typed_value"]
    return ".".join(parts)


def _footer_size(path: str, column: str, variant_path: str) -> int:
    md = pq.read_metadata(path)
    want = _typed_value_column(column, variant_path)
    sizes = [
        md.row_group(g).column(c).total_compressed_size
        for g in range(md.num_row_groups)
        for c in range(md.num_columns)
        if md.row_group(g).column(c).path_in_schema == want
    ]
    assert sizes, f"no column {want} in {path}"
    return sum(sizes)


def _ours(path: str) -> dict[tuple[str, str], Row]:
    return {(p.column, p.variant_path): p.ducklake_row() for p in extract_file(path).paths}


def _theirs(f: DuckLakeFileStats) -> dict[tuple[str, str], Row]:
    return {(r["column_path"], r["variant_path"]): {k: r[k] for k in VARIANT_STATS_KEYS} for r in f.rows}


def _diff(ours: Row, expected: Row, keys: Sequence[str]) -> list[str]:
    t = str(expected.get("shredded_type", ours["shredded_type"]))
    return [
        f"{k}: ours {ours[k]!r} != expected {expected[k]!r}"
        for k in keys
        if k in expected and not _same(k, t, ours[k], expected[k])
    ]


def check_file(c: Case, index: int, f: DuckLakeFileStats) -> None:
    ours = _ours(f.path)
    theirs = _theirs(f)
    truths = {("v", p): t for p, t in c.truth.items()} if index == 0 else {}
    where = f"{c.id}, file {index} ({Path(f.path).name})"

    if c.row_groups:
        assert pq.read_metadata(f.path).num_row_groups > 1, f"{where}: expected several row groups"
        assert set(ours) == set(truths), f"{where}: paths {sorted(ours)} != true paths {sorted(truths)}"
    # Every path DuckLake reports, shredcat reports too.
    assert set(theirs) <= set(ours), f"{where}: missing {sorted(set(theirs) - set(ours))}"
    extra = set(ours) - set(theirs) - set(truths)
    assert not extra, f"{where}: paths DuckLake does not report: {sorted(extra)}"

    problems: list[str] = []
    for key in sorted(ours):
        our = ours[key]
        if key not in truths:
            problems += [f"{key}: {p}" for p in _diff(our, theirs[key], VARIANT_STATS_KEYS)]
            continue
        true = truths[key]
        # Deliberate difference (c.why): the truth decides min/max/contains_nan and, for paths
        # DuckLake drops, everything; what DuckLake does report must still match exactly.
        problems += [f"{key} vs truth: {p}" for p in _diff(our, true, list(true))]
        if key in theirs:
            dl = theirs[key]
            exact = ["shredded_type", "column_size_bytes", "value_count", "null_count", "extra_stats"]
            problems += [f"{key} vs DuckLake: {p}" for p in _diff(our, dl, exact)]
            for bound in ("min_value", "max_value"):
                # docs §9: DuckLake keeps a bound holding NUL, which shredcat cuts (the truth decides).
                if dl[bound] is not None and "\x00" not in dl[bound]:
                    problems += [f"{key} vs DuckLake: {p}" for p in _diff(our, dl, [bound])]
        else:
            size = _footer_size(f.path, key[0], key[1])
            if our["column_size_bytes"] != size:
                problems.append(f"{key}: column_size_bytes {our['column_size_bytes']} != footer {size}")
            if our["extra_stats"] is not None:
                problems.append(f"{key}: extra_stats {our['extra_stats']!r} is not NULL")
    assert not problems, f"{where}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("c", _params(CASES))
def test_parity_with_ducklake(lake: Lake, c: Case) -> None:
    table = lake.write(c)
    assert table.files, f"{c.id}: DuckLake wrote no data file"
    if c.truth:
        assert len(table.files) == 1, "truths describe the single file of a case"
    for index, f in enumerate(table.files):
        check_file(c, index, f)


def test_cases_have_unique_ids() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    assert all(c.why for c in CASES if c.truth or c.row_groups)


def test_float32_bounds_keep_shortest_digits_where_duckdb_prints_exact_ones(lake: Lake) -> None:
    # docs §0: DuckDB's fmt prints these float32 values with their exact digits; shredcat prints
    # the shortest digits that round-trip as float32 (the same value, compared by value above).
    c = case("float-fmt-exact-digits-strings", typed("FLOAT", "-334609.625", "607368768"))
    [f] = lake.write(c).files
    [theirs] = f.rows
    [ours] = extract_file(f.path).paths
    assert (theirs["min_value"], theirs["max_value"]) == ("-334609.625", "607368768.0")
    row = ours.ducklake_row()
    assert (row["min_value"], row["max_value"]) == ("-334609.62", "607368770.0")
