"""Render a predicate tree as DuckDB SQL (``to_duckdb_sql``) that selects exactly the rows Spark
selects with the predicate's Spark SQL (:mod:`service.pruning.render` is the Spark twin).

The tree is the one the parsers build (:func:`service.pruning.parse_sql.parse_sql`), so every
literal is already typed as Spark types it; this module only spells each leaf in DuckDB:

* **Variant terms.** ``variant_get(v, '$.a[2].b', T)`` is ``variant_extract`` one step at a time
  (a key as text, an index 1-based as ``UINTEGER``: one call per step, so a key holding a dot is
  never read as a path). Spark's ``variant_get`` casts the value with Spark's cast rules; DuckDB's
  casts differ (a double 5.7 is 5 in Spark, 6 in DuckDB; a string "5" is parsed by other rules),
  so the value's own Variant type (``variant_typeof``) decides, row by row:

  - a type whose DuckDB cast to T is the same as Spark's (the same type; an integer to an integer,
    a float or a decimal, a float to a double, a decimal of no larger scale to a decimal): cast;
    where such a cast can fail (overflow), ``variant_get`` fails and ``try_variant_get`` is NULL,
    in both engines;
  - missing path, Variant null, SQL NULL row: NULL, as in Spark;
  - an object or array: Spark's cast always fails: NULL for ``try_variant_get``, an error for
    ``variant_get`` (Spark raises too);
  - any other type (a string "5" read as bigint, a double read as int, a timestamp without zone
    read as timestamp): the query fails with ``shredcat: ... cannot be cast exactly`` rather than
    returning rows Spark might not return.

  DuckDB 1.5.5 evaluates a ``CAST`` of a VARIANT inside ``CASE`` on rows of other branches too
  (and fails on them), so the cast branch uses ``TRY_CAST`` and raises ``error()`` itself.
* **Plain and partition columns** are the column (double-quoted; ``a.b`` a struct leaf). Given the
  DuckDB types the relation reads (``column_types``), a column DuckDB reads as another type than
  the tree's target is refused, except a timestamp read without zone (Spark's INT96) for a Spark
  ``timestamp``: ``timezone('UTC', col)``, the instant Spark reads.
* ``isnan(x)`` is false for NULL in Spark and NULL in DuckDB: ``coalesce(isnan(x), false)``.
  DuckDB, like Spark, orders NaN above every number and NaN = NaN; -0.0 = 0.0 in both.
* Literals carry their type: ``CAST('1.5' AS DOUBLE)``, ``CAST('12.50' AS DECIMAL(4,2))``,
  ``DATE '2024-01-01'``, ``TIMESTAMPTZ '2024-01-01 10:00:00+00'`` (an instant: the connection's
  ``TimeZone`` does not matter), ``from_hex('0A')``; strings double ``'``.
* ``[*]`` (Spark's ``exists(try_variant_get(v, '$.arr', 'array<variant>'), e -> ...)``): the
  leaf over each element of ``CAST(x AS VARIANT[])`` (values that are arrays only), combined with
  Spark's three-valued ``exists``: TRUE if some element's leaf is TRUE, else NULL if some is NULL.
* Refused (:class:`~service.errors.UnrenderablePredicateError`): an
  :class:`~service.pruning.expressions.Unknown` sub-expression (Spark SQL text pruning could not
  read, ``length(name) > 3``; translating it would be a guess), target types DuckDB has no exact
  twin for.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import Decimal

from service.errors import UnrenderablePredicateError
from service.pruning.expressions import (
    BooleanExpression,
    ColumnTerm,
    Not,
    Op,
    Predicate,
    Unknown,
    VariantTerm,
    visit,
)
from service.pruning.literals import format_date, format_timestamp
from service.pruning.paths import AnyIndex, Index, Step, format_json_path
from service.pruning.render import LeafBody, SqlConnectives
from service.pruning.spark_types import spark_type_name
from service.values import Bound, Kind, ShreddedType, format_bound

__all__ = ["duckdb_literal", "duckdb_type", "quote_identifier", "to_duckdb_sql"]

_INTEGERS = {Kind.INT8: "TINYINT", Kind.INT16: "SMALLINT", Kind.INT32: "INTEGER", Kind.INT64: "BIGINT"}
_TYPES = {
    **_INTEGERS,
    Kind.BOOLEAN: "BOOLEAN",
    Kind.FLOAT32: "FLOAT",
    Kind.FLOAT64: "DOUBLE",
    Kind.VARCHAR: "VARCHAR",
    Kind.BLOB: "BLOB",
    Kind.DATE: "DATE",
    Kind.TIMESTAMP: "TIMESTAMP",
    Kind.TIMESTAMPTZ: "TIMESTAMP WITH TIME ZONE",
    # No literal of these is rendered (Spark's comparisons of them never parse as a leaf), but
    # columns of these types are read and declared (``IS NULL``, the DuckLake export).
    Kind.TIME: "TIME",
    Kind.UUID: "UUID",
    Kind.TIMESTAMP_NS: "TIMESTAMP_NS",
}

#: ``variant_typeof`` names of integer values (UINT64: DuckDB's JSON integers).
_VARIANT_INTEGERS = ("INT8", "INT16", "INT32", "INT64", "UINT64")
#: Variant value types whose DuckDB cast to the target kind is Spark's cast (besides decimals,
#: handled by scale below). Integer targets: the cast fails on overflow in both engines.
_SAME_CAST: dict[Kind, tuple[str, ...]] = {
    **{k: _VARIANT_INTEGERS for k in _INTEGERS},
    Kind.FLOAT64: ("DOUBLE", "FLOAT", *_VARIANT_INTEGERS),
    Kind.FLOAT32: ("FLOAT", *_VARIANT_INTEGERS),
    Kind.DECIMAL: _VARIANT_INTEGERS,
    Kind.BOOLEAN: ("BOOL_TRUE", "BOOL_FALSE"),
    Kind.VARCHAR: ("VARCHAR",),
    Kind.BLOB: ("BLOB",),
    Kind.DATE: ("DATE",),
    Kind.TIMESTAMP: ("TIMESTAMP_MICROS",),
    Kind.TIMESTAMPTZ: ("TIMESTAMP_MICROS_TZ",),
}
#: Targets whose cast from an allowed type can still fail (out of range).
_CAN_FAIL = {*_INTEGERS, Kind.DECIMAL}
_DECIMAL_TYPE = re.compile(r"DECIMAL\((\d+),\s*(\d+)\)")


def duckdb_type(t: ShreddedType) -> str:
    """The DuckDB type of a value model type (refused: no exact DuckDB twin)."""
    if t.kind is Kind.DECIMAL:
        return f"DECIMAL({t.precision},{t.scale})"
    try:
        return _TYPES[t.kind]
    except KeyError:
        raise UnrenderablePredicateError(f"{t.name} has no exact DuckDB rendering") from None


def quote_identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _column(name: str) -> str:
    """A dotted name is a struct leaf (or a Variant column nested in structs), as the catalog names them."""
    return ".".join(quote_identifier(p) for p in name.split("."))


def _string(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _date(days: int) -> str:
    text = format_date(days)
    # DuckDB spells years before 1 with a ' (BC)' suffix; an offset from the epoch is exact anywhere.
    return f"DATE '{text}'" if "0001-01-01" <= text <= "9999-12-31" else f"(DATE '1970-01-01' + {days})"


def _timestamp(micros: int, tz: bool) -> str:
    text = format_timestamp(micros, tz=False)
    if "0001-01-01" <= text[:10] <= "9999-12-31":
        return f"TIMESTAMPTZ '{text}+00'" if tz else f"TIMESTAMP '{text}'"
    plain = f"make_timestamp({micros}::BIGINT)"
    return f"timezone('UTC', {plain})" if tz else plain


def duckdb_literal(t: ShreddedType, v: Bound) -> str:
    """A literal of type ``t`` in DuckDB SQL, typed so DuckDB compares it exactly with the term."""
    k = t.kind
    if k is Kind.BOOLEAN:
        return "TRUE" if v else "FALSE"
    if t.is_integer:
        return str(v)
    if k in (Kind.FLOAT64, Kind.FLOAT32):
        assert isinstance(v, float)
        text = "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity") if math.isinf(v) else format_bound(t, v)
        return f"CAST('{text}' AS {_TYPES[k]})"
    if k is Kind.DECIMAL:
        assert isinstance(v, Decimal)
        return f"CAST('{v:f}' AS {duckdb_type(t)})"
    if k is Kind.DATE:
        assert isinstance(v, int)
        return _date(v)
    if k in (Kind.TIMESTAMPTZ, Kind.TIMESTAMP):
        assert isinstance(v, int)
        return _timestamp(v, k is Kind.TIMESTAMPTZ)
    if k is Kind.BLOB:
        assert isinstance(v, bytes)
        return f"from_hex('{v.hex().upper()}')"
    if k is Kind.VARCHAR:
        assert isinstance(v, str)
        return _string(v)
    raise UnrenderablePredicateError(f"a {t.name} literal has no exact DuckDB rendering")


def _extract(base: str, steps: tuple[Step, ...]) -> str:
    """``variant_extract`` one step at a time (an index 1-based: Spark's ``[0]`` is DuckDB's 1)."""
    x = base
    for step in steps:
        assert not isinstance(step, AnyIndex)
        x = f"variant_extract({x}, {step.index + 1}::UINTEGER)" if isinstance(step, Index) else f"variant_extract({x}, {_string(step.name)})"
    return x


def _variant_term(term: VariantTerm, base: str | None = None, steps: tuple[Step, ...] | None = None) -> str:
    """The CASE over the value's Variant type described in the module docstring (``base`` and
    ``steps``: an array element's variable and the path below it, for ``[*]``)."""
    t = term.target
    target = duckdb_type(t)
    x = _extract(_column(term.column) if base is None else base, term.path.steps if steps is None else steps)
    kind = f"variant_typeof({x})"
    ok = " OR ".join(
        [f"{kind} IN ({', '.join(_string(s) for s in _SAME_CAST[t.kind])})"]
        + (
            # A decimal of no larger scale casts exactly (or overflows, in both engines).
            [f"coalesce(TRY_CAST(regexp_extract({kind}, '^DECIMAL\\(\\d+, *(\\d+)\\)$', 1) AS INTEGER) <= {t.scale}, FALSE)"]
            if t.kind is Kind.DECIMAL
            else []
        )
    )
    where = f"{format_json_path(term.path)} of {term.column}"
    fn = "try_variant_get" if term.try_cast else "variant_get"
    cast = f"TRY_CAST({x} AS {target})"
    if t.kind in _CAN_FAIL and not term.try_cast:
        cast = f"coalesce({cast}, error({_string(f'shredcat: {fn} of {where}: the value is out of range for {spark_type_name(t)}')}))"
    composite = f"{kind} LIKE 'OBJECT%' OR {kind} LIKE 'ARRAY%'"
    composite_result = "NULL" if term.try_cast else f"error({_string(f'shredcat: {fn} of {where}: an object or array cannot be cast to {spark_type_name(t)}')})"
    refusal = _string(
        f"shredcat: {fn} of {where}: a Variant value of type "
    ) + f" || {kind} || " + _string(f" cannot be cast to {spark_type_name(t)} in DuckDB exactly as Spark casts it")
    return (
        f"(CASE WHEN {ok} THEN {cast} WHEN {kind} = 'VARIANT_NULL' THEN NULL "
        f"WHEN {composite} THEN {composite_result} ELSE error({refusal}) END)"
    )


def _plain_term(term: ColumnTerm, column_types: Mapping[str, str] | None) -> str:
    name = _column(term.name)
    if column_types is None:
        return name
    t = term.target
    have = _lookup(column_types, term.name)
    want = duckdb_type(t)
    if have is None:
        raise UnrenderablePredicateError(f"DuckDB reads no column {term.name!r}", details={"column": term.name})
    if have == want or (t.is_integer and have in _INTEGERS.values()) or (t.kind is Kind.DECIMAL and have.startswith("DECIMAL(")):
        return name
    if t.kind is Kind.TIMESTAMPTZ and have in ("TIMESTAMP", "TIMESTAMP_NS"):
        # Spark's INT96 timestamps: DuckDB reads the UTC wall clock without a zone.
        return f"timezone('UTC', {name})"
    raise UnrenderablePredicateError(
        f"DuckDB reads column {term.name!r} as {have}, Spark as {spark_type_name(t)}: no exact rendering",
        details={"column": term.name},
    )


def _lookup(column_types: Mapping[str, str], name: str) -> str | None:
    """DuckDB resolves names case-insensitively, as Spark does."""
    hit = column_types.get(name)
    if hit is None:
        folded = [v for k, v in column_types.items() if k.casefold() == name.casefold()]
        hit = folded[0] if len(folded) == 1 else None
    return None if hit is None else hit.upper()


#: isnan(NULL) is false in Spark and NULL in DuckDB.
_DUCK_UNARY = {
    Op.IS_NULL: "{} IS NULL",
    Op.NOT_NULL: "{} IS NOT NULL",
    Op.IS_NAN: "coalesce(isnan({}), FALSE)",
    Op.NOT_NAN: "NOT coalesce(isnan({}), FALSE)",
}


def _duck_leaf(x: str) -> LeafBody:
    return LeafBody(x, duckdb_literal, _DUCK_UNARY)


class _DuckSql(SqlConnectives):
    def __init__(self, column_types: Mapping[str, str] | None) -> None:
        self.column_types = column_types

    def visit_not(self, node: Not) -> str:
        return f"NOT ({visit(node.child, self)})"

    def visit_unknown(self, node: Unknown) -> str:
        raise UnrenderablePredicateError(
            f"{node.text!r} is Spark SQL shredcat does not model; it has no exact DuckDB rendering",
            details={"expression": node.text},
        )

    def visit_predicate(self, pred: Predicate) -> str:
        term = pred.term
        if isinstance(term, VariantTerm) and term.has_wildcard:
            return _some_element(pred, term)
        x = _variant_term(term) if isinstance(term, VariantTerm) else _plain_term(term, self.column_types)
        return visit(pred, _duck_leaf(x))


def _some_element(pred: Predicate, term: VariantTerm) -> str:
    """``[*]``: Spark's ``exists(try_variant_get(.., 'array<variant>'), e -> ...)``, three-valued
    (TRUE if some element's leaf is TRUE, else NULL if some is NULL, else FALSE; NULL for a value
    that is not an array), over ``CAST(x AS VARIANT[])`` of the values that are arrays."""
    parts: list[list[Step]] = [[]]
    for step in term.path.steps:
        if isinstance(step, AnyIndex):
            parts.append([])
        else:
            parts[-1].append(step)
    n = len(parts) - 1
    inner = visit(pred, _duck_leaf(_variant_term(term, f"e{n}", tuple(parts[n]))))
    for i in range(n - 1, -1, -1):
        x = _extract(_column(term.column) if i == 0 else f"e{i}", tuple(parts[i]))
        arr = f"(CASE WHEN variant_typeof({x}) LIKE 'ARRAY%' THEN TRY_CAST({x} AS VARIANT[]) END)"
        leaves = f"list_transform({arr}, e{i + 1} -> {inner})"
        inner = (
            f"(CASE WHEN {arr} IS NULL THEN NULL WHEN len(list_filter({leaves}, b -> b)) > 0 THEN TRUE "
            f"WHEN list_count({leaves}) < len({arr}) THEN NULL ELSE FALSE END)"
        )
    return inner


def to_duckdb_sql(e: BooleanExpression, *, column_types: Mapping[str, str] | None = None) -> str:
    """DuckDB SQL for a tree (see the module docstring). ``column_types``: the DuckDB type of each
    plain and partition column as the relation reads it (checked; None: not checked)."""
    return visit(e, _DuckSql(column_types))
