"""Order-preserving index keys: how the catalog stores a bound so SQL can range-scan it."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import cast
from uuid import UUID

from service.values.decimals import unscaled_of
from service.values.types import FLOAT_KINDS, INT64_MAX, INT64_MIN, Bound, Kind, ShreddedType


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
    # A bound of kind k has the Python type check_bound gives k's bounds: the casts say so.
    k = t.kind
    if k in FLOAT_KINDS:
        return IndexKey(real=float(cast(float, v)))
    if k is Kind.VARCHAR:
        return IndexKey(bin=cast(str, v).encode("utf-8"))
    if k is Kind.BLOB:
        return IndexKey(bin=cast(bytes, v))
    if k is Kind.UUID:
        return IndexKey(bin=cast(UUID, v).bytes)
    if k is Kind.DECIMAL:
        assert isinstance(v, Decimal) and t.scale is not None
        n = int(unscaled_of(v, t.scale))
        return IndexKey(num=n) if INT64_MIN <= n <= INT64_MAX else IndexKey()
    return IndexKey(num=int(cast(int, v)))


def family(t: ShreddedType) -> str:
    """Which IndexKey field carries keys of this type: 'num', 'real' or 'bin'."""
    if t.kind in FLOAT_KINDS:
        return "real"
    if t.kind in (Kind.VARCHAR, Kind.BLOB, Kind.UUID):
        return "bin"
    return "num"
