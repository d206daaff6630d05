"""Spark SQL predicate text ⇄ predicate tree, with sqlglot.

* :mod:`.guard`: length and nesting limits checked before sqlglot parses, in
  :mod:`.recursion`'s headroom; :mod:`.syntax`: the one module that calls sqlglot and
  translates its errors; :mod:`.convert` (with :mod:`.literal_nodes` and :mod:`.nodes`):
  sqlglot's tree → predicate tree. Rendering back is :func:`service.pruning.render.to_sql`.
* :mod:`.shapes`: long ``IN`` lists and long OR (or AND) chains of comparisons read without
  sqlglot, to the same tree (a 90 KB list of 10,000 ids: ~0.3 s of CPU through sqlglot); any
  other text, and any error, takes sqlglot's path.

Accepted without a schema, everything else being an InvalidPredicateError that names what is
not supported (nothing is silently dropped: an ignored conjunct could only widen the result, but an ignored
disjunct or negation would prune files that match):

* Terms: ``variant_get(v, '$.path', 'type')``, ``try_variant_get(...)``, and the Databricks
  shorthand ``v:a.b::bigint`` / ``v:['a b']::int`` / ``v:arr[0].x::int`` /
  ``CAST(v:a AS INT)`` / ``try_cast(v:a AS INT)`` (parsed with sqlglot's ``databricks``
  dialect, see :mod:`.syntax`).
* ``term op literal`` and ``literal op term`` (=, ==, !=, <>, <, <=, >, >=), ``[NOT] BETWEEN``
  (→ ``>= AND <=``, Spark's definition), ``[NOT] IN (...)``, ``IS [NOT] NULL``,
  ``isnull(..)``/``isnotnull(..)``, ``isnan(..)``, ``AND``/``OR``/``NOT``, parentheses,
  ``TRUE``/``FALSE``.
* Literals typed as Spark types them: ``42`` (int), ``42.0`` (decimal), ``4.2e1``/``42D``
  (double), ``1.5F`` (float), ``12.50BD``, ``CAST('12.5' AS DECIMAL(10,2))``, ``-5``,
  ``'text'``, ``X'0A'``, ``DATE '2024-01-01'``, ``TIMESTAMP '2024-01-01 10:00:00'`` (no zone:
  UTC, the service's session time zone), ``TIMESTAMP_NTZ '...'``. How a literal of another
  family is compared with a term is decided in :mod:`service.pruning.literals`.
* ``exists(try_variant_get(v, '$.arr', 'array<variant>'), e -> <one comparison on
  variant_get(e, ...)>)``: the "some element" form (``[*]``) that :func:`to_sql` writes.
  ``[*]`` inside a ``variant_get`` path is refused: Spark's variant_get has no such step.

With a :class:`~service.pruning.schema.TableSchema` (``schema=``), any Spark WHERE clause:

* Names resolve as Spark resolves them: case-insensitively, backticks, ``a.b`` for a struct
  leaf; ``variant_get``'s first argument must be a Variant column. A name the table does not have
  (anywhere in the text, unknown sub-expressions included) is an UnknownColumnError naming it and
  listing the table's columns. A bare boolean column is ``col = TRUE``.
* A plain or partition column is a term like ``variant_get(...)``: the same leaves, with the
  column's type as the target, and the same literal rules (:mod:`service.pruning.literals`,
  checked against pyspark 4.3 with ANSI on, its default). What prunes, by column type:

  ===================  ==========================================================================
  integer              integer, decimal (exact, ≤ 38 digits), double (< 2**53) literals; a
                       string naming an integer exactly (``'7'``)
  decimal(p,s)         integer and decimal literals (exact); a double literal is unknown
  float / double       numeric literals (Spark's float/double casts), NaN ordered above all
  string               string literals only (``name = 5`` casts the column: unknown)
  date                 ``DATE``, ``TIMESTAMP`` (midnight, UTC) and ``'YYYY-MM-DD'`` literals
  timestamp(_ntz)      ``TIMESTAMP``/``TIMESTAMP_NTZ``/``DATE`` literals and timestamp strings,
                       zone-less ones read in UTC (the service's session time zone)
  boolean / binary     boolean / binary and string literals
  time, uuid, ns       only IS [NOT] NULL; comparisons are unknown
  no type (list, map)  everything is unknown
  ===================  ==========================================================================

  Any other combination (a string partition against a ``DATE``, a literal Spark's cast would
  reject or round) is unknown.
* ``s LIKE 'abc%'`` (any pattern with a literal prefix, ``ESCAPE`` honoured) and
  ``startswith(s, 'abc')`` on a string term (plain column or ``variant_get(..., 'string')``)
  become ``s >= 'abc' AND s < 'abd' AND <the LIKE, unknown>`` (:mod:`service.pruning.prefixes`):
  the range is implied, the LIKE itself stays, so ``NOT LIKE`` never prunes.
* What pruning cannot reason about is :class:`~service.pruning.expressions.Unknown`, keeping its
  text: functions of columns (``length(name) > 3``, ``upper(region) = 'EU'``), arithmetic
  (``id % 2 = 0``), column against column, other LIKE/RLIKE, CASE, subqueries, ``<=>``, ``IS TRUE``,
  comparisons with NULL, ``variant_get`` to a complex type. It never prunes and never fails.
* Still errors: syntax, limits, a malformed ``variant_get`` (arity, unknown type name, bad path).

Limits (LimitExceededError): ``max_depth`` for the nesting of AND/OR/NOT (a chain of one
operator counts once), ``max_in_list`` per IN list, ``max_length`` characters of text and
``max_terms`` terms joined by AND/OR, ``max_path_depth`` steps of one path written in SQL
(``v:a.b[0]``, ``s.a.b``; four times ``max_terms`` in all). These are checked on the raw text, in
microseconds, before sqlglot sees it. sqlglot's parser recurses ~20 Python frames per
parenthesis, so the text's nesting is measured on the tokens before parsing and the recursion
limit is raised for the parse.
"""

from __future__ import annotations

from service.errors import InvalidPredicateError, UnknownColumnError
from service.pruning.expressions import BooleanExpression, Op, Term, UnaryPredicate
from service.pruning.parse_sql.convert import Converter
from service.pruning.parse_sql.guard import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_IN_LIST,
    DEFAULT_MAX_LENGTH,
    DEFAULT_MAX_PATH_DEPTH,
    DEFAULT_MAX_TERMS,
    check_text,
    checked_parse,
)
from service.pruning.parse_sql.located import located
from service.pruning.parse_sql.nodes import source_text
from service.pruning.parse_sql.shapes import MIN_CHARS, read_shapes
from service.pruning.parse_sql.syntax import is_plain_name
from service.pruning.render import to_sql
from service.pruning.schema import TableSchema
from service.values.text import lone_surrogate, shown

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_IN_LIST",
    "DEFAULT_MAX_LENGTH",
    "DEFAULT_MAX_PATH_DEPTH",
    "DEFAULT_MAX_TERMS",
    "parse_sql",
    "to_sql",
]


def parse_sql(
    text: str,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_in_list: int = DEFAULT_MAX_IN_LIST,
    max_length: int = DEFAULT_MAX_LENGTH,
    max_terms: int = DEFAULT_MAX_TERMS,
    max_path_depth: int = DEFAULT_MAX_PATH_DEPTH,
    schema: TableSchema | None = None,
) -> BooleanExpression:
    """Parse a Spark SQL predicate (the body of a WHERE clause) into a tree.

    With ``schema`` (the table's columns) any WHERE clause is accepted: names are resolved
    against it, plain and partition columns become column terms, and what pruning cannot use
    becomes :class:`~service.pruning.expressions.Unknown`; a name the table does not have is an
    UnknownColumnError. Without it (callers not yet given the table's schema) only the forms
    below are accepted and the catalog checks the Variant columns."""
    if isinstance(text, str) and lone_surrogate(text):
        raise InvalidPredicateError(f"the predicate is not valid Unicode: {shown(text)!r}")
    limits = {
        "max_depth": max_depth,
        "max_in_list": max_in_list,
        "max_length": max_length,
        "max_terms": max_terms,
        "max_path_depth": max_path_depth,
    }
    check_text(text, max_length=max_length, max_terms=max_terms, max_in_list=max_in_list, max_path_depth=max_path_depth)
    if len(text) >= MIN_CHARS:
        fast = read_shapes(
            text, lambda term: term_of(term, schema, limits), max_depth=max_depth, max_in_list=max_in_list
        )
        if fast is not None:
            return fast
    tree = checked_parse(text, max_depth=max_depth)
    with source_text(text):
        try:
            return Converter(max_depth, max_in_list, schema).convert(tree, 0)
        except UnknownColumnError as e:
            raise located(e, text, tree) from None


def term_of(text: str, schema: TableSchema | None, limits: dict[str, int]) -> Term:
    """The term ``text`` is, as this parser reads it in a predicate (for :mod:`.shapes`): that of
    ``<text> IS NULL``; an error when the text is not a call or a plain name, or not a term."""
    if not text.endswith(")") and not is_plain_name(text):
        raise InvalidPredicateError(f"not a plain name: {text}")
    leaf = parse_sql(f"{text} IS NULL", schema=schema, **limits)
    if not isinstance(leaf, UnaryPredicate) or leaf.op is not Op.IS_NULL:
        raise InvalidPredicateError(f"not a term: {text}")
    return leaf.term
