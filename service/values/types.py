"""Shredded types and the Python representation of their values.

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

Python's own ``<`` is the type's value order for every representation (-0.0 == 0.0 as in SQL;
``str`` by code point = UTF-8 byte order; ``UUID`` by its int), so no sort key is needed.
"""

from __future__ import annotations

import math
import re
import struct
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Union

from service.errors import InvalidStatsError

Bound = Union[bool, int, float, Decimal, str, bytes, uuid.UUID]  # noqa: UP007 - used at runtime in isinstance-free code


# ``Bound`` is a union of Python types, so the type checker cannot see that an order test only ever
# meets two values of one shredded type (the bounds of one path, a literal converted to the type
# it is compared with); these two say so once, for every caller, instead of an ignore per test.
def bound_lt(a: Bound, b: Bound) -> bool:
    """``a < b`` for two values of one shredded type (Python's order is the type's order)."""
    return a < b  # type: ignore[operator]  # a mixed pair is a caller's bug, raising TypeError


def bound_le(a: Bound, b: Bound) -> bool:
    """``a <= b`` for two values of one shredded type."""
    return a <= b  # type: ignore[operator]  # as bound_lt


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
    # Plain-column types whose rows hold counts only (COUNTS_ONLY_KINDS): never a bound.
    TIMETZ = "timetz"
    INTERVAL = "interval"
    GEOMETRY = "geometry"


#: Types of plain columns whose rows are counts only, no bound ever (DuckLake's column type names):
#: INTERVAL (parquet.thrift leaves its order undefined), TIMETZ (DuckDB writes no statistics for it,
#: and orders by instant and offset where a footer's TIME(isAdjustedToUTC) orders by instant),
#: GEOMETRY (WKB bytes; its statistics are a bounding box, not an order).
COUNTS_ONLY_KINDS = frozenset((Kind.TIMETZ, Kind.INTERVAL, Kind.GEOMETRY))
INTEGER_KINDS = (Kind.INT8, Kind.INT16, Kind.INT32, Kind.INT64)
FLOAT_KINDS = (Kind.FLOAT32, Kind.FLOAT64)
TIMESTAMP_KINDS = (Kind.TIMESTAMP, Kind.TIMESTAMPTZ, Kind.TIMESTAMP_NS, Kind.TIMESTAMPTZ_NS)
INTEGER_RANGES = {
    Kind.INT8: (-(2**7), 2**7 - 1),
    Kind.INT16: (-(2**15), 2**15 - 1),
    Kind.INT32: (-(2**31), 2**31 - 1),
    Kind.INT64: (-(2**63), 2**63 - 1),
}
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def plain_integers(kind: Kind, values: Sequence[object]) -> list[int] | None:
    """``values`` when ``kind`` is an integer kind and each is a plain ``int`` (no bool, no
    Decimal): then a value's whole check is the range test of :data:`INTEGER_RANGES`, which a
    long id list takes at once instead of value by value. None otherwise, and for no values."""
    if kind not in INTEGER_RANGES or not values:
        return None
    ints = [v for v in values if type(v) is int]
    return ints if len(ints) == len(values) else None
# DuckDB keeps date infinities as the extreme int32 values and timestamp infinities as the
# extreme int64 values; a Parquet file written by DuckDB carries them verbatim.
DATE_INFINITY = 2**31 - 1
DATE_NEG_INFINITY = -(2**31 - 1)
TS_INFINITY = 2**63 - 1
TS_NEG_INFINITY = -(2**63 - 1)

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
    rounded: float = struct.unpack("<f", struct.pack("<f", v))[0]
    return rounded
