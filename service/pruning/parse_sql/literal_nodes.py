"""Literals in sqlglot's tree, read as Spark types them: ``42`` an int, ``42.0`` a decimal,
``4.2e1`` a double, ``CAST('12.5' AS DECIMAL(10,2))``, ``DATE '2024-01-01'``... How a literal of
another family is compared with a term is decided in :mod:`service.pruning.literals`."""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Context, Decimal
from fractions import Fraction
from typing import Any

from sqlglot import exp

from service.errors import InvalidPredicateError
from service.pruning.literals import (
    DateLiteral,
    Float32Literal,
    LiteralValue,
    nearest_float32,
    parse_date_text,
    parse_numeral,
    parse_timestamp_text,
)
from service.pruning.parse_sql.nodes import hard, snippet, unparen, unsupported

#: Spark's widest decimal.
MAX_DECIMAL_PRECISION = 38


def literal_value(node: exp.Expression, other: Callable[[exp.Expression], LiteralValue]) -> LiteralValue:
    """The value of a literal node (Spark's typing); ``other`` answers for a node that is none."""
    node = unparen(node)
    if isinstance(node, exp.Neg):
        v = negated(literal_value(node.this, other))
        if v is None:
            raise InvalidPredicateError(f"cannot negate {snippet(node.this)}")
        return v
    if isinstance(node, exp.Literal):
        text = str(node.this)
        if node.is_string:
            return text
        return number_literal(text)
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Null):
        raise InvalidPredicateError("NULL is never equal to anything; use IS NULL / IS NOT NULL")
    if isinstance(node, exp.HexString):
        try:
            return bytes.fromhex(str(node.this))
        except ValueError:
            raise InvalidPredicateError(f"bad hex literal {snippet(node)}") from None
    if isinstance(node, exp.Cast):
        return cast_literal(node, other)
    return other(node)


def negated(v: LiteralValue) -> LiteralValue | None:
    """``-v`` for a numeric literal (Spark's unary minus); None for any other value."""
    if isinstance(v, Float32Literal):
        return Float32Literal(-v.value)
    if isinstance(v, Decimal):
        return v.copy_negate()  # exact; unary minus rounds to the context's 28 digits
    if isinstance(v, int | float) and not isinstance(v, bool):
        return -v
    return None


def cast_literal(node: exp.Cast, other: Callable[[exp.Expression], LiteralValue]) -> LiteralValue:
    inner = unparen(node.this)
    if not isinstance(inner, exp.Literal | exp.Neg | exp.Boolean | exp.HexString | exp.Null):
        raise unsupported(node, "a CAST of something other than a literal")
    v = literal_value(inner, other)
    dt = node.to.this
    T = exp.DataType.Type
    text = v if isinstance(v, str) else None
    bad = InvalidPredicateError(f"cannot read {snippet(node)} as a literal")
    if dt is T.DATE:
        if text is None:
            raise bad
        return DateLiteral(parse_date_text(text))
    if dt in (T.TIMESTAMP, T.TIMESTAMPTZ, T.TIMESTAMPLTZ, T.TIMESTAMPNTZ):
        if text is None:
            raise bad
        return parse_timestamp_text(text, ntz=dt is T.TIMESTAMPNTZ)
    if dt is T.BOOLEAN:
        if isinstance(v, bool):
            return v
        if text is not None and text.strip().lower() in ("true", "false"):
            return text.strip().lower() == "true"
        raise bad
    if dt in (T.TEXT, T.VARCHAR, T.CHAR, T.NCHAR, T.NVARCHAR):
        if text is not None:
            return text
        if isinstance(v, int | Decimal) and not isinstance(v, bool):
            return str(v)
        raise bad
    if dt in (T.BINARY, T.VARBINARY):
        if text is not None:
            return text.encode("utf-8")
        if isinstance(v, bytes):
            return v
        raise bad
    number = _as_number(v)
    if isinstance(number, Decimal) and number.is_finite() and number and abs(number.adjusted()) > _MAX_EXPONENT:
        return _beyond_every_range(node, number)
    if number is None:
        special = _special_float(dt, text)
        if special is None:
            raise bad
        return special
    if dt is T.DOUBLE:
        return float(number) if not isinstance(number, float) else number
    if dt is T.FLOAT:
        return Float32Literal(nearest_float32(Fraction(number)))
    if dt in (T.TINYINT, T.SMALLINT, T.INT, T.BIGINT):
        exact = Fraction(number)
        bits = {T.TINYINT: 8, T.SMALLINT: 16, T.INT: 32, T.BIGINT: 64}[dt]
        if exact.denominator != 1 or not -(2 ** (bits - 1)) <= exact < 2 ** (bits - 1):
            raise InvalidPredicateError(f"{snippet(node)} is not an exact {dt.value.lower()} value")
        return int(exact)
    if dt is T.DECIMAL:
        return _decimal_literal(node, number)
    raise unsupported(node, f"a literal of type {node.to.sql(dialect='spark')}")


_SPECIAL_FLOATS = {
    "nan": float("nan"),
    "infinity": float("inf"),
    "inf": float("inf"),
    "+infinity": float("inf"),
    "+inf": float("inf"),
    "-infinity": float("-inf"),
    "-inf": float("-inf"),
}


def _special_float(dt: Any, text: str | None) -> LiteralValue | None:
    """A DOUBLE or FLOAT cast of the text of NaN or an infinity (None: not one)."""
    T = exp.DataType.Type
    if dt not in (T.DOUBLE, T.FLOAT) or text is None:
        return None
    f = _SPECIAL_FLOATS.get(text.strip().lower())
    if f is None:
        return None
    return f if dt is T.DOUBLE else Float32Literal(f)


def _decimal_literal(node: exp.Cast, number: int | float | Decimal) -> Decimal:
    """A number cast to DECIMAL(p,s) as Spark reads it, or the error of a type or value it refuses."""
    params = node.to.expressions
    p = int(params[0].this.this) if params else 10
    s = int(params[1].this.this) if len(params) > 1 else 0
    if isinstance(number, float):
        raise InvalidPredicateError(
            f"a double cast to DECIMAL is rounded by Spark; write a decimal literal: {snippet(node)}"
        )
    if not 0 <= s <= p <= MAX_DECIMAL_PRECISION:
        # Spark refuses such a type, and a BigDecimal literal (``1.5BD``) of more digits.
        raise hard(InvalidPredicateError(
            f"{snippet(node)}: DECIMAL({p},{s}) is beyond Spark's decimals (precision at most "
            f"{MAX_DECIMAL_PRECISION}, scale at most the precision)"
        ))
    d = Decimal(number)
    # Checked before rounding: a value of hundreds of digits would exceed the rounding's precision.
    if (d and d.adjusted() >= p - s) or (q := _quantize(d, s)).copy_abs() >= Decimal(f"1E{p - s}"):
        raise InvalidPredicateError(f"{snippet(node)} does not fit DECIMAL({p},{s})")
    return q

# -- leaves --


def is_literalish(node: exp.Expression) -> bool:
    node = unparen(node)
    return isinstance(node, exp.Literal | exp.Neg | exp.Boolean | exp.HexString | exp.Null | exp.Cast)


def number_literal(text: str) -> int | Decimal | float:
    """A numeric literal as Spark types it: with an exponent a DOUBLE (finite), with a point a
    DECIMAL, else an integer."""
    if len(text) <= 200 and text.isascii() and text.isdigit():
        return int(text)  # what the path below gives plain digits (an IN list of 10,000 ids), sooner
    if len(text) > 200:
        # Beyond any DECIMAL(38) or double literal; also keeps int() under its digit limit.
        # Hard: Spark refuses such a literal too, so it is an error with a schema as well.
        raise hard(InvalidPredicateError(f"number literal of {len(text)} characters is too long"))
    d = parse_numeral(text)
    if d is None:
        raise InvalidPredicateError(f"bad number {text!r}")
    if "e" in text.lower():
        f = float(d)
        if math.isinf(f):
            # Spark refuses it too: a double literal must be finite (write CAST('Infinity' AS DOUBLE)).
            raise hard(InvalidPredicateError(f"number literal {text} is beyond the range of DOUBLE"))
        return f
    if "." in text:
        return d
    return int(text)


#: A decimal exponent past a double's range and resolution both ways (and so past every integer,
#: DECIMAL(38) and float): such a number is decided from its exponent, never built (CAST('1e999999999'
#: AS INT) would take minutes and gigabytes as a fraction).
_MAX_EXPONENT = 400


def _beyond_every_range(node: exp.Cast, number: Decimal) -> LiteralValue:
    T = exp.DataType.Type
    dt = node.to.this
    if dt in (T.DOUBLE, T.FLOAT):
        f = float(number)  # an infinity or a signed zero, as Java's parse gives it
        return f if dt is T.DOUBLE else Float32Literal(f)
    raise InvalidPredicateError(f"{snippet(node)} is out of range for {dt.value.lower()}")


def _as_number(v: Any) -> int | Decimal | float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int | Decimal | float):
        return v
    if isinstance(v, Float32Literal):
        return v.value
    if isinstance(v, str):
        return parse_numeral(v)
    return None


def _quantize(d: Decimal, scale: int) -> Decimal:
    return d.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP, context=Context(prec=100))
