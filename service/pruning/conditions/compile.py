"""Compiling a predicate tree into a stats :data:`~.model.Condition` (the IR and its meaning are
described in :mod:`.model`).

Soundness rules encoded here (a pruned file must never hold a matching row):

* Exact type matches, a narrower signed integer serving a wider integer target (int8/16/32
  stats for an int64 target) and a decimal with the same scale and no larger precision use
  bounds as they are (usable_types). Stored types reached by a monotone cast of Spark's
  variant_get (a wider integer asked as a narrower one, an integer asked as float, double or
  decimal, a decimal asked at another scale, an integer's text asked for equality) use their
  bounds with the literals mapped back through the cast (:mod:`service.pruning.conditions.casts`, the
  leaf's ``derived`` tests). Spark casts everything else (the string "5" is int 5, the double
  5.7 is int 5), so other stored types get only type-free facts.
* value_count = 0 (every entry null/missing) holds for any type: no comparison, IN, is_nan or
  not_null can then be TRUE.
* is_null can prune only when null_count = 0, the stored type is usable (its cast to the target
  cannot fail or yield NULL) and the path has no element step (an element path reads one array
  element, or some element, and an empty or short array gives NULL without any null entry).
* Floats: NaN sorts above every number (Spark and DuckDB) and min/max exclude NaN, so ``>``,
  ``>=``, ``!=`` and not_in match when contains_nan is true or unknown; is_nan prunes only on
  contains_nan = false. -0.0 = 0.0 (Python's float comparison agrees).
* Strings and blobs may carry truncated bounds (a prefix as min, an incremented prefix as max):
  still valid bounds, and min = max then implies every value equals it.
* not_nan is TRUE for NULL (Spark's isnan(NULL) is false), so it never prunes.
* A ``Not`` left above a ``[*]`` leaf means "no element satisfies": stats cannot show that, so
  it compiles to Constant(MIGHT_MATCH).
* Plain and partition columns (ColumnTerm) follow the same rules with ``variant_path`` None: a
  file's stats of the column in the table's own type, or in a narrower integer / same-scale
  decimal (files written before the column was widened, which Spark reads widened exactly), use
  their bounds; any other stored type gets only type-free facts.
* An :class:`~service.pruning.expressions.Unknown` sub-expression compiles to
  Constant(MIGHT_MATCH, "not used for pruning: <text>"): an OR with it keeps every file (the
  whole OR becomes that constant), an AND drops it and prunes on the other conjuncts.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from decimal import Decimal

from service.errors import InvalidPathError, InvalidPredicateError
from service.pruning.conditions.casts import CastRule, has_casts, integer_cast_types
from service.pruning.conditions.model import (
    AllOf,
    AnyOf,
    AnyPoint,
    Condition,
    Constant,
    HasNulls,
    HasValues,
    Keep,
    Label,
    LeafCondition,
    LeafTerm,
    MayHaveNaN,
    Never,
    NotAllIn,
    RangeMayContain,
    Test,
    TypedTest,
)
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
    rewrite_not,
    visit,
)
from service.pruning.literals import domain_extremes
from service.pruning.paths import JsonPath, format_json_path
from service.pruning.render import render_predicate
from service.pruning.spark_types import spark_type_name
from service.values import INTEGER_KINDS, INTEGER_RANGES, Bound, Kind, ShreddedType, bound_le, bound_lt

#: An IN list longer than this is tested as the range [min(list), max(list)]: still sound, and
#: it keeps the work (and the SQL the catalog writes) bounded.
DEFAULT_MAX_IN_POINTS = 256


# --- which stored types may use bounds ---------------------------------------------------------


def usable_types(target: ShreddedType) -> tuple[ShreddedType, ...]:
    """Stored types whose values reach ``target`` unchanged through Spark's cast, so their bounds
    and null counts speak for the target (widest last)."""
    k = target.kind
    if k in INTEGER_KINDS:
        # Signed integers widen exactly; a wider stored type could overflow or wrap: never.
        return tuple(ShreddedType(n) for n in INTEGER_KINDS[: INTEGER_KINDS.index(k) + 1])
    if k is Kind.DECIMAL:
        # Same scale and no larger precision: the unscaled value is carried over as is.
        assert target.precision is not None and target.scale is not None
        s = target.scale
        return tuple(ShreddedType(Kind.DECIMAL, p, s) for p in range(max(s, 1), target.precision + 1))
    return (target,)


def _stored_range(stored: ShreddedType) -> tuple[Bound, Bound] | None:
    """The least and greatest value of a stored integer/decimal type (None: no clamping needed,
    the stored type equals the target so literals are in range by construction)."""
    if stored.kind in INTEGER_KINDS:
        return INTEGER_RANGES[stored.kind]
    if stored.kind is Kind.DECIMAL:
        assert stored.precision is not None and stored.scale is not None
        lim = Decimal(f"{10**stored.precision - 1}E-{stored.scale}")
        return lim.copy_negate(), lim  # copy_negate is exact; unary minus rounds to 28 digits
    return None


# --- compilation -------------------------------------------------------------------------------


def _render_label(pred: Predicate) -> str:
    try:
        return render_predicate(pred)
    except (InvalidPathError, InvalidPredicateError):
        t = pred.term
        if not isinstance(t, VariantTerm):
            return f"{pred.op.value}({t.name}::{t.target.name})"
        return f"{pred.op.value}({t.column}:{format_json_path(t.path)}::{spark_type_name(t.target)})"


def _type_label(t: ShreddedType) -> str:
    try:
        return spark_type_name(t)
    except InvalidPredicateError:
        return t.name


def _label(pred: Predicate) -> Label:
    return Label(lambda: _render_label(pred))


def _comparison_test(op: Op, stored: ShreddedType, v: Bound, is_float: bool) -> Test:
    rng = _stored_range(stored)
    lo, hi = rng if rng is not None else (None, None)
    above = hi is not None and bound_lt(hi, v)
    below = lo is not None and bound_lt(v, lo)
    if op is Op.EQ:
        return Never() if above or below else RangeMayContain(v, v)
    if op is Op.NOT_EQ:
        return HasValues() if above or below else NotAllIn((v,), nan_matches=is_float)
    if op is Op.LT:
        if above:
            return HasValues()
        if lo is not None and bound_le(v, lo):
            return Never()
        return RangeMayContain(None, v, hi_inclusive=False)
    if op is Op.LT_EQ:
        if hi is not None and bound_le(hi, v):
            return HasValues()
        if below:
            return Never()
        return RangeMayContain(None, v)
    if op is Op.GT:
        if hi is not None and bound_le(hi, v):
            return Never()
        if below:
            return HasValues()
        return RangeMayContain(v, None, lo_inclusive=False, nan_matches=is_float)
    # GT_EQ
    if above:
        return Never()
    if lo is not None and bound_le(v, lo):
        return HasValues()
    return RangeMayContain(v, None, nan_matches=is_float)


def _set_test(op: Op, stored: ShreddedType, values: Sequence[Bound], is_float: bool, max_points: int) -> Test:
    # The values within the stored type's range: the literals are sorted, so they are one slice
    # (a 10,000-id list meets 4 types; testing each value was ~2 ms).
    rng = _stored_range(stored)
    pts = tuple(values) if rng is None else tuple(values[bisect_left(values, rng[0]) : bisect_right(values, rng[1])])
    if op is Op.IN:
        if not pts:
            return Never()
        if len(pts) > max_points:
            return RangeMayContain(pts[0], pts[-1])  # literals are sorted
        return AnyPoint(pts)
    if not pts:
        return HasValues()
    return NotAllIn(pts, nan_matches=is_float)


def _group(pairs: list[tuple[ShreddedType, Test]]) -> tuple[TypedTest, ...]:
    grouped: dict[Test, list[ShreddedType]] = {}
    for t, test in pairs:
        grouped.setdefault(test, []).append(t)
    return tuple(TypedTest(tuple(ts), test) for test, ts in grouped.items())


def _compares_casts(pred: Predicate) -> bool:
    """Whether the leaf compares the bounds of the integer types a cast serves (a string target
    only in equality and IN: text order is not the integers' order)."""
    if isinstance(pred, UnaryPredicate):
        return False
    if pred.term.target.kind is Kind.VARCHAR:
        return pred.op in (Op.EQ, Op.NOT_EQ, Op.IN, Op.NOT_IN)
    return True


class _LeafCompiler(PredicateVisitor[LeafCondition]):
    def __init__(self, max_in_points: int) -> None:
        self.max_in_points = max_in_points

    def _leaf(self, pred: Predicate, cases: tuple[TypedTest, ...], otherwise: Test) -> LeafCondition:
        t = pred.term
        usable = tuple(s for case in cases for s in case.types)
        path: JsonPath | None = None
        derived: tuple[CastRule, ...] = ()
        if isinstance(t, VariantTerm):
            path = t.path
            # Stored types reached by a monotone cast (a narrower or float target of an integer
            # path, another decimal scale): their own bounds, the literals mapped back (.casts).
            # Plain columns are read in the table's type: no cast.
            if has_casts(t.target):
                literals: tuple[Bound, ...] = (pred.literal,) if isinstance(pred, LiteralPredicate) else ()
                if isinstance(pred, SetPredicate):
                    literals = pred.literals
                nulls = not t.path.has_element
                derived = (CastRule(pred.op, t.target, literals, self.max_in_points, nulls),)
                if _compares_casts(pred):
                    usable += tuple(s for s in integer_cast_types(t.target) if s not in usable)
        return LeafCondition(
            t.column, t.variant_path, cases, otherwise, _label(pred), (LeafTerm(path, t.target, usable),), derived
        )

    def visit_unary(self, pred: UnaryPredicate) -> LeafCondition:
        target = pred.term.target
        if pred.op is Op.IS_NULL:
            if isinstance(pred.term, VariantTerm) and pred.term.path.has_element:
                return self._leaf(pred, (), Keep())
            return self._leaf(pred, (TypedTest(usable_types(target), HasNulls()),), Keep())
        if pred.op is Op.NOT_NULL:
            return self._leaf(pred, (), HasValues())
        if pred.op is Op.IS_NAN:
            # Only a float of the target's own width has a trustworthy contains_nan for it; a
            # string "NaN" or a float32 NaN cast to double is NaN too: other types need values.
            return self._leaf(pred, (TypedTest((target,), MayHaveNaN()),), HasValues())
        return self._leaf(pred, (), Keep())  # NOT_NAN: TRUE on NULL rows

    def visit_literal(self, pred: LiteralPredicate) -> LeafCondition:
        target = pred.term.target
        pairs = [(s, _comparison_test(pred.op, s, pred.literal, target.is_float)) for s in usable_types(target)]
        return self._leaf(pred, _group(pairs), HasValues())

    def visit_set(self, pred: SetPredicate) -> LeafCondition:
        if not pred.literals:
            # IN (): no value equals, whatever the type. NOT IN (): TRUE for every non-null value.
            return self._leaf(pred, (), Never() if pred.op is Op.IN else HasValues())
        target = pred.term.target
        pairs = [
            (s, _set_test(pred.op, s, pred.literals, target.is_float, self.max_in_points))
            for s in usable_types(target)
        ]
        return self._leaf(pred, _group(pairs), HasValues())


def leaf_condition(pred: Predicate, *, max_in_points: int = DEFAULT_MAX_IN_POINTS) -> LeafCondition:
    return visit(pred, _LeafCompiler(max_in_points))


class _Unsatisfiable(PredicateVisitor[bool]):
    """A leaf no value of its target type satisfies, whatever the stored type and stats:
    ``IN ()`` (``bigint = 42.5``), ``x < least value``, ``x > greatest value`` (not for floats:
    NaN > +inf)."""

    def visit_unary(self, pred: UnaryPredicate) -> bool:
        return False

    def visit_set(self, pred: SetPredicate) -> bool:
        return pred.op is Op.IN and not pred.literals

    def visit_literal(self, pred: LiteralPredicate) -> bool:
        if pred.op not in (Op.LT, Op.GT):
            return False
        t = pred.term.target
        if t.kind is Kind.VARCHAR:
            return pred.op is Op.LT and pred.literal == ""
        if t.kind is Kind.BLOB:
            return pred.op is Op.LT and pred.literal == b""
        lo, hi = domain_extremes(t)
        if pred.op is Op.LT:
            return pred.literal == lo
        return pred.literal == hi and not t.is_float


_UNSATISFIABLE = _Unsatisfiable()


class _Compiler(BooleanExpressionVisitor[Condition]):
    def __init__(self, max_in_points: int) -> None:
        self.leaves = _LeafCompiler(max_in_points)

    def visit_true(self) -> Condition:
        return Constant(True, "the predicate is TRUE")

    def visit_false(self) -> Condition:
        return Constant(False, "the predicate is FALSE")

    def visit_and(self, node: And) -> Condition:
        children = [visit(c, self) for c in node.children]
        # A conjunct that keeps every file adds nothing (Unknown, NOT over [*]): drop it, so the
        # catalog's SQL never intersects with "every file".
        kept = [c for c in children if not (isinstance(c, Constant) and c.might_match)]
        if not kept:
            return children[0]
        return kept[0] if len(kept) == 1 else AllOf(tuple(kept))

    def visit_or(self, node: Or) -> Condition:
        children = [visit(c, self) for c in node.children]
        for c in children:
            if isinstance(c, Constant) and c.might_match:
                # One disjunct that may be TRUE anywhere: the OR may be TRUE anywhere.
                return c
        return AnyOf(tuple(children))

    def visit_unknown(self, node: Unknown) -> Condition:
        return Constant(True, Label(lambda: f"not used for pruning: {node.text}"))

    def visit_not(self, node: Not) -> Condition:
        # rewrite_not leaves a Not only directly above a [*] leaf.
        assert isinstance(node.child, Predicate)
        child = node.child
        return Constant(
            True,
            Label(
                lambda: f"NOT {_render_label(child)}: 'no element satisfies' cannot be decided from stats, "
                "which cover all elements"
            ),
        )

    def visit_predicate(self, pred: Predicate) -> Condition:
        if visit(pred, _UNSATISFIABLE):
            return Constant(
                False, Label(lambda: f"{_render_label(pred)}: no {_type_label(pred.term.target)} value can satisfy it")
            )
        return visit(pred, self.leaves)


def compile_expression(expr: BooleanExpression, *, max_in_points: int = DEFAULT_MAX_IN_POINTS) -> Condition:
    """Compile a tree (Not pushed down first) into a Condition."""
    return visit(rewrite_not(expr), _Compiler(max_in_points))
