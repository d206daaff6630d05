"""A small, spec-following shredding writer for tests: Python rows in, a shredded Parquet file out.

Real writers (DuckDB, Spark) choose schemas themselves; this one takes the schema from the test,
so tests can build exactly the layouts they need (partial shredding, late mismatches, missing
statistics, many row groups, any compression) with pyarrow.

Schema spec: a type name (``"int64"``, ``"varchar"``, ``"decimal(9,2)"``...) for a primitive,
a ``dict`` of field specs for an object, a one-element ``list`` for an array.
Row values: ``None`` is a Variant null, :data:`MISSING` a missing value/field; ints, floats,
Decimals, str, bytes, bool, dates, datetimes (aware = timestamptz), times, dicts and lists.
"""

from __future__ import annotations

import datetime as dt
import math
import uuid as uuidlib
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from service.values import Kind, ShreddedType
from service.variant.binary import VariantValue, encode_metadata, encode_value, vint

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()
EPOCH = dt.date(1970, 1, 1)
EPOCH_DT = dt.datetime(1970, 1, 1)
EPOCH_TZ = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def to_variant(v: Any) -> VariantValue:
    """Python value → VariantValue (ints take the smallest int kind)."""
    if v is None:
        return VariantValue("null", None)
    if isinstance(v, bool):
        return VariantValue("boolean", v)
    if isinstance(v, int):
        return vint(v)
    if isinstance(v, float):
        return VariantValue("double", v)
    if isinstance(v, Decimal):
        digits = len(v.as_tuple().digits)
        kind = "decimal4" if digits <= 9 else "decimal8" if digits <= 18 else "decimal16"
        return VariantValue(kind, v)
    if isinstance(v, str):
        return VariantValue("string", v)
    if isinstance(v, bytes):
        return VariantValue("binary", v)
    if isinstance(v, uuidlib.UUID):
        return VariantValue("uuid", v)
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            return VariantValue("timestamptz", (v - EPOCH_TZ) // dt.timedelta(microseconds=1))
        return VariantValue("timestampntz", (v - EPOCH_DT) // dt.timedelta(microseconds=1))
    if isinstance(v, dt.date):
        return VariantValue("date", (v - EPOCH).days)
    if isinstance(v, dt.time):
        return VariantValue("time", ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond)
    if isinstance(v, dict):
        return VariantValue("object", tuple(sorted((k, to_variant(x)) for k, x in v.items())))
    if isinstance(v, list | tuple):
        return VariantValue("array", tuple(to_variant(x) for x in v))
    raise TypeError(f"no Variant for {v!r}")


def arrow_type(spec: Any) -> pa.DataType:
    if isinstance(spec, dict):
        return pa.struct(
            [pa.field(k, _field_struct(sub), nullable=False) for k, sub in spec.items()]
        )
    if isinstance(spec, list):
        return pa.list_(pa.field("element", _field_struct(spec[0]), nullable=False))
    t = ShreddedType.parse(spec)
    return {
        Kind.BOOLEAN: pa.bool_(),
        Kind.INT8: pa.int8(),
        Kind.INT16: pa.int16(),
        Kind.INT32: pa.int32(),
        Kind.INT64: pa.int64(),
        Kind.FLOAT32: pa.float32(),
        Kind.FLOAT64: pa.float64(),
        Kind.DATE: pa.date32(),
        Kind.TIME: pa.time64("us"),
        Kind.TIMESTAMP: pa.timestamp("us"),
        Kind.TIMESTAMPTZ: pa.timestamp("us", tz="UTC"),
        Kind.TIMESTAMP_NS: pa.timestamp("ns"),
        Kind.BLOB: pa.binary(),
        Kind.VARCHAR: pa.string(),
    }.get(t.kind) or pa.decimal128(t.precision or 38, t.scale or 0)


def _field_struct(spec: Any) -> pa.DataType:
    return pa.struct([pa.field("value", pa.binary()), pa.field("typed_value", arrow_type(spec))])


def _fits(spec: str, v: Any) -> bool:
    t = ShreddedType.parse(spec)
    k = t.kind
    if k is Kind.BOOLEAN:
        return isinstance(v, bool)
    if t.is_integer:
        lo, hi = {Kind.INT8: 7, Kind.INT16: 15, Kind.INT32: 31, Kind.INT64: 63}[k], None
        return isinstance(v, int) and not isinstance(v, bool) and -(2**lo) <= v < 2**lo and hi is None
    if k is Kind.FLOAT64:
        return isinstance(v, float)
    if k is Kind.FLOAT32:
        import struct

        return isinstance(v, float) and (math.isnan(v) or struct.unpack("<f", struct.pack("<f", v))[0] == v)
    if k is Kind.DECIMAL:
        return isinstance(v, Decimal) and -v.as_tuple().exponent == t.scale  # type: ignore[operator]
    if k is Kind.VARCHAR:
        return isinstance(v, str)
    if k is Kind.BLOB:
        return isinstance(v, bytes)
    if k is Kind.DATE:
        return isinstance(v, dt.date) and not isinstance(v, dt.datetime)
    if k is Kind.TIME:
        return isinstance(v, dt.time)
    if k is Kind.TIMESTAMP:
        return isinstance(v, dt.datetime) and v.tzinfo is None
    if k is Kind.TIMESTAMPTZ:
        return isinstance(v, dt.datetime) and v.tzinfo is not None
    return False


class _Encoder:
    def __init__(self, keys: list[str]) -> None:
        self.metadata = encode_metadata(keys)
        self.ids = {k: i for i, k in enumerate(keys)}

    def bytes(self, v: Any) -> bytes:
        return encode_value(to_variant(v), self.ids)


def _shred(v: Any, spec: Any, enc: _Encoder) -> dict[str, Any] | None:
    """{'value': bytes|None, 'typed_value': ...} for one position; None for a missing field."""
    if v is MISSING:
        return {"value": None, "typed_value": None}
    if v is None:
        return {"value": b"\x00", "typed_value": None}
    if isinstance(spec, dict):
        if not isinstance(v, dict):
            return {"value": enc.bytes(v), "typed_value": None}
        typed = {k: _shred(v.get(k, MISSING), sub, enc) for k, sub in spec.items()}
        rest = {k: x for k, x in v.items() if k not in spec}
        return {"value": enc.bytes(rest) if rest else None, "typed_value": typed}
    if isinstance(spec, list):
        if not isinstance(v, list):
            return {"value": enc.bytes(v), "typed_value": None}
        return {"value": None, "typed_value": [_shred(e, spec[0], enc) for e in v]}
    if _fits(spec, v):
        return {"value": None, "typed_value": v}
    return {"value": enc.bytes(v), "typed_value": None}


def _keys(v: Any, out: set[str]) -> None:
    if isinstance(v, dict):
        for k, x in v.items():
            out.add(k)
            _keys(x, out)
    elif isinstance(v, list):
        for x in v:
            _keys(x, out)


def write_shredded(
    path: str | Path,
    rows: Sequence[Any],
    spec: Any,
    *,
    column: str = "v",
    row_group_size: int | None = None,
    compression: str = "snappy",
    write_statistics: bool | list[str] = True,
    sql_null_rows: Sequence[int] = (),
) -> Path:
    """Write ``rows`` as one shredded Variant column. Rows listed in ``sql_null_rows`` are
    SQL NULL (the whole Variant group null)."""
    keys: set[str] = set()
    for r in rows:
        _keys(r, keys)
    enc = _Encoder(sorted(keys))
    sql_null = set(sql_null_rows)
    records = []
    for i, r in enumerate(rows):
        if i in sql_null:
            records.append(None)
            continue
        s = _shred(r, spec, enc)
        assert s is not None
        records.append({"metadata": enc.metadata, **s})
    vtype = pa.struct(
        [
            pa.field("metadata", pa.binary(), nullable=False),
            pa.field("value", pa.binary()),
            pa.field("typed_value", arrow_type(spec)),
        ]
    )
    table = pa.table({"id": pa.array(range(len(rows)), pa.int64()), column: pa.array(records, vtype)})
    pq.write_table(
        table,
        str(path),
        row_group_size=row_group_size,
        compression=compression,
        write_statistics=write_statistics,
    )
    return Path(path)
