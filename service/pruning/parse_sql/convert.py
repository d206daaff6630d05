"""sqlglot's tree of a predicate → the predicate tree (:mod:`service.pruning.expressions`).

Without a schema, nothing is silently dropped: an ignored conjunct could only widen the result,
but an ignored disjunct or negation would prune files that match, so every construct not listed in
:mod:`service.pruning.parse_sql` is an InvalidPredicateError naming it.

With a :class:`~service.pruning.schema.TableSchema`, any Spark WHERE clause is accepted: names are
resolved against the table (an unknown one is an UnknownColumnError), plain and partition columns
become :class:`ColumnTerm` leaves, and every sub-expression the pruner cannot reason about (a
function of a column, arithmetic, LIKE, column against column, a comparison whose implicit cast
is not certain) becomes an :class:`Unknown` keeping its text, which never prunes and never fails.
Only a malformed ``variant_get`` (wrong arity, an unknown type name, a bad path) is still an
error, as it is for Spark.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from sqlglot import exp

from service.errors import InvalidPathError, InvalidPredicateError, LimitExceededError
from service.pruning.expressions import (
    FALSE,
    FLIPPED,
    TRUE,
    BooleanExpression,
    ColumnTerm,
    Op,
    Predicate,
    Term,
    Unknown,
    VariantTerm,
    and_,
    compare,
    in_list,
    not_,
    or_,
    unary,
)
from service.pruning.literals import LiteralValue, check_spark_decimal_width, check_sql_in_list
from service.pruning.parse_sql.literal_nodes import is_literalish, literal_value
from service.pruning.parse_sql.nodes import hard, is_hard, is_string, snippet, unparen, unsupported
from service.pruning.paths import ANY_INDEX, Index, JsonPath, Key, Step, parse_json_path
from service.pruning.prefixes import like_prefix, prefix_successor
from service.pruning.schema import TableSchema
from service.pruning.spark_types import parse_spark_type
from service.values import Kind, ShreddedType

_CMP: dict[type[exp.Expression], Op] = {
    exp.EQ: Op.EQ,
    exp.NEQ: Op.NOT_EQ,
    exp.LT: Op.LT,
    exp.LTE: Op.LT_EQ,
    exp.GT: Op.GT,
    exp.GTE: Op.GT_EQ,
}

_TERM_FUNCS = ("variant_get", "try_variant_get")
_LAMBDA_COLUMN = "\x00lambda"
# Type names Spark's variant_get takes that no stats can serve (a term reading one is unknown,
# not a typo to refuse).
_COMPLEX_TYPE_WORDS = ("array", "map", "struct", "variant", "interval", "object")


# Names Spark reads as functions without parentheses, never as columns.
_NILADIC = frozenset(
    {
        "current_date",
        "current_timestamp",
        "current_time",
        "current_user",
        "current_catalog",
        "current_database",
        "current_schema",
        "current_timezone",
        "localtimestamp",
        "session_user",
        "user",
    }
)


_hard = hard
_is_hard = is_hard


def literal_for(term: Term, v: LiteralValue) -> LiteralValue:
    """``v`` as compared with ``term``: a decimal literal Spark would round against it is refused."""
    if isinstance(v, Decimal):
        check_spark_decimal_width(term.target, v)
    return v


def in_predicate(term: Term, literals: list[LiteralValue]) -> BooleanExpression:
    """``term IN (literals)`` of SQL text (:func:`literal_for`'s values)."""
    # Spark's IN coercion differs between its ANSI modes where a string meets another type.
    check_sql_in_list(term.target, literals)
    return in_list(Op.IN, term, literals)


class Converter:
    """sqlglot tree → predicate tree. Without a schema every construct it does not know is an
    error; with one, such a sub-expression is :class:`Unknown` (see the module docstring)."""

    def __init__(self, max_depth: int, max_in_list: int, schema: TableSchema | None = None) -> None:
        self.max_depth = max_depth
        self.max_in_list = max_in_list
        self.schema = schema
        self.lambda_var: str | None = None

    # -- boolean structure --

    def convert(self, node: exp.Expression, depth: int) -> BooleanExpression:
        if depth > self.max_depth:
            raise LimitExceededError(
                f"SQL predicate nested deeper than {self.max_depth}", details={"limit": self.max_depth}
            )
        node = unparen(node)
        if isinstance(node, exp.And | exp.Or):
            return self._chain(node, depth)
        if isinstance(node, exp.Not):
            return not_(self.convert(node.this, depth + 1))
        if isinstance(node, exp.Boolean):
            return TRUE if node.this else FALSE
        if self.schema is None:
            return self._leaf(node, depth)
        try:
            return self._leaf(node, depth)
        except InvalidPredicateError as e:
            if _is_hard(e):
                raise
            return self._unknown(node, e.message)

    def _leaf(self, node: exp.Expression, depth: int) -> BooleanExpression:
        for cls, op in _CMP.items():
            if type(node) is cls:
                return self._comparison(node, op, node.this, node.expression)
        if isinstance(node, exp.Is):
            if not isinstance(node.expression, exp.Null):
                raise unsupported(node, "IS TRUE / IS FALSE")
            return unary(Op.IS_NULL, self._require_term(node.this, node))
        if isinstance(node, exp.In):
            return self._in(node)
        if isinstance(node, exp.Between):
            return self._between(node)
        if isinstance(node, exp.IsNan):
            return unary(Op.IS_NAN, self._require_term(node.this, node))
        if isinstance(node, exp.Anonymous) and node.name.lower() in ("isnull", "isnotnull"):
            if len(node.expressions) != 1:
                raise InvalidPredicateError(f"{node.name}() takes one argument: {snippet(node)}")
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
        if isinstance(node, exp.Like | exp.StartsWith | exp.Escape) and self.schema is not None:
            implied = self._prefix_range(node)
            if implied is not None:
                # The range is implied by the LIKE, not equal to it: the LIKE stays, unknown, so
                # that NOT (s LIKE 'a%') keeps every file (NOT of the AND is an OR with it).
                return and_(implied, replace(self._unknown(node, unsupported(node).message), implied=True))
        term = self._term(node)
        if term is not None:
            if self.schema is not None and term.target.kind is Kind.BOOLEAN:
                # A boolean alone is TRUE exactly when it is true (NULL stays NULL, as for = TRUE).
                return compare(Op.EQ, term, True)
            raise InvalidPredicateError(
                f"a term alone is not a predicate; compare it with a literal: {snippet(node)}"
            )
        if isinstance(node, exp.Column):
            raise unsupported(node, f"bare column {node.sql(dialect='spark')}")
        raise unsupported(node)

    def _prefix_range(self, node: exp.Expression) -> BooleanExpression | None:
        """``s >= 'abc' AND s < 'abd'`` for ``s LIKE 'abc%'`` (any ESCAPE) or ``startswith(s,
        'abc')`` on a string term (:mod:`service.pruning.prefixes`); None when there is no prefix."""
        escape = "\\"
        if node.args.get("negate"):
            return None  # sqlglot reads `s NOT LIKE 'a%'` as a Like marked negated: no range then
        if isinstance(node, exp.Escape):
            esc = unparen(node.expression)
            if not (is_string(esc) and len(esc.this) == 1):
                return None
            escape, node = esc.this, unparen(node.this)
            if not isinstance(node, exp.Like) or node.args.get("negate"):
                return None
        pattern = unparen(node.expression)
        if not is_string(pattern):
            return None
        term = self._term(node.this)
        if term is None or term.target.kind is not Kind.VARCHAR:
            return None  # another type is cast to a string first: its order is not the text's
        prefix = like_prefix(pattern.this, escape) if isinstance(node, exp.Like) else pattern.this
        if not prefix:
            return None
        low = compare(Op.GT_EQ, term, prefix)
        successor = prefix_successor(prefix)
        return low if successor is None else and_(low, compare(Op.LT, term, successor))

    def _chain(self, node: exp.And | exp.Or, depth: int) -> BooleanExpression:
        # sqlglot builds `a AND b AND c ...` left-deep: walk it with a stack, one nesting level.
        cls = type(node)
        operands: list[exp.Expression] = []
        stack: list[exp.Expression] = [node]
        while stack:
            n = unparen(stack.pop())
            if type(n) is cls:
                stack.append(n.expression)
                stack.append(n.this)
            else:
                operands.append(n)
        children = [self.convert(o, depth + 1) for o in operands]
        return and_(*children) if cls is exp.And else or_(*children)

    # -- terms --

    def _column_name(self, node: exp.Expression) -> str | None:
        node = unparen(node)
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

    def _variant_column(self, column: str) -> str:
        """The table's Variant column ``column`` names (as the schema spells it)."""
        if self.schema is None or column == _LAMBDA_COLUMN:
            return column
        hit = self.schema.resolve_variant(column)
        if hit is None:
            raise self.schema.unknown_column(column, variant=True)
        return hit

    def _column_term(self, node: exp.Expression) -> ColumnTerm | None:
        """The plain/partition column a bare name is (schema only); an unknown name raises."""
        if self.schema is None or not isinstance(node, exp.Column | exp.Dot):
            return None
        name = self._column_name(node)
        if name is None or name == _LAMBDA_COLUMN:
            return None
        info = self.schema.resolve(name)
        if info is None:
            if not self.schema.knows(name):
                raise self.schema.unknown_column(name)
            return None  # a Variant column or a struct: known, not comparable here
        if info.type is None:
            raise InvalidPredicateError(f"column {info.name} has a type pruning cannot compare")
        return ColumnTerm(info.name, info.type, info.partition)

    def _type(self, text: str, node: exp.Expression) -> ShreddedType:
        try:
            return parse_spark_type(text)
        except InvalidPredicateError as e:
            low = text.strip().lower()
            if self.schema is not None and any(low.startswith(w) for w in _COMPLEX_TYPE_WORDS):
                raise  # a valid Spark type no stats serve: the term is unknown
            raise _hard(e) from None

    def _term(self, node: exp.Expression) -> Term | None:
        """The term ``node`` is, None if it is not one; malformed terms raise."""
        node = unparen(node)
        column_term = self._column_term(node)
        if column_term is not None:
            return column_term
        if isinstance(node, exp.Anonymous) and node.name.lower() in _TERM_FUNCS:
            fn = node.name.lower()
            args = node.expressions
            if len(args) == 2 and is_string(args[1]):
                # Spark's VARIANT-valued form: compared as a VARIANT, which no stats serve. Its column
                # and path are still checked (a typo is an error); with a schema the term is unknown.
                column = self._column_name(args[0])
                if column is not None:
                    self._variant_column(column)
                self._path(args[1].this, node)
                raise InvalidPredicateError(
                    f"{snippet(node)} is a VARIANT; give {fn} a type to compare it, e.g. "
                    f"{fn}({snippet(args[0])}, {snippet(args[1])}, 'bigint')"
                )
            if len(args) != 3:
                raise _hard(
                    InvalidPredicateError(
                        f"{fn} needs (column, path, type) to be compared with a literal: {snippet(node)}"
                    )
                )
            column = self._column_name(args[0])
            if column is None:
                raise InvalidPredicateError(f"the first argument of {fn} must be a column: {snippet(node)}")
            column = self._variant_column(column)
            if not is_string(args[1]) or not is_string(args[2]):
                raise InvalidPredicateError(f"{fn} needs a string literal path and type: {snippet(node)}")
            path = self._path(args[1].this, node)
            if path.has_wildcard:
                raise _hard(
                    InvalidPredicateError(
                        f"[*] is not part of Spark's variant_get paths; write exists(...) for 'some element': {snippet(node)}"
                    )
                )
            return VariantTerm(column, path, self._type(args[2].this, node), fn == "try_variant_get")
        if isinstance(node, exp.Cast):  # TryCast is a Cast
            inner = unparen(node.this)
            if isinstance(inner, exp.JSONExtract):
                return self._shorthand(inner, node)
            if self._is_term_like(inner):
                raise InvalidPredicateError(
                    f"casting a variant_get(...) term is not supported; give the type to variant_get: {snippet(node)}"
                )
            return None
        if isinstance(node, exp.JSONExtract):
            raise InvalidPredicateError(
                f"{snippet(node)} is a VARIANT; cast it to compare it, e.g. {snippet(node)}::bigint"
            )
        return None

    def _is_term_like(self, node: exp.Expression) -> bool:
        return isinstance(node, exp.Anonymous) and node.name.lower() in _TERM_FUNCS

    def _path(self, text: str, node: exp.Expression) -> JsonPath:
        try:
            return parse_json_path(text)
        except InvalidPathError as e:
            raise InvalidPathError(f"{e.message} in {snippet(node)}", details=e.details) from None

    def _shorthand(self, extract: exp.JSONExtract, cast: exp.Cast) -> VariantTerm:
        if not extract.args.get("variant_extract"):
            raise unsupported(extract, "JSON extraction")
        column = self._column_name(extract.this)
        if column is None:
            raise InvalidPredicateError(f"the ':' path must follow a column: {snippet(extract)}")
        column = self._variant_column(column)
        path = extract.expression
        if not isinstance(path, exp.JSONPath):
            raise unsupported(extract, "this ':' path form")
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
                    f"[*] in a ':' path yields an array, not a value; write exists(...) for 'some element': {snippet(cast)}"
                )
            else:
                raise unsupported(cast, f"':' path step {part.sql(dialect='databricks')}")
        type_name = cast.to.sql(dialect="spark")
        is_try = isinstance(cast, exp.TryCast)
        return VariantTerm(column, JsonPath(tuple(steps)), self._type(type_name, cast), is_try)

    def _require_term(self, node: exp.Expression, parent: exp.Expression) -> Term:
        term = self._term(node)
        if term is None:
            raise InvalidPredicateError(
                f"expected a variant_get(...) term, got {snippet(node)} in {snippet(parent)}"
            )
        return term

    # -- literals --

    def _literal(self, node: exp.Expression, target: Term) -> LiteralValue:
        return literal_for(target, literal_value(unparen(node), self._not_a_literal))

    def _not_a_literal(self, node: exp.Expression) -> LiteralValue:
        if self._term(node) is not None:
            raise InvalidPredicateError(f"comparing two terms is not supported: {snippet(node)}")
        if isinstance(node, exp.Column):
            raise unsupported(node, f"column comparison with {node.sql(dialect='spark')}")
        raise InvalidPredicateError(
            f"expected a literal, got {snippet(node)}",
            details={"unsupported": type(node).__name__},
        )

    # -- leaves --

    def _comparison(
        self, node: exp.Expression, op: Op, left: exp.Expression, right: exp.Expression
    ) -> BooleanExpression:
        lt, rt = self._term(left), self._term(right)
        if lt is not None and rt is not None:
            raise InvalidPredicateError(f"comparing two terms is not supported: {snippet(node)}")
        if lt is None and rt is None:
            for side in (left, right):
                s = unparen(side)
                if isinstance(s, exp.Column):
                    raise unsupported(node, "a comparison on a plain column (only variant_get(...) terms)")
            # A term hidden in arithmetic or a function call is the usual cause.
            raise unsupported(unparen(left) if not is_literalish(left) else unparen(right))
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
            raise unsupported(node, "IN with a subquery")
        term = self._require_term(node.this, node)
        values = node.expressions
        if len(values) > self.max_in_list:
            raise LimitExceededError(
                f"{len(values)} values in an IN list; the limit is {self.max_in_list}",
                details={"limit": self.max_in_list},
            )
        return in_predicate(term, [self._literal(v, term) for v in values])

    def _between(self, node: exp.Between) -> BooleanExpression:
        if node.args.get("symmetric"):
            raise unsupported(node, "BETWEEN SYMMETRIC")
        term = self._require_term(node.this, node)
        low = compare(Op.GT_EQ, term, self._literal(node.args["low"], term))
        high = compare(Op.LT_EQ, term, self._literal(node.args["high"], term))
        return and_(low, high)

    def _case(self, node: exp.Case) -> BooleanExpression:
        # Only the form to_sql writes for "no literal equals": CASE WHEN t IS NOT NULL THEN b END.
        ifs = node.args.get("ifs") or []
        if node.this is None and node.args.get("default") is None and len(ifs) == 1:
            cond, then = unparen(ifs[0].this), unparen(ifs[0].args.get("true"))
            if (
                isinstance(cond, exp.Not)
                and isinstance(unparen(cond.this), exp.Is)
                and isinstance(unparen(cond.this).expression, exp.Null)
                and isinstance(then, exp.Boolean)
            ):
                term = self._require_term(unparen(cond.this).this, node)
                return in_list(Op.NOT_IN if then.this else Op.IN, term, [])
        raise unsupported(node, "CASE")

    def _exists(
        self, node: exp.Exists, depth: int, outer_var: str | None, prefix: tuple[Step, ...]
    ) -> BooleanExpression:
        """``exists(try_variant_get(base, path, 'array<variant>'), e -> leaf)``: some element."""
        arr = unparen(node.this)
        lam = node.args.get("expression")
        if not (
            isinstance(arr, exp.Anonymous) and arr.name.lower() in _TERM_FUNCS and len(arr.expressions) == 3
        ):
            raise unsupported(node, "exists over something other than variant_get(.., 'array<variant>')")
        base_node, path_node, type_node = arr.expressions
        if not is_string(type_node) or type_node.this.replace(" ", "").lower() != "array<variant>":
            raise unsupported(node, "exists over a type other than 'array<variant>'")
        if not is_string(path_node):
            raise InvalidPredicateError(f"exists needs a literal path: {snippet(node)}")
        saved = self.lambda_var
        self.lambda_var = outer_var
        try:
            base = self._column_name(base_node)
        finally:
            self.lambda_var = saved
        if outer_var is None and (base is None or base == _LAMBDA_COLUMN):
            raise InvalidPredicateError(f"exists must start from a column: {snippet(node)}")
        if outer_var is not None and base != _LAMBDA_COLUMN:
            raise unsupported(node, "a nested exists not over the enclosing lambda variable")
        arr_path = self._path(path_node.this, arr)
        if arr_path.has_wildcard:
            raise InvalidPredicateError(f"[*] is not part of Spark's variant_get paths: {snippet(arr)}")
        steps = (*prefix, *arr_path.steps, ANY_INDEX)
        if not isinstance(lam, exp.Lambda) or len(lam.expressions) != 1:
            raise unsupported(node, "exists without a one-argument lambda")
        var = lam.expressions[0].name
        body = unparen(lam.this)
        if isinstance(body, exp.Exists):
            inner = self._exists(body, depth, var, steps)
        else:
            saved = self.lambda_var
            self.lambda_var = var
            try:
                inner = self.convert(body, depth + 1)
            finally:
                self.lambda_var = saved
            if not isinstance(inner, Predicate):
                raise unsupported(
                    node,
                    "an exists body other than one comparison / IN / IS NULL / isnan on the lambda variable",
                )
            if not isinstance(inner.term, VariantTerm) or inner.term.column != _LAMBDA_COLUMN:
                raise unsupported(node, "an exists body that does not use the lambda variable")
            t = inner.term
            inner = replace(
                inner, term=VariantTerm(_LAMBDA_COLUMN, JsonPath((*steps, *t.path.steps)), t.target, t.try_cast)
            )
        if outer_var is None:
            # The outermost exists: the leaf's path is complete, put the real column under it.
            assert base is not None and isinstance(inner, Predicate) and isinstance(inner.term, VariantTerm)
            base = self._variant_column(base)
            t = inner.term
            # replace(), not not_(): the leaf keeps its own polarity inside exists.
            return replace(inner, term=VariantTerm(base, t.path, t.target, t.try_cast))
        return inner

    # -- unknown sub-expressions (schema only) --

    def _unknown(self, node: exp.Expression, why: str) -> Unknown:
        """``node`` as a sub-expression the pruner does not use (``why``: the parser's reason),
        once every name in it is known (Spark would refuse an unknown one too)."""
        assert self.schema is not None
        bound = {lam_arg.name for lam in node.find_all(exp.Lambda) for lam_arg in lam.expressions}
        if self.lambda_var is not None:
            bound.add(self.lambda_var)
        for col in node.find_all(exp.Column):
            name = ".".join(p.name for p in col.parts)
            if name in bound or col.parts[0].name in bound:
                continue
            if len(col.parts) == 1 and name.lower() in _NILADIC and not self.schema.knows(name):
                continue
            if not self.schema.knows(name) and not self.schema.knows(col.parts[0].name):
                raise self.schema.unknown_column(name)
        shorthand = any(j.args.get("variant_extract") for j in node.find_all(exp.JSONExtract))
        # databricks prints the `v:a` shorthand as written, which Spark 4 reads; spark would not.
        return Unknown(node.sql(dialect="databricks" if shorthand else "spark"), why)
