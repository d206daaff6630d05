"""Building predicate trees, with simplification.

Building simplifies (``And(x, AlwaysFalse)`` → ``AlwaysFalse``, nested ``And`` flattened,
duplicates dropped) and pushes ``Not`` down to the leaves at once:

* De Morgan holds in three-valued (Kleene) logic, so ``NOT (a AND b)`` = ``NOT a OR NOT b``.
* Every comparison is NULL on a NULL term and otherwise two-valued, so NOT of a comparison is
  exactly the opposite comparison: ``NOT (x = 5)`` is TRUE only for a non-null x ≠ 5, which is
  ``x != 5``. Spark orders NaN above every number and NaN = NaN, a total order, so
  ``NOT (x < 5)`` = ``x >= 5`` holds for NaN too.
* ``NOT is_null`` = ``not_null`` and ``NOT is_nan`` = ``not_nan`` exactly (both two-valued).
* ``NOT`` of an :class:`Unknown` is unknown too: it becomes ``Unknown("NOT (text)")``, so the
  text still renders to the same rows.
* The one exception is a path with ``[*]``: such a leaf means "some element satisfies it"
  (Spark's ``exists``), and NOT of "some element is 5" is "every element is not 5", which no
  leaf expresses. ``Not`` stays above such a leaf, and only there.

Simplification is applied only where it keeps the three-valued result, so the tree can be
rendered back to SQL (``to_sql``) and filter rows exactly like the original text:
``AlwaysFalse`` only ever stands for a real FALSE (never for "NULL or FALSE"), and a comparison
whose literal no target value equals (``bigint = 42.5``) becomes ``x IN ()`` — NULL for a NULL
x, FALSE otherwise — rather than ``AlwaysFalse``, whose negation would wrongly select NULLs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from decimal import Decimal
from typing import Final

from service.errors import InvalidPredicateError
from service.pruning.expressions.nodes import (
    COMPARISON_OPS,
    FALSE,
    NEGATION,
    SET_OPS,
    TRUE,
    And,
    BooleanExpression,
    ColumnTerm,
    LiteralPredicate,
    Not,
    Op,
    Or,
    Predicate,
    SetPredicate,
    Term,
    UnaryPredicate,
    Unknown,
)
from service.pruning.expressions.spelling import COMPARISON_SYMBOLS, render_term
from service.pruning.expressions.visitor import BooleanExpressionVisitor, visit
from service.pruning.literals import (
    LiteralValue,
    describe_literal,
    domain_extremes,
    in_list_literals,
    literal_image,
)
from service.pruning.zones import ZoneDependent, current_zone
from service.values import INT64_MAX, INT64_MIN, INTEGER_KINDS, INTEGER_RANGES, Bound, Kind, plain_integers


def _junction(
    exprs: tuple[BooleanExpression, ...], kind: type[And] | type[Or], zero: BooleanExpression, unit: BooleanExpression
) -> BooleanExpression:
    """``kind`` of ``exprs``, flattened and deduplicated in order; ``zero`` absorbs the whole
    junction (FALSE for AND, TRUE for OR) and ``unit`` drops out (the other constant)."""
    out: list[BooleanExpression] = []
    seen: set[BooleanExpression] = set()
    stack = list(reversed(exprs))
    while stack:
        e = stack.pop()
        if e == zero:
            return zero
        if e == unit:
            continue
        if isinstance(e, kind):
            stack.extend(reversed(e.children))
            continue
        if e not in seen:
            seen.add(e)
            out.append(e)
    if not out:
        return unit
    return out[0] if len(out) == 1 else kind(tuple(out))


def and_(*exprs: BooleanExpression) -> BooleanExpression:
    return _junction(exprs, And, FALSE, TRUE)


def or_(*exprs: BooleanExpression) -> BooleanExpression:
    return _junction(exprs, Or, TRUE, FALSE)


class _Negate(BooleanExpressionVisitor[BooleanExpression]):
    def visit_true(self) -> BooleanExpression:
        return FALSE

    def visit_false(self) -> BooleanExpression:
        return TRUE

    def visit_and(self, node: And) -> BooleanExpression:
        return or_(*(visit(c, self) for c in node.children))

    def visit_or(self, node: Or) -> BooleanExpression:
        return and_(*(visit(c, self) for c in node.children))

    def visit_not(self, node: Not) -> BooleanExpression:
        return node.child

    def visit_unknown(self, node: Unknown) -> BooleanExpression:
        return Unknown(f"NOT ({node.text})", node.why)

    def visit_predicate(self, pred: Predicate) -> BooleanExpression:
        if pred.term.has_wildcard:
            return Not(pred)
        return replace(pred, op=NEGATION[pred.op])


class _RewriteNot(BooleanExpressionVisitor[BooleanExpression]):
    def visit_true(self) -> BooleanExpression:
        return TRUE

    def visit_false(self) -> BooleanExpression:
        return FALSE

    def visit_and(self, node: And) -> BooleanExpression:
        return and_(*(visit(c, self) for c in node.children))

    def visit_or(self, node: Or) -> BooleanExpression:
        return or_(*(visit(c, self) for c in node.children))

    def visit_not(self, node: Not) -> BooleanExpression:
        return not_(visit(node.child, self))

    def visit_unknown(self, node: Unknown) -> BooleanExpression:
        return node

    def visit_predicate(self, pred: Predicate) -> BooleanExpression:
        return pred


_NEGATE: Final = _Negate()
_REWRITE_NOT: Final = _RewriteNot()


def not_(e: BooleanExpression) -> BooleanExpression:
    """Negation pushed to the leaves (see the module docstring for why each step is exact)."""
    return visit(e, _NEGATE)


def rewrite_not(e: BooleanExpression) -> BooleanExpression:
    """The same tree with every ``Not`` pushed to the leaves and the simplifications applied;
    for trees built by hand from the node classes (the builders already do this)."""
    return visit(e, _REWRITE_NOT)


def compare(op: Op | str, term: Term, value: LiteralValue) -> BooleanExpression:
    """``term op value``, with the literal converted into the target type (literals.py):
    ``bigint < 42.5`` → ``<= 42``, ``bigint = 42.5`` → ``IN ()``, ``tinyint < 300`` → ``<= 127``."""
    op = Op(op)
    if op in SET_OPS:
        return in_list(op, term, [value])
    if op not in COMPARISON_OPS:
        raise InvalidPredicateError(f"{op.value} takes no literal")
    if _zone_bound(term):
        return _zone_unknown(op, term, [value])
    folded = _folded_beyond_int64(op, term, value)
    if folded is not None:
        return folded
    try:
        img = literal_image(term.target, value)
    except ZoneDependent:
        return _zone_unknown(op, term, [value])
    if img.exact is not None:
        return LiteralPredicate(op, term, img.exact)
    if op is Op.EQ:
        return SetPredicate(Op.IN, term, ())
    if op is Op.NOT_EQ:
        return SetPredicate(Op.NOT_IN, term, ())
    lo, hi = domain_extremes(term.target)
    if op in (Op.LT, Op.LT_EQ):
        # x < 42.5 ⇔ x <= 42 for integers; nothing below the type's least value: x < MIN.
        return (
            LiteralPredicate(Op.LT, term, lo)
            if img.below is None
            else LiteralPredicate(Op.LT_EQ, term, img.below)
        )
    return (
        LiteralPredicate(Op.GT, term, hi)
        if img.above is None
        else LiteralPredicate(Op.GT_EQ, term, img.above)
    )


def _folded_beyond_int64(op: Op, term: Term, value: LiteralValue) -> BooleanExpression | None:
    """TRUE or FALSE for ``integer-term op literal`` when ``op`` orders and the literal lies beyond
    the int64 range (a DECIMAL to Spark, ``9223372036854775808``, ``-1e19BD``): Spark folds such a
    comparison to a constant that holds even where the term is NULL (``NOT (x > 2**63)`` keeps the
    rows whose x is NULL; checked with pyspark 4.3, ANSI on and off), so it may never prune on null
    counts. None otherwise (``=``/``!=`` and literals in range keep SQL's NULL)."""
    if op not in (Op.LT, Op.LT_EQ, Op.GT, Op.GT_EQ) or term.target.kind not in INTEGER_KINDS:
        return None
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        return None
    if isinstance(value, Decimal) and not value.is_finite():
        return None
    if INT64_MIN <= value <= INT64_MAX:
        return None
    below = op in (Op.LT, Op.LT_EQ)
    return TRUE if below == (value > INT64_MAX) else FALSE


def in_list(op: Op | str, term: Term, values: Iterable[LiteralValue]) -> BooleanExpression:
    """``term IN (...)`` / ``NOT IN``. Literals no target value equals are dropped — exact, as
    ``x IN (42.5, 43)`` is ``x = 43`` for an integer x — and one literal left makes ``=``/``!=``."""
    op = Op(op)
    if op not in SET_OPS:
        raise InvalidPredicateError(f"{op.value} is not in / not_in")
    values = list(values)
    if _zone_bound(term):
        return _zone_unknown(op, term, values)
    values = in_list_literals(term.target, values)
    exact: set[Bound] = set()
    ints = plain_integers(term.target.kind, values)
    if ints is not None:
        # literal_image's first test, for a whole list at once (an id list: 10,000 calls were
        # ~4 ms): a plain integer in the target's range is its own image, one outside equals none.
        lo, hi = INTEGER_RANGES[term.target.kind]
        exact.update(v for v in ints if lo <= v <= hi)
    else:
        for v in values:
            try:
                img = literal_image(term.target, v)
            except ZoneDependent:
                return _zone_unknown(op, term, values)
            if img.exact is not None:
                exact.add(img.exact)
    lits = tuple(sorted(exact))
    if len(lits) == 1:
        return LiteralPredicate(Op.EQ if op is Op.IN else Op.NOT_EQ, term, lits[0])
    return SetPredicate(op, term, lits)


def _zone_bound(term: Term) -> bool:
    """A timestamp partition column outside UTC: its values were typed as instants in UTC from
    the path's text, which Spark reads in the session zone (a wall time, see ZoneDependent)."""
    return (
        isinstance(term, ColumnTerm)
        and term.partition
        and term.target.kind is Kind.TIMESTAMPTZ
        and not current_zone().is_utc
    )


def _zone_unknown(op: Op, term: Term, values: list[LiteralValue]) -> Unknown:
    """The comparison, kept as unknown (never prunes) with its SQL text."""
    lits = ", ".join(describe_literal(v) for v in values)
    body = f"IN ({lits})" if op is Op.IN else f"NOT IN ({lits})" if op is Op.NOT_IN else f"{COMPARISON_SYMBOLS[op]} {lits}"
    return Unknown(
        f"{render_term(term)} {body}",
        f"the timestamp partition values of {render_term(term)} are typed in UTC, Spark reads them in {current_zone().name}",
    )


def unary(op: Op | str, term: Term) -> BooleanExpression:
    return UnaryPredicate(Op(op), term)


def eq(term: Term, v: LiteralValue) -> BooleanExpression:
    return compare(Op.EQ, term, v)


def not_eq(term: Term, v: LiteralValue) -> BooleanExpression:
    return compare(Op.NOT_EQ, term, v)


def lt(term: Term, v: LiteralValue) -> BooleanExpression:
    return compare(Op.LT, term, v)


def lt_eq(term: Term, v: LiteralValue) -> BooleanExpression:
    return compare(Op.LT_EQ, term, v)


def gt(term: Term, v: LiteralValue) -> BooleanExpression:
    return compare(Op.GT, term, v)


def gt_eq(term: Term, v: LiteralValue) -> BooleanExpression:
    return compare(Op.GT_EQ, term, v)


def in_(term: Term, values: Iterable[LiteralValue]) -> BooleanExpression:
    return in_list(Op.IN, term, values)


def not_in(term: Term, values: Iterable[LiteralValue]) -> BooleanExpression:
    return in_list(Op.NOT_IN, term, values)


def is_null(term: Term) -> BooleanExpression:
    return UnaryPredicate(Op.IS_NULL, term)


def not_null(term: Term) -> BooleanExpression:
    return UnaryPredicate(Op.NOT_NULL, term)


def is_nan(term: Term) -> BooleanExpression:
    return UnaryPredicate(Op.IS_NAN, term)


def not_nan(term: Term) -> BooleanExpression:
    return UnaryPredicate(Op.NOT_NAN, term)
