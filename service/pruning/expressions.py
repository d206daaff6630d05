"""The one immutable predicate tree shared by the JSON and SQL parsers and the evaluator.

Semantics are Spark SQL's, three-valued: a leaf over a NULL term (missing path, Variant null,
failed ``try_variant_get`` cast) is NULL, and a row is selected only when the whole predicate
is TRUE. ``is_null``/``not_null`` and ``is_nan``/``not_nan`` are two-valued, as in Spark
(``isnan(NULL)`` is false, so ``not_nan`` holds for NULL).

Building simplifies (``And(x, AlwaysFalse)`` → ``AlwaysFalse``, nested ``And`` flattened,
duplicates dropped) and pushes ``Not`` down to the leaves at once:

* De Morgan holds in three-valued (Kleene) logic, so ``NOT (a AND b)`` = ``NOT a OR NOT b``.
* Every comparison is NULL on a NULL term and otherwise two-valued, so NOT of a comparison is
  exactly the opposite comparison: ``NOT (x = 5)`` is TRUE only for a non-null x ≠ 5, which is
  ``x != 5``. Spark orders NaN above every number and NaN = NaN, a total order, so
  ``NOT (x < 5)`` = ``x >= 5`` holds for NaN too.
* ``NOT is_null`` = ``not_null`` and ``NOT is_nan`` = ``not_nan`` exactly (both two-valued).
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

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Final

from service.errors import InvalidPredicateError, InvalidStatsError
from service.pruning.literals import LiteralValue, domain_extremes, literal_image
from service.pruning.paths import JsonPath, parse_json_path
from service.pruning.spark_types import parse_spark_type, spark_type_name
from service.values import Bound, Kind, ShreddedType, check_bound


class Op(StrEnum):
    EQ = "eq"
    NOT_EQ = "not_eq"
    LT = "lt"
    LT_EQ = "lt_eq"
    GT = "gt"
    GT_EQ = "gt_eq"
    IN = "in"
    NOT_IN = "not_in"
    IS_NULL = "is_null"
    NOT_NULL = "not_null"
    IS_NAN = "is_nan"
    NOT_NAN = "not_nan"


COMPARISON_OPS: Final = frozenset({Op.EQ, Op.NOT_EQ, Op.LT, Op.LT_EQ, Op.GT, Op.GT_EQ})
SET_OPS: Final = frozenset({Op.IN, Op.NOT_IN})
UNARY_OPS: Final = frozenset({Op.IS_NULL, Op.NOT_NULL, Op.IS_NAN, Op.NOT_NAN})

NEGATION: Final[dict[Op, Op]] = {
    Op.EQ: Op.NOT_EQ,
    Op.NOT_EQ: Op.EQ,
    Op.LT: Op.GT_EQ,
    Op.GT_EQ: Op.LT,
    Op.LT_EQ: Op.GT,
    Op.GT: Op.LT_EQ,
    Op.IN: Op.NOT_IN,
    Op.NOT_IN: Op.IN,
    Op.IS_NULL: Op.NOT_NULL,
    Op.NOT_NULL: Op.IS_NULL,
    Op.IS_NAN: Op.NOT_NAN,
    Op.NOT_NAN: Op.IS_NAN,
}

#: ``literal op term`` is ``term FLIPPED[op] literal``.
FLIPPED: Final[dict[Op, Op]] = {
    Op.EQ: Op.EQ,
    Op.NOT_EQ: Op.NOT_EQ,
    Op.LT: Op.GT,
    Op.GT: Op.LT,
    Op.LT_EQ: Op.GT_EQ,
    Op.GT_EQ: Op.LT_EQ,
}


@dataclass(frozen=True, slots=True)
class VariantTerm:
    """``variant_get(column, path, target)`` (``try_variant_get`` when ``try_cast``).

    ``try_cast`` does not change pruning: a failed cast is NULL under try_variant_get and an
    error under variant_get, and neither returns the row. It is kept for rendering.
    """

    column: str
    path: JsonPath
    target: ShreddedType
    try_cast: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.column, str) or not self.column:
            raise InvalidPredicateError("a variant term needs a non-empty column name")
        if not isinstance(self.path, JsonPath):
            raise InvalidPredicateError("a variant term's path must be a parsed JsonPath")
        spark_type_name(self.target)  # only Spark variant_get target types

    @property
    def variant_path(self) -> str:
        return self.path.variant_path


def variant(
    column: str, path: str | JsonPath, as_type: str | ShreddedType, try_cast: bool = False
) -> VariantTerm:
    """Convenience: ``variant("v", "$.user.id", "bigint")``."""
    jp = parse_json_path(path) if isinstance(path, str) else path
    t = parse_spark_type(as_type) if isinstance(as_type, str) else as_type
    return VariantTerm(column, jp, t, try_cast)


class BooleanExpression:
    """Base of every node. Nodes are frozen dataclasses: equal trees compare and hash equal."""

    __slots__ = ()

    def __str__(self) -> str:
        from service.pruning.render import to_sql

        return to_sql(self)


@dataclass(frozen=True, slots=True, repr=False)
class AlwaysTrue(BooleanExpression):
    def __repr__(self) -> str:
        return "AlwaysTrue()"


@dataclass(frozen=True, slots=True, repr=False)
class AlwaysFalse(BooleanExpression):
    def __repr__(self) -> str:
        return "AlwaysFalse()"


TRUE: Final = AlwaysTrue()
FALSE: Final = AlwaysFalse()


@dataclass(frozen=True, slots=True)
class And(BooleanExpression):
    children: tuple[BooleanExpression, ...]


@dataclass(frozen=True, slots=True)
class Or(BooleanExpression):
    children: tuple[BooleanExpression, ...]


@dataclass(frozen=True, slots=True)
class Not(BooleanExpression):
    """After building, found only directly above a predicate whose path has ``[*]``."""

    child: BooleanExpression


def _check_literal(term: VariantTerm, v: Bound) -> None:
    t = term.target
    if t.kind is Kind.DECIMAL:
        # check_bound's quantize would round past 28 digits; test the value directly.
        assert t.precision is not None and t.scale is not None
        ok = isinstance(v, Decimal) and v.is_finite() and v.as_tuple().exponent == -t.scale
        # copy_abs is exact; abs() would round to the context's 28 digits.
        ok = ok and v.copy_abs() < Decimal(f"1E{t.precision - t.scale}")
        if not ok:
            raise InvalidPredicateError(
                f"{v!r} is not a {t.name} value with exactly {t.scale} fraction digits"
            )
        return
    try:
        check_bound(t, v)
    except InvalidStatsError:
        raise InvalidPredicateError(f"{v!r} is not a {t.name} value") from None
    if isinstance(v, float) and v == 0 and math.copysign(1.0, v) < 0:
        raise InvalidPredicateError("use 0.0, not -0.0, in a tree (they compare equal)")


@dataclass(frozen=True, slots=True)
class UnaryPredicate(BooleanExpression):
    op: Op
    term: VariantTerm

    def __post_init__(self) -> None:
        if self.op not in UNARY_OPS:
            raise InvalidPredicateError(f"{self.op} is not a unary predicate")
        if self.op in (Op.IS_NAN, Op.NOT_NAN) and not self.term.target.is_float:
            raise InvalidPredicateError(
                f"{self.op.value} needs a float or double term, not {spark_type_name(self.term.target)}"
            )


@dataclass(frozen=True, slots=True)
class LiteralPredicate(BooleanExpression):
    """``term op literal`` with the literal a value of ``term.target`` (see literals.py)."""

    op: Op
    term: VariantTerm
    literal: Bound

    def __post_init__(self) -> None:
        if self.op not in COMPARISON_OPS:
            raise InvalidPredicateError(f"{self.op} is not a comparison")
        _check_literal(self.term, self.literal)


@dataclass(frozen=True, slots=True)
class SetPredicate(BooleanExpression):
    """``term IN (...)`` / ``NOT IN``; literals sorted and distinct. An empty ``IN ()`` stands
    for "no value equals" (NULL for a NULL term, else FALSE); ``NOT IN ()`` for its negation."""

    op: Op
    term: VariantTerm
    literals: tuple[Bound, ...]

    def __post_init__(self) -> None:
        if self.op not in SET_OPS:
            raise InvalidPredicateError(f"{self.op} is not a set predicate")
        for v in self.literals:
            _check_literal(self.term, v)


Predicate = UnaryPredicate | LiteralPredicate | SetPredicate
PREDICATE_TYPES: Final = (UnaryPredicate, LiteralPredicate, SetPredicate)


# --- building, with simplification ------------------------------------------------------------


def and_(*exprs: BooleanExpression) -> BooleanExpression:
    out: list[BooleanExpression] = []
    seen: set[BooleanExpression] = set()
    stack = list(reversed(exprs))
    while stack:
        e = stack.pop()
        if isinstance(e, AlwaysFalse):
            return FALSE
        if isinstance(e, AlwaysTrue):
            continue
        if isinstance(e, And):
            stack.extend(reversed(e.children))
            continue
        if e not in seen:
            seen.add(e)
            out.append(e)
    if not out:
        return TRUE
    return out[0] if len(out) == 1 else And(tuple(out))


def or_(*exprs: BooleanExpression) -> BooleanExpression:
    out: list[BooleanExpression] = []
    seen: set[BooleanExpression] = set()
    stack = list(reversed(exprs))
    while stack:
        e = stack.pop()
        if isinstance(e, AlwaysTrue):
            return TRUE
        if isinstance(e, AlwaysFalse):
            continue
        if isinstance(e, Or):
            stack.extend(reversed(e.children))
            continue
        if e not in seen:
            seen.add(e)
            out.append(e)
    if not out:
        return FALSE
    return out[0] if len(out) == 1 else Or(tuple(out))


def not_(e: BooleanExpression) -> BooleanExpression:
    """Negation pushed to the leaves (see the module docstring for why each step is exact)."""
    if isinstance(e, AlwaysTrue):
        return FALSE
    if isinstance(e, AlwaysFalse):
        return TRUE
    if isinstance(e, And):
        return or_(*(not_(c) for c in e.children))
    if isinstance(e, Or):
        return and_(*(not_(c) for c in e.children))
    if isinstance(e, Not):
        return e.child
    if isinstance(e, PREDICATE_TYPES):
        if e.term.path.has_wildcard:
            return Not(e)
        if isinstance(e, UnaryPredicate):
            return UnaryPredicate(NEGATION[e.op], e.term)
        if isinstance(e, LiteralPredicate):
            return LiteralPredicate(NEGATION[e.op], e.term, e.literal)
        return SetPredicate(NEGATION[e.op], e.term, e.literals)
    raise TypeError(f"not a BooleanExpression: {e!r}")


def rewrite_not(e: BooleanExpression) -> BooleanExpression:
    """The same tree with every ``Not`` pushed to the leaves and the simplifications applied;
    for trees built by hand from the node classes (the builders already do this)."""
    if isinstance(e, And):
        return and_(*(rewrite_not(c) for c in e.children))
    if isinstance(e, Or):
        return or_(*(rewrite_not(c) for c in e.children))
    if isinstance(e, Not):
        return not_(rewrite_not(e.child))
    return e


def compare(op: Op | str, term: VariantTerm, value: LiteralValue) -> BooleanExpression:
    """``term op value``, with the literal converted into the target type (literals.py):
    ``bigint < 42.5`` → ``<= 42``, ``bigint = 42.5`` → ``IN ()``, ``tinyint < 300`` → ``<= 127``."""
    op = Op(op)
    if op in SET_OPS:
        return in_list(op, term, [value])
    if op not in COMPARISON_OPS:
        raise InvalidPredicateError(f"{op.value} takes no literal")
    img = literal_image(term.target, value)
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


def in_list(op: Op | str, term: VariantTerm, values: Iterable[LiteralValue]) -> BooleanExpression:
    """``term IN (...)`` / ``NOT IN``. Literals no target value equals are dropped — exact, as
    ``x IN (42.5, 43)`` is ``x = 43`` for an integer x — and one literal left makes ``=``/``!=``."""
    op = Op(op)
    if op not in SET_OPS:
        raise InvalidPredicateError(f"{op.value} is not in / not_in")
    exact: set[Bound] = set()
    for v in values:
        img = literal_image(term.target, v)
        if img.exact is not None:
            exact.add(img.exact)
    lits = tuple(sorted(exact))  # type: ignore[type-var]
    if len(lits) == 1:
        return LiteralPredicate(Op.EQ if op is Op.IN else Op.NOT_EQ, term, lits[0])
    return SetPredicate(op, term, lits)


def unary(op: Op | str, term: VariantTerm) -> BooleanExpression:
    return UnaryPredicate(Op(op), term)


def eq(term: VariantTerm, v: LiteralValue) -> BooleanExpression:
    return compare(Op.EQ, term, v)


def not_eq(term: VariantTerm, v: LiteralValue) -> BooleanExpression:
    return compare(Op.NOT_EQ, term, v)


def lt(term: VariantTerm, v: LiteralValue) -> BooleanExpression:
    return compare(Op.LT, term, v)


def lt_eq(term: VariantTerm, v: LiteralValue) -> BooleanExpression:
    return compare(Op.LT_EQ, term, v)


def gt(term: VariantTerm, v: LiteralValue) -> BooleanExpression:
    return compare(Op.GT, term, v)


def gt_eq(term: VariantTerm, v: LiteralValue) -> BooleanExpression:
    return compare(Op.GT_EQ, term, v)


def in_(term: VariantTerm, values: Iterable[LiteralValue]) -> BooleanExpression:
    return in_list(Op.IN, term, values)


def not_in(term: VariantTerm, values: Iterable[LiteralValue]) -> BooleanExpression:
    return in_list(Op.NOT_IN, term, values)


def is_null(term: VariantTerm) -> BooleanExpression:
    return UnaryPredicate(Op.IS_NULL, term)


def not_null(term: VariantTerm) -> BooleanExpression:
    return UnaryPredicate(Op.NOT_NULL, term)


def is_nan(term: VariantTerm) -> BooleanExpression:
    return UnaryPredicate(Op.IS_NAN, term)


def not_nan(term: VariantTerm) -> BooleanExpression:
    return UnaryPredicate(Op.NOT_NAN, term)


# --- inspection -------------------------------------------------------------------------------


def is_predicate(e: BooleanExpression) -> bool:
    return isinstance(e, PREDICATE_TYPES)


def iter_predicates(e: BooleanExpression) -> Iterator[Predicate]:
    stack = [e]
    while stack:
        n = stack.pop()
        if isinstance(n, And | Or):
            stack.extend(reversed(n.children))
        elif isinstance(n, Not):
            stack.append(n.child)
        elif isinstance(n, PREDICATE_TYPES):
            yield n


def depth(e: BooleanExpression) -> int:
    """Nesting depth of boolean operators (a leaf or constant is 0)."""
    best = 0
    stack: list[tuple[BooleanExpression, int]] = [(e, 0)]
    while stack:
        n, d = stack.pop()
        best = max(best, d)
        if isinstance(n, And | Or):
            stack.extend((c, d + 1) for c in n.children)
        elif isinstance(n, Not):
            stack.append((n.child, d + 1))
    return best
