"""Render a predicate tree as Spark SQL (``to_sql``), text that selects exactly the rows the
tree selects, so Spark helpers can apply the same predicate to rows that pruning used on files.

* A term is ``variant_get(col, '<spark path>', '<type>')`` (``try_variant_get`` when asked), or
  a plain/partition column's name (backticked where Spark needs it, ``a.b`` for a struct leaf).
* An :class:`Unknown` sub-expression is its own SQL text, in parentheses.
* A path with ``[*]`` is rendered with ``exists`` over the array, taken with
  ``try_variant_get(.., 'array<variant>')`` so a non-array is NULL rather than an error:
  ``exists(try_variant_get(v, '$.arr', 'array<variant>'), e1 -> variant_get(e1, '$.x', 'int') = 5)``.
* ``x IN ()`` (no literal equals, see expressions.py) has no Spark spelling; it is rendered
  ``CASE WHEN x IS NOT NULL THEN FALSE END``, NULL for a NULL x exactly like the comparison it
  replaced; ``NOT IN ()`` likewise with TRUE.
* Literals are typed so that Spark compares them exactly with the term: ``12.50BD``, ``1.5D``,
  ``CAST('0.1' AS FLOAT)``, ``DATE '2024-01-01'``, ``TIMESTAMP '2024-01-01 10:00:00+00:00'``
  (with an explicit zone, so the session time zone does not matter), ``TIMESTAMP_NTZ '...'``,
  ``X'0A'``. String literals escape ``\\`` and ``'`` with a backslash, as Spark's lexer wants.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from decimal import Decimal

from service.pruning.expressions import (
    And,
    BooleanExpression,
    BooleanExpressionVisitor,
    LiteralPredicate,
    Not,
    Op,
    Or,
    Predicate,
    PredicateVisitor,
    SetPredicate,
    UnaryPredicate,
    Unknown,
    VariantTerm,
    visit,
)
from service.pruning.expressions.spelling import COMPARISON_SYMBOLS, render_term

# Re-exported: callers spell a column or a string literal in the SQL this module renders.
from service.pruning.expressions.spelling import render_column as render_column
from service.pruning.expressions.spelling import sql_string as sql_string
from service.pruning.literals import format_date, format_timestamp
from service.pruning.paths import AnyIndex, JsonPath, Step, format_spark_path
from service.values import FLOAT32_MAX, Bound, Kind, ShreddedType, format_bound


def render_literal(t: ShreddedType, v: Bound) -> str:
    k = t.kind
    if k is Kind.BOOLEAN:
        return "TRUE" if v else "FALSE"
    if t.is_integer:
        return str(v)
    if k is Kind.FLOAT64:
        assert isinstance(v, float)
        if math.isinf(v):
            return "CAST('Infinity' AS DOUBLE)" if v > 0 else "CAST('-Infinity' AS DOUBLE)"
        return f"{v!r}D"
    if k is Kind.FLOAT32:
        assert isinstance(v, float)
        if math.isinf(v):
            return "CAST('Infinity' AS FLOAT)" if v > 0 else "CAST('-Infinity' AS FLOAT)"
        assert abs(v) <= FLOAT32_MAX
        return f"CAST('{format_bound(t, v)}' AS FLOAT)"
    if k is Kind.DECIMAL:
        assert isinstance(v, Decimal)
        return f"{v:f}BD"
    if k is Kind.DATE:
        assert isinstance(v, int)
        return f"DATE '{format_date(v)}'"
    if k is Kind.TIMESTAMPTZ:
        assert isinstance(v, int)
        return f"TIMESTAMP '{format_timestamp(v, tz=True)}'"
    if k is Kind.TIMESTAMP:
        assert isinstance(v, int)
        return f"TIMESTAMP_NTZ '{format_timestamp(v, tz=False)}'"
    if k is Kind.BLOB:
        assert isinstance(v, bytes)
        return f"X'{v.hex().upper()}'"
    assert isinstance(v, str)
    return sql_string(v)


_UNARY = {
    Op.IS_NULL: "{} IS NULL",
    Op.NOT_NULL: "{} IS NOT NULL",
    Op.IS_NAN: "isnan({})",
    Op.NOT_NAN: "NOT isnan({})",
}


class LeafBody(PredicateVisitor[str]):
    """A leaf applied to the rendered term ``x``, in a dialect: its ``literal`` spelling and its
    ``unary`` tests (format strings of the term); Spark's by default, DuckDB's in render_duckdb."""

    def __init__(
        self,
        x: str,
        literal: Callable[[ShreddedType, Bound], str] = render_literal,
        unary: Mapping[Op, str] = _UNARY,
    ) -> None:
        self.x = x
        self.literal = literal
        self.unary = unary

    def visit_unary(self, pred: UnaryPredicate) -> str:
        return self.unary[pred.op].format(self.x)

    def visit_literal(self, pred: LiteralPredicate) -> str:
        return f"{self.x} {COMPARISON_SYMBOLS[pred.op]} {self.literal(pred.term.target, pred.literal)}"

    def visit_set(self, pred: SetPredicate) -> str:
        if not pred.literals:
            return f"CASE WHEN {self.x} IS NOT NULL THEN {'FALSE' if pred.op is Op.IN else 'TRUE'} END"
        items = ", ".join(self.literal(pred.term.target, v) for v in pred.literals)
        return f"{self.x} {'IN' if pred.op is Op.IN else 'NOT IN'} ({items})"


def render_predicate(pred: Predicate) -> str:
    term = pred.term
    if not isinstance(term, VariantTerm):
        return visit(pred, LeafBody(render_term(term)))
    parts: list[list[Step]] = [[]]
    for s in term.path.steps:
        if isinstance(s, AnyIndex):
            parts.append([])
        else:
            parts[-1].append(s)
    n = len(parts) - 1
    if n == 0:
        return visit(pred, LeafBody(render_term(term)))
    inner = visit(pred, LeafBody(render_term(term, f"e{n}", JsonPath(tuple(parts[n])))))
    for i in range(n - 1, -1, -1):
        base = render_column(term.column) if i == 0 else f"e{i}"
        arr = f"try_variant_get({base}, {sql_string(format_spark_path(JsonPath(tuple(parts[i]))))}, 'array<variant>')"
        inner = f"exists({arr}, e{i + 1} -> {inner})"
    return inner


class SqlConnectives(BooleanExpressionVisitor[str]):
    """TRUE, FALSE, AND and OR as SQL text, the same in Spark's and DuckDB's dialects (each
    renderer adds its leaves, NOT and unknown sub-expressions)."""

    def visit_true(self) -> str:
        return "TRUE"

    def visit_false(self) -> str:
        return "FALSE"

    def _operand(self, c: BooleanExpression) -> str:
        return f"({visit(c, self)})" if isinstance(c, And | Or) else visit(c, self)

    def visit_and(self, node: And) -> str:
        return " AND ".join(self._operand(c) for c in node.children)

    def visit_or(self, node: Or) -> str:
        return " OR ".join(self._operand(c) for c in node.children)


class _Sql(SqlConnectives):
    def visit_not(self, node: Not) -> str:
        inner = visit(node.child, self)
        return f"NOT ({inner})" if isinstance(node.child, And | Or | Not) else f"NOT {inner}"

    def visit_unknown(self, node: Unknown) -> str:
        return f"({node.text})"

    def visit_predicate(self, pred: Predicate) -> str:
        return render_predicate(pred)


_SQL = _Sql()


def to_sql(e: BooleanExpression) -> str:
    """Spark SQL text for a tree (see the module docstring)."""
    return visit(e, _SQL)
