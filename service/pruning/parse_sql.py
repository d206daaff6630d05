"""Spark SQL predicate text ⇄ predicate tree, with sqlglot.

Accepted, everything else being an InvalidPredicateError that names what is not supported
(nothing is silently dropped: an ignored conjunct could only widen the result, but an ignored
disjunct or negation would prune files that match):

* Terms: ``variant_get(v, '$.path', 'type')``, ``try_variant_get(...)``, and the Databricks
  shorthand ``v:a.b::bigint`` / ``v:['a b']::int`` / ``v:arr[0].x::int`` /
  ``CAST(v:a AS INT)`` / ``try_cast(v:a AS INT)``. sqlglot's ``spark`` dialect has no ``:``
  operator, so text that fails to parse as Spark and contains ``:`` is parsed again with the
  ``databricks`` dialect (a superset of Spark's grammar for predicates).
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

Limits (LimitExceededError): ``max_depth`` for the nesting of AND/OR/NOT (a chain of one
operator counts once), ``max_in_list`` per IN list, ``max_length`` characters of text.
sqlglot's parser recurses ~20 Python frames per parenthesis, so the text's nesting is measured
on the tokens before parsing and the recursion limit is raised for the parse.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import ROUND_HALF_UP, Context, Decimal
from fractions import Fraction
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError, TokenError
from sqlglot.tokens import TokenType

from service.errors import InvalidPathError, InvalidPredicateError, LimitExceededError
from service.pruning.expressions import (
    FALSE,
    FLIPPED,
    TRUE,
    BooleanExpression,
    LiteralPredicate,
    Op,
    SetPredicate,
    UnaryPredicate,
    VariantTerm,
    and_,
    compare,
    in_list,
    not_,
    or_,
    unary,
)
from service.pruning.literals import (
    DateLiteral,
    Float32Literal,
    LiteralValue,
    check_spark_decimal_width,
    nearest_float32,
    parse_date_text,
    parse_numeral,
    parse_timestamp_text,
)
from service.pruning.paths import ANY_INDEX, Index, JsonPath, Key, Step, parse_json_path
from service.pruning.render import to_sql
from service.pruning.spark_types import parse_spark_type

__all__ = ["DEFAULT_MAX_DEPTH", "DEFAULT_MAX_IN_LIST", "DEFAULT_MAX_LENGTH", "parse_sql", "to_sql"]

DEFAULT_MAX_DEPTH = 64
DEFAULT_MAX_IN_LIST = 10_000
DEFAULT_MAX_LENGTH = 1_000_000

# Slack over max_depth for parentheses that are not boolean nesting (function calls, casts).
_PAREN_SLACK = 16
_FRAMES_PER_LEVEL = 25

_CMP: dict[type[exp.Expression], Op] = {
    exp.EQ: Op.EQ,
    exp.NEQ: Op.NOT_EQ,
    exp.LT: Op.LT,
    exp.LTE: Op.LT_EQ,
    exp.GT: Op.GT,
    exp.GTE: Op.GT_EQ,
}

_UNSUPPORTED_NAMES: dict[type[exp.Expression], str] = {
    exp.Like: "LIKE",
    exp.ILike: "ILIKE",
    exp.RegexpLike: "RLIKE / REGEXP",
    exp.SimilarTo: "SIMILAR TO",
    exp.Add: "arithmetic (+)",
    exp.Sub: "arithmetic (-)",
    exp.Mul: "arithmetic (*)",
    exp.Div: "arithmetic (/)",
    exp.Mod: "arithmetic (%)",
    exp.Subquery: "subqueries",
    exp.Select: "a SELECT statement (pass only the predicate)",
    exp.NullSafeEQ: "<=> (null-safe equality)",
    exp.NullSafeNEQ: "null-safe inequality",
    exp.Xor: "XOR",
    exp.Star: "*",
}

_TERM_FUNCS = ("variant_get", "try_variant_get")
_LAMBDA_COLUMN = "\x00lambda"


# --- recursion headroom for sqlglot -----------------------------------------------------------

_rec_lock = threading.Lock()
_rec_active = 0
_rec_saved = 0


@contextmanager
def _recursion_headroom(frames: int) -> Iterator[None]:
    """Raise the interpreter's recursion limit while parsing; restored by the last parser out.
    (Python-to-Python calls do not use the C stack on 3.11, so a few thousand frames are safe.)"""
    global _rec_active, _rec_saved
    with _rec_lock:
        if _rec_active == 0:
            _rec_saved = sys.getrecursionlimit()
        _rec_active += 1
        sys.setrecursionlimit(max(sys.getrecursionlimit(), _rec_saved + frames))
    try:
        yield
    finally:
        with _rec_lock:
            _rec_active -= 1
            if _rec_active == 0:
                sys.setrecursionlimit(_rec_saved)


# --- entry points -----------------------------------------------------------------------------


def _nesting(text: str, dialect: str) -> int:
    """Parenthesis depth plus the longest run of prefix operators (NOT, unary minus): what
    makes sqlglot's recursive-descent parser recurse."""
    try:
        tokens = sqlglot.tokenize(text, read=dialect)
    except TokenError as e:
        raise InvalidPredicateError(f"cannot tokenize SQL predicate: {e}") from None
    depth = best = run = 0
    prefix = {TokenType.NOT, TokenType.DASH, TokenType.PLUS}
    for t in tokens:
        if t.token_type is TokenType.L_PAREN:
            depth += 1
        elif t.token_type is TokenType.R_PAREN:
            depth -= 1
        run = run + 1 if t.token_type in prefix else 0
        best = max(best, depth + run)
    return best


def _parse_error(e: ParseError) -> InvalidPredicateError:
    if e.errors:
        first = e.errors[0]
        msg = f"cannot parse SQL predicate: {first.get('description')} at line {first.get('line')}, column {first.get('col')}"
        near = (first.get("start_context") or "") + (first.get("highlight") or "")
        if near:
            msg += f" (near {near[-40:]!r})"
        return InvalidPredicateError(msg, details={"line": first.get("line"), "column": first.get("col")})
    return InvalidPredicateError(f"cannot parse SQL predicate: {e}")


def _sqlglot_parse(text: str) -> exp.Expression:
    try:
        statements = sqlglot.parse(text, read="spark")
    except ParseError as e:
        if ":" not in text:
            raise _parse_error(e) from None
        try:
            # The `v:a.b::type` shorthand exists only in sqlglot's databricks dialect.
            statements = sqlglot.parse(text, read="databricks")
        except ParseError:
            raise _parse_error(e) from None
    except TokenError as e:
        raise InvalidPredicateError(f"cannot tokenize SQL predicate: {e}") from None
    statements = [s for s in statements if s is not None]
    if len(statements) != 1:
        raise InvalidPredicateError(f"expected exactly one predicate, got {len(statements)} statements")
    return statements[0]


def parse_sql(
    text: str,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_in_list: int = DEFAULT_MAX_IN_LIST,
    max_length: int = DEFAULT_MAX_LENGTH,
) -> BooleanExpression:
    """Parse a Spark SQL predicate (the body of a WHERE clause) into a tree."""
    if not isinstance(text, str):
        raise InvalidPredicateError(f"a SQL predicate must be a string, not {type(text).__name__}")
    if len(text) > max_length:
        raise LimitExceededError(
            f"SQL predicate is {len(text)} characters; the limit is {max_length}",
            details={"limit": max_length},
        )
    if not text.strip():
        raise InvalidPredicateError("empty SQL predicate")
    nesting = _nesting(text, "spark" if ":" not in text else "databricks")
    if nesting > max_depth + _PAREN_SLACK:
        raise LimitExceededError(
            f"SQL predicate nested {nesting} levels deep; the limit is {max_depth}",
            details={"limit": max_depth},
        )
    try:
        with _recursion_headroom(_FRAMES_PER_LEVEL * (nesting + 10)):
            tree = _sqlglot_parse(text)
    except RecursionError:
        raise LimitExceededError("SQL predicate nested too deeply", details={"limit": max_depth}) from None
    except SqlglotError as e:  # pragma: no cover - other sqlglot failures
        raise InvalidPredicateError(f"cannot parse SQL predicate: {e}") from None
    return _Converter(max_depth, max_in_list).convert(tree, 0)


# --- conversion -------------------------------------------------------------------------------


def _snippet(node: exp.Expression) -> str:
    try:
        # databricks prints the `v:a` shorthand as written (spark would say GET_JSON_OBJECT).
        s = node.sql(dialect="databricks")
    except Exception:  # pragma: no cover - printing is best effort
        s = type(node).__name__
    return s if len(s) <= 80 else s[:77] + "..."


def _unsupported(node: exp.Expression, what: str | None = None) -> InvalidPredicateError:
    if what is None:
        what = next((n for t, n in _UNSUPPORTED_NAMES.items() if isinstance(node, t)), None)
    if what is None:
        if isinstance(node, exp.Anonymous):
            what = f"function {node.name}()"
        elif isinstance(node, exp.Func):
            what = f"function {node.sql_name()}()"
        else:
            what = type(node).__name__
    return InvalidPredicateError(
        f"{what} is not supported in a pruning predicate: {_snippet(node)}",
        details={"unsupported": what},
    )


def _unparen(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _is_string(node: exp.Expression) -> bool:
    return isinstance(node, exp.Literal) and node.is_string


def _quantize(d: Decimal, scale: int) -> Decimal:
    return d.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP, context=Context(prec=100))


class _Converter:
    def __init__(self, max_depth: int, max_in_list: int) -> None:
        self.max_depth = max_depth
        self.max_in_list = max_in_list
        self.lambda_var: str | None = None

    # -- boolean structure --

    def convert(self, node: exp.Expression, depth: int) -> BooleanExpression:
        if depth > self.max_depth:
            raise LimitExceededError(
                f"SQL predicate nested deeper than {self.max_depth}", details={"limit": self.max_depth}
            )
        node = _unparen(node)
        if isinstance(node, exp.And | exp.Or):
            return self._chain(node, depth)
        if isinstance(node, exp.Not):
            return not_(self.convert(node.this, depth + 1))
        if isinstance(node, exp.Boolean):
            return TRUE if node.this else FALSE
        for cls, op in _CMP.items():
            if type(node) is cls:
                return self._comparison(node, op, node.this, node.expression)
        if isinstance(node, exp.Is):
            if not isinstance(node.expression, exp.Null):
                raise _unsupported(node, "IS TRUE / IS FALSE")
            return unary(Op.IS_NULL, self._require_term(node.this, node))
        if isinstance(node, exp.In):
            return self._in(node)
        if isinstance(node, exp.Between):
            return self._between(node)
        if isinstance(node, exp.IsNan):
            return unary(Op.IS_NAN, self._require_term(node.this, node))
        if isinstance(node, exp.Anonymous) and node.name.lower() in ("isnull", "isnotnull"):
            if len(node.expressions) != 1:
                raise InvalidPredicateError(f"{node.name}() takes one argument: {_snippet(node)}")
            op = Op.IS_NULL if node.name.lower() == "isnull" else Op.NOT_NULL
            return unary(op, self._require_term(node.expressions[0], node))
        if isinstance(node, exp.Exists):
            return self._exists(node, depth, None, ())
        if isinstance(node, exp.Case):
            return self._case(node)
        if isinstance(node, exp.Null):
            raise InvalidPredicateError(
                "a NULL predicate selects nothing; write FALSE, or use IS NULL on a term"
            )
        if self._term(node) is not None:
            raise InvalidPredicateError(
                f"a term alone is not a predicate; compare it with a literal: {_snippet(node)}"
            )
        if isinstance(node, exp.Column):
            raise _unsupported(node, f"bare column {node.sql(dialect='spark')}")
        raise _unsupported(node)

    def _chain(self, node: exp.And | exp.Or, depth: int) -> BooleanExpression:
        # sqlglot builds `a AND b AND c ...` left-deep: walk it with a stack, one nesting level.
        cls = type(node)
        operands: list[exp.Expression] = []
        stack: list[exp.Expression] = [node]
        while stack:
            n = _unparen(stack.pop())
            if type(n) is cls:
                stack.append(n.expression)
                stack.append(n.this)
            else:
                operands.append(n)
        children = [self.convert(o, depth + 1) for o in operands]
        return and_(*children) if cls is exp.And else or_(*children)

    # -- terms --

    def _column_name(self, node: exp.Expression) -> str | None:
        node = _unparen(node)
        if isinstance(node, exp.Column):
            parts = [p.name for p in node.parts]
        elif isinstance(node, exp.Identifier):
            parts = [node.name]
        elif isinstance(node, exp.Dot):
            left = self._column_name(node.this)
            if left is None or not isinstance(node.expression, exp.Identifier):
                return None
            parts = [left, node.expression.name]
        else:
            return None
        name = ".".join(parts)
        if self.lambda_var is not None and name == self.lambda_var:
            return _LAMBDA_COLUMN
        return name

    def _term(self, node: exp.Expression) -> VariantTerm | None:
        """The variant term ``node`` is, None if it is not one; malformed terms raise."""
        node = _unparen(node)
        if isinstance(node, exp.Anonymous) and node.name.lower() in _TERM_FUNCS:
            fn = node.name.lower()
            args = node.expressions
            if len(args) != 3:
                raise InvalidPredicateError(
                    f"{fn} needs (column, path, type) to be compared with a literal: {_snippet(node)}"
                )
            column = self._column_name(args[0])
            if column is None:
                raise InvalidPredicateError(f"the first argument of {fn} must be a column: {_snippet(node)}")
            if not _is_string(args[1]) or not _is_string(args[2]):
                raise InvalidPredicateError(f"{fn} needs a string literal path and type: {_snippet(node)}")
            path = self._path(args[1].this, node)
            if path.has_wildcard:
                raise InvalidPredicateError(
                    f"[*] is not part of Spark's variant_get paths; write exists(...) for 'some element': {_snippet(node)}"
                )
            return VariantTerm(column, path, parse_spark_type(args[2].this), fn == "try_variant_get")
        if isinstance(node, exp.Cast):  # TryCast is a Cast
            inner = _unparen(node.this)
            if isinstance(inner, exp.JSONExtract):
                return self._shorthand(inner, node)
            if self._is_term_like(inner):
                raise InvalidPredicateError(
                    f"casting a variant_get(...) term is not supported; give the type to variant_get: {_snippet(node)}"
                )
            return None
        if isinstance(node, exp.JSONExtract):
            raise InvalidPredicateError(
                f"{_snippet(node)} is a VARIANT; cast it to compare it, e.g. {_snippet(node)}::bigint"
            )
        return None

    def _is_term_like(self, node: exp.Expression) -> bool:
        return isinstance(node, exp.Anonymous) and node.name.lower() in _TERM_FUNCS

    def _path(self, text: str, node: exp.Expression) -> JsonPath:
        try:
            return parse_json_path(text)
        except InvalidPathError as e:
            raise InvalidPathError(f"{e.message} in {_snippet(node)}", details=e.details) from None

    def _shorthand(self, extract: exp.JSONExtract, cast: exp.Cast) -> VariantTerm:
        if not extract.args.get("variant_extract"):
            raise _unsupported(extract, "JSON extraction")
        column = self._column_name(extract.this)
        if column is None:
            raise InvalidPredicateError(f"the ':' path must follow a column: {_snippet(extract)}")
        path = extract.expression
        if not isinstance(path, exp.JSONPath):
            raise _unsupported(extract, "this ':' path form")
        steps: list[Step] = []
        for part in path.expressions:
            if isinstance(part, exp.JSONPathRoot):
                continue
            if isinstance(part, exp.JSONPathKey) and isinstance(part.this, str):
                steps.append(Key(part.this))
            elif isinstance(part, exp.JSONPathSubscript) and isinstance(part.this, int):
                steps.append(Index(part.this))
            elif isinstance(part, exp.JSONPathSubscript | exp.JSONPathWildcard):
                raise InvalidPredicateError(
                    f"[*] in a ':' path yields an array, not a value; write exists(...) for 'some element': {_snippet(cast)}"
                )
            else:
                raise _unsupported(cast, f"':' path step {part.sql(dialect='databricks')}")
        type_name = cast.to.sql(dialect="spark")
        is_try = isinstance(cast, exp.TryCast)
        return VariantTerm(column, JsonPath(tuple(steps)), parse_spark_type(type_name), is_try)

    def _require_term(self, node: exp.Expression, parent: exp.Expression) -> VariantTerm:
        term = self._term(node)
        if term is None:
            raise InvalidPredicateError(
                f"expected a variant_get(...) term, got {_snippet(node)} in {_snippet(parent)}"
            )
        return term

    # -- literals --

    def _literal(self, node: exp.Expression, target: VariantTerm) -> LiteralValue:
        node = _unparen(node)
        v = self._literal_value(node)
        if isinstance(v, Decimal):
            check_spark_decimal_width(target.target, v)
        return v

    def _literal_value(self, node: exp.Expression) -> LiteralValue:
        node = _unparen(node)
        if isinstance(node, exp.Neg):
            v = self._literal_value(node.this)
            if isinstance(v, Float32Literal):
                return Float32Literal(-v.value)
            if isinstance(v, Decimal):
                return v.copy_negate()  # exact; unary minus rounds to the context's 28 digits
            if isinstance(v, int | float) and not isinstance(v, bool):
                return -v
            raise InvalidPredicateError(f"cannot negate {_snippet(node.this)}")
        if isinstance(node, exp.Literal):
            text = str(node.this)
            if node.is_string:
                return text
            return _number(text)
        if isinstance(node, exp.Boolean):
            return bool(node.this)
        if isinstance(node, exp.Null):
            raise InvalidPredicateError("NULL is never equal to anything; use IS NULL / IS NOT NULL")
        if isinstance(node, exp.HexString):
            try:
                return bytes.fromhex(str(node.this))
            except ValueError:
                raise InvalidPredicateError(f"bad hex literal {_snippet(node)}") from None
        if isinstance(node, exp.Cast):
            return self._cast_literal(node)
        if self._term(node) is not None:
            raise InvalidPredicateError(f"comparing two terms is not supported: {_snippet(node)}")
        if isinstance(node, exp.Column):
            raise _unsupported(node, f"column comparison with {node.sql(dialect='spark')}")
        raise InvalidPredicateError(
            f"expected a literal, got {_snippet(node)}",
            details={"unsupported": type(node).__name__},
        )

    def _cast_literal(self, node: exp.Cast) -> LiteralValue:
        inner = _unparen(node.this)
        if not isinstance(inner, exp.Literal | exp.Neg | exp.Boolean | exp.HexString | exp.Null):
            raise _unsupported(node, "a CAST of something other than a literal")
        v = self._literal_value(inner)
        dt = node.to.this
        T = exp.DataType.Type
        text = v if isinstance(v, str) else None
        bad = InvalidPredicateError(f"cannot read {_snippet(node)} as a literal")
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
        if number is None:
            if dt in (T.DOUBLE, T.FLOAT) and text is not None:
                low = text.strip().lower()
                special = {
                    "nan": float("nan"),
                    "infinity": float("inf"),
                    "inf": float("inf"),
                    "+infinity": float("inf"),
                    "+inf": float("inf"),
                    "-infinity": float("-inf"),
                    "-inf": float("-inf"),
                }
                if low in special:
                    f = special[low]
                    return f if dt is T.DOUBLE else Float32Literal(f)
            raise bad
        if dt is T.DOUBLE:
            return float(number) if not isinstance(number, float) else number
        if dt is T.FLOAT:
            return Float32Literal(nearest_float32(Fraction(number)))
        if dt in (T.TINYINT, T.SMALLINT, T.INT, T.BIGINT):
            f = Fraction(number)
            bits = {T.TINYINT: 8, T.SMALLINT: 16, T.INT: 32, T.BIGINT: 64}[dt]
            if f.denominator != 1 or not -(2 ** (bits - 1)) <= f < 2 ** (bits - 1):
                raise InvalidPredicateError(f"{_snippet(node)} is not an exact {dt.value.lower()} value")
            return int(f)
        if dt is T.DECIMAL:
            params = node.to.expressions
            p = int(params[0].this.this) if params else 10
            s = int(params[1].this.this) if len(params) > 1 else 0
            if isinstance(number, float):
                raise InvalidPredicateError(
                    f"a double cast to DECIMAL is rounded by Spark; write a decimal literal: {_snippet(node)}"
                )
            q = _quantize(Decimal(number), s)
            if q.copy_abs() >= Decimal(f"1E{p - s}"):
                raise InvalidPredicateError(f"{_snippet(node)} does not fit DECIMAL({p},{s})")
            return q
        raise _unsupported(node, f"a literal of type {node.to.sql(dialect='spark')}")

    # -- leaves --

    def _comparison(
        self, node: exp.Expression, op: Op, left: exp.Expression, right: exp.Expression
    ) -> BooleanExpression:
        lt, rt = self._term(left), self._term(right)
        if lt is not None and rt is not None:
            raise InvalidPredicateError(f"comparing two terms is not supported: {_snippet(node)}")
        if lt is None and rt is None:
            for side in (left, right):
                s = _unparen(side)
                if isinstance(s, exp.Column):
                    raise _unsupported(node, "a comparison on a plain column (only variant_get(...) terms)")
            # A term hidden in arithmetic or a function call is the usual cause.
            raise _unsupported(_unparen(left) if not _is_literalish(left) else _unparen(right))
        if lt is None:
            assert rt is not None
            term, other, op = rt, left, FLIPPED[op]
        else:
            term, other = lt, right
        return compare(op, term, self._literal(other, term))

    def _in(self, node: exp.In) -> BooleanExpression:
        if (
            node.args.get("query") is not None
            or node.args.get("unnest") is not None
            or node.args.get("field") is not None
        ):
            raise _unsupported(node, "IN with a subquery")
        term = self._require_term(node.this, node)
        values = node.expressions
        if len(values) > self.max_in_list:
            raise LimitExceededError(
                f"{len(values)} values in an IN list; the limit is {self.max_in_list}",
                details={"limit": self.max_in_list},
            )
        return in_list(Op.IN, term, [self._literal(v, term) for v in values])

    def _between(self, node: exp.Between) -> BooleanExpression:
        if node.args.get("symmetric"):
            raise _unsupported(node, "BETWEEN SYMMETRIC")
        term = self._require_term(node.this, node)
        low = compare(Op.GT_EQ, term, self._literal(node.args["low"], term))
        high = compare(Op.LT_EQ, term, self._literal(node.args["high"], term))
        return and_(low, high)

    def _case(self, node: exp.Case) -> BooleanExpression:
        # Only the form to_sql writes for "no literal equals": CASE WHEN t IS NOT NULL THEN b END.
        ifs = node.args.get("ifs") or []
        if node.this is None and node.args.get("default") is None and len(ifs) == 1:
            cond, then = _unparen(ifs[0].this), _unparen(ifs[0].args.get("true"))
            if (
                isinstance(cond, exp.Not)
                and isinstance(_unparen(cond.this), exp.Is)
                and isinstance(_unparen(cond.this).expression, exp.Null)
                and isinstance(then, exp.Boolean)
            ):
                term = self._require_term(_unparen(cond.this).this, node)
                return in_list(Op.NOT_IN if then.this else Op.IN, term, [])
        raise _unsupported(node, "CASE")

    def _exists(
        self, node: exp.Exists, depth: int, outer_var: str | None, prefix: tuple[Step, ...]
    ) -> BooleanExpression:
        """``exists(try_variant_get(base, path, 'array<variant>'), e -> leaf)``: some element."""
        arr = _unparen(node.this)
        lam = node.args.get("expression")
        if not (
            isinstance(arr, exp.Anonymous) and arr.name.lower() in _TERM_FUNCS and len(arr.expressions) == 3
        ):
            raise _unsupported(node, "exists over something other than variant_get(.., 'array<variant>')")
        base_node, path_node, type_node = arr.expressions
        if not _is_string(type_node) or type_node.this.replace(" ", "").lower() != "array<variant>":
            raise _unsupported(node, "exists over a type other than 'array<variant>'")
        if not _is_string(path_node):
            raise InvalidPredicateError(f"exists needs a literal path: {_snippet(node)}")
        saved = self.lambda_var
        self.lambda_var = outer_var
        try:
            base = self._column_name(base_node)
        finally:
            self.lambda_var = saved
        if outer_var is None and (base is None or base == _LAMBDA_COLUMN):
            raise InvalidPredicateError(f"exists must start from a column: {_snippet(node)}")
        if outer_var is not None and base != _LAMBDA_COLUMN:
            raise _unsupported(node, "a nested exists not over the enclosing lambda variable")
        arr_path = self._path(path_node.this, arr)
        if arr_path.has_wildcard:
            raise InvalidPredicateError(f"[*] is not part of Spark's variant_get paths: {_snippet(arr)}")
        steps = (*prefix, *arr_path.steps, ANY_INDEX)
        if not isinstance(lam, exp.Lambda) or len(lam.expressions) != 1:
            raise _unsupported(node, "exists without a one-argument lambda")
        var = lam.expressions[0].name
        body = _unparen(lam.this)
        if isinstance(body, exp.Exists):
            inner = self._exists(body, depth, var, steps)
        else:
            saved = self.lambda_var
            self.lambda_var = var
            try:
                inner = self.convert(body, depth + 1)
            finally:
                self.lambda_var = saved
            if not isinstance(inner, UnaryPredicate | LiteralPredicate | SetPredicate):
                raise _unsupported(
                    node,
                    "an exists body other than one comparison / IN / IS NULL / isnan on the lambda variable",
                )
            if inner.term.column != _LAMBDA_COLUMN:
                raise _unsupported(node, "an exists body that does not use the lambda variable")
            t = inner.term
            inner = _reroot(
                inner, VariantTerm(_LAMBDA_COLUMN, JsonPath((*steps, *t.path.steps)), t.target, t.try_cast)
            )
        if outer_var is None:
            # The outermost exists: the leaf's path is complete, put the real column under it.
            assert base is not None and isinstance(inner, UnaryPredicate | LiteralPredicate | SetPredicate)
            t = inner.term
            return _reroot(inner, VariantTerm(base, t.path, t.target, t.try_cast))
        return inner


def _reroot(
    pred: UnaryPredicate | LiteralPredicate | SetPredicate, term: VariantTerm
) -> UnaryPredicate | LiteralPredicate | SetPredicate:
    # Built directly, not through not_(): the leaf keeps its own polarity inside exists.
    if isinstance(pred, UnaryPredicate):
        return UnaryPredicate(pred.op, term)
    if isinstance(pred, LiteralPredicate):
        return LiteralPredicate(pred.op, term, pred.literal)
    return SetPredicate(pred.op, term, pred.literals)


def _is_literalish(node: exp.Expression) -> bool:
    node = _unparen(node)
    return isinstance(node, exp.Literal | exp.Neg | exp.Boolean | exp.HexString | exp.Null | exp.Cast)


def _number(text: str) -> int | Decimal | float:
    """A numeric literal as Spark types it: with an exponent a DOUBLE, with a point a DECIMAL,
    else an integer."""
    if len(text) > 200:
        # Beyond any DECIMAL(38) or double literal; also keeps int() under its digit limit.
        raise InvalidPredicateError(f"number literal of {len(text)} characters is too long")
    d = parse_numeral(text)
    if d is None:
        raise InvalidPredicateError(f"bad number {text!r}")
    if "e" in text.lower():
        return float(d)
    if "." in text:
        return d
    return int(text)


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
