"""Spark SQL type names, as written in ``variant_get(v, path, type)``, mapped to ShreddedType.

Spark's ``TIMESTAMP`` is a timestamp *with local time zone*, an instant: DuckLake's
``timestamptz``. ``TIMESTAMP_NTZ`` is a wall-clock value: DuckLake's ``timestamp``.
"""

from __future__ import annotations

import re

from service.errors import InvalidPredicateError
from service.values import Kind, ShreddedType

_SIMPLE: dict[str, ShreddedType] = {
    "boolean": ShreddedType(Kind.BOOLEAN),
    "tinyint": ShreddedType(Kind.INT8),
    "byte": ShreddedType(Kind.INT8),
    "smallint": ShreddedType(Kind.INT16),
    "short": ShreddedType(Kind.INT16),
    "int": ShreddedType(Kind.INT32),
    "integer": ShreddedType(Kind.INT32),
    "bigint": ShreddedType(Kind.INT64),
    "long": ShreddedType(Kind.INT64),
    "float": ShreddedType(Kind.FLOAT32),
    "real": ShreddedType(Kind.FLOAT32),
    "double": ShreddedType(Kind.FLOAT64),
    "string": ShreddedType(Kind.VARCHAR),
    "binary": ShreddedType(Kind.BLOB),
    "date": ShreddedType(Kind.DATE),
    "timestamp": ShreddedType(Kind.TIMESTAMPTZ),
    "timestamp_ltz": ShreddedType(Kind.TIMESTAMPTZ),
    "timestamp_ntz": ShreddedType(Kind.TIMESTAMP),
}

_CANONICAL: dict[Kind, str] = {
    Kind.BOOLEAN: "boolean",
    Kind.INT8: "tinyint",
    Kind.INT16: "smallint",
    Kind.INT32: "int",
    Kind.INT64: "bigint",
    Kind.FLOAT32: "float",
    Kind.FLOAT64: "double",
    Kind.VARCHAR: "string",
    Kind.BLOB: "binary",
    Kind.DATE: "date",
    Kind.TIMESTAMPTZ: "timestamp",
    Kind.TIMESTAMP: "timestamp_ntz",
}

_DECIMAL = re.compile(r"(?:decimal|dec|numeric)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?")


def parse_spark_type(name: str) -> ShreddedType:
    """``'bigint'`` → int64, ``'decimal(10,2)'`` → decimal(10,2), ``'timestamp'`` → timestamptz."""
    if not isinstance(name, str):
        raise InvalidPredicateError(f"a target type must be a string, not {type(name).__name__}")
    key = name.strip().lower()
    if key in _SIMPLE:
        return _SIMPLE[key]
    m = _DECIMAL.fullmatch(key)
    if m:
        # Spark's bare DECIMAL is DECIMAL(10,0); DECIMAL(p) is DECIMAL(p,0).
        p = int(m.group(1)) if m.group(1) else 10
        s = int(m.group(2)) if m.group(2) else 0
        if not (1 <= p <= 38) or s > p:
            raise InvalidPredicateError(
                f"invalid decimal type {name!r}: need 1 <= precision <= 38, scale <= precision"
            )
        return ShreddedType(Kind.DECIMAL, p, s)
    raise InvalidPredicateError(
        f"unsupported target type {name!r}; use one of boolean, tinyint, smallint, int, bigint, float, "
        "double, decimal(p,s), string, binary, date, timestamp, timestamp_ntz"
    )


def spark_type_name(t: ShreddedType) -> str:
    if t.kind is Kind.DECIMAL:
        return f"decimal({t.precision},{t.scale})"
    try:
        return _CANONICAL[t.kind]
    except KeyError:
        raise InvalidPredicateError(f"{t.name} is not a Spark variant_get target type") from None
