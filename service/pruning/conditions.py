"""Stats conditions: the small IR that the per-file evaluator interprets and that the SQL layer
will translate into WHERE clauses over the catalog's typed key columns.

A predicate tree compiles to a :data:`Condition`::

    Condition     = LeafCondition | AllOf(children) | AnyOf(children) | Constant(might_match, reason)
    LeafCondition = (column, variant_path, cases: tuple[TypedTest, ...], otherwise: Test, label)
    TypedTest     = (types: tuple[ShreddedType, ...], test: Test)
    Test          = Keep | Never | HasValues | HasNulls | MayHaveNaN
                  | RangeMayContain(lo, hi, lo_inclusive, hi_inclusive, nan_matches)
                  | AnyPoint(points) | NotAllIn(values, nan_matches)

Meaning, for ONE file. A LeafCondition reads the stats rows of ``(column, variant_path)``:

* no row → the file MIGHT match (the path is not fully shredded in that file: no facts);
* a row whose ``shredded_type`` is in some case's ``types`` → that case's test decides for the
  row; any other stored type → ``otherwise`` (only type-independent facts hold there);
* several rows → the file can be pruned only if every row's test says CANNOT.

AllOf prunes if any child prunes, AnyOf only if every child does. Tests, per stats row
(``vc`` = value_count, ``nc`` = null_count; an absent min/max is unbounded, never "empty"):

=================  =====================================================================
Keep               might match: nothing can be concluded
Never              cannot match: no value of this stored type satisfies the leaf
HasValues          vc > 0
HasNulls           nc > 0
MayHaveNaN         vc > 0 and contains_nan is not false
RangeMayContain    vc > 0 and ((nan_matches and contains_nan is not false) or
                   ([min, max] meets the interval lo..hi, bounds inclusive as flagged;
                   lo/hi None = unbounded))
AnyPoint           vc > 0 and some point p has min <= p <= max
NotAllIn           vc > 0 and not (min = max, that value in ``values``, and not
                   (nan_matches and contains_nan is not false))
=================  =====================================================================

Every literal in a test is a value of the case's stored type (int8 stats get int8 points:
an int64 literal 300 cannot equal an int8 value, so that case is Never), so the SQL layer can
compare it with the typed key columns (``min_num``/``max_num``, ``min_real``/``max_real``,
``min_bin``/``max_bin`` via :func:`service.values.index_key`) of exactly those types.

Soundness rules encoded here (a pruned file must never hold a matching row):

* Only exact type matches, a narrower signed integer serving a wider integer target (int8/16/32
  stats for an int64 target; never the reverse) and a decimal with the same scale and no larger
  precision use bounds (usable_types): Spark's variant_get casts everything else (the string
  "5" is int 5, the double 5.7 is int 5), so other stored types get only type-free facts.
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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from service.errors import InvalidPathError
from service.pruning.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    LiteralPredicate,
    Not,
    Op,
    Or,
    SetPredicate,
    UnaryPredicate,
    rewrite_not,
)
from service.pruning.literals import domain_extremes
from service.pruning.paths import format_json_path
from service.pruning.render import render_predicate
from service.pruning.spark_types import spark_type_name
from service.values import INTEGER_KINDS, INTEGER_RANGES, Bound, Kind, ShreddedType

#: An IN list longer than this is tested as the range [min(list), max(list)]: still sound, and
#: it keeps the work (and the SQL the later layer writes) bounded.
DEFAULT_MAX_IN_POINTS = 256


# --- tests -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Keep:
    pass


@dataclass(frozen=True, slots=True)
class Never:
    pass


@dataclass(frozen=True, slots=True)
class HasValues:
    pass


@dataclass(frozen=True, slots=True)
class HasNulls:
    pass


@dataclass(frozen=True, slots=True)
class MayHaveNaN:
    pass


@dataclass(frozen=True, slots=True)
class RangeMayContain:
    lo: Bound | None
    hi: Bound | None
    lo_inclusive: bool = True
    hi_inclusive: bool = True
    nan_matches: bool = False


@dataclass(frozen=True, slots=True)
class AnyPoint:
    points: tuple[Bound, ...]


@dataclass(frozen=True, slots=True)
class NotAllIn:
    values: tuple[Bound, ...]
    nan_matches: bool = False


Test = Keep | Never | HasValues | HasNulls | MayHaveNaN | RangeMayContain | AnyPoint | NotAllIn


@dataclass(frozen=True, slots=True)
class TypedTest:
    types: tuple[ShreddedType, ...]
    test: Test


@dataclass(frozen=True, slots=True)
class LeafCondition:
    column: str
    variant_path: str
    cases: tuple[TypedTest, ...]
    otherwise: Test
    #: The predicate as Spark SQL, for reasons; not part of the condition's meaning.
    label: str = ""

    def test_for(self, stored: ShreddedType) -> Test:
        for case in self.cases:
            if stored in case.types:
                return case.test
        return self.otherwise


@dataclass(frozen=True, slots=True)
class AllOf:
    children: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    children: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class Constant:
    might_match: bool
    reason: str


Condition = LeafCondition | AllOf | AnyOf | Constant


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


def _label(pred: UnaryPredicate | LiteralPredicate | SetPredicate) -> str:
    try:
        return render_predicate(pred)
    except InvalidPathError:
        t = pred.term
        return f"{pred.op.value}({t.column}:{format_json_path(t.path)}::{spark_type_name(t.target)})"


def _comparison_test(op: Op, stored: ShreddedType, v: Bound, is_float: bool) -> Test:
    rng = _stored_range(stored)
    lo, hi = rng if rng is not None else (None, None)
    above = hi is not None and v > hi  # type: ignore[operator]
    below = lo is not None and v < lo  # type: ignore[operator]
    if op is Op.EQ:
        return Never() if above or below else RangeMayContain(v, v)
    if op is Op.NOT_EQ:
        return HasValues() if above or below else NotAllIn((v,), nan_matches=is_float)
    if op is Op.LT:
        if above:
            return HasValues()
        if lo is not None and v <= lo:  # type: ignore[operator]
            return Never()
        return RangeMayContain(None, v, hi_inclusive=False)
    if op is Op.LT_EQ:
        if hi is not None and v >= hi:  # type: ignore[operator]
            return HasValues()
        if below:
            return Never()
        return RangeMayContain(None, v)
    if op is Op.GT:
        if hi is not None and v >= hi:  # type: ignore[operator]
            return Never()
        if below:
            return HasValues()
        return RangeMayContain(v, None, lo_inclusive=False, nan_matches=is_float)
    # GT_EQ
    if above:
        return Never()
    if lo is not None and v <= lo:  # type: ignore[operator]
        return HasValues()
    return RangeMayContain(v, None, nan_matches=is_float)


def _in_range(stored: ShreddedType, v: Bound) -> bool:
    rng = _stored_range(stored)
    return rng is None or rng[0] <= v <= rng[1]  # type: ignore[operator]


def _set_test(op: Op, stored: ShreddedType, values: Sequence[Bound], is_float: bool, max_points: int) -> Test:
    pts = tuple(v for v in values if _in_range(stored, v))
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


def leaf_condition(
    pred: UnaryPredicate | LiteralPredicate | SetPredicate, *, max_in_points: int = DEFAULT_MAX_IN_POINTS
) -> LeafCondition:
    term = pred.term
    target = term.target
    usable = usable_types(target)
    is_float = target.is_float

    def leaf(cases: tuple[TypedTest, ...], otherwise: Test) -> LeafCondition:
        return LeafCondition(term.column, term.variant_path, cases, otherwise, _label(pred))

    if isinstance(pred, UnaryPredicate):
        if pred.op is Op.IS_NULL:
            if term.path.has_element:
                return leaf((), Keep())
            return leaf((TypedTest(usable, HasNulls()),), Keep())
        if pred.op is Op.NOT_NULL:
            return leaf((), HasValues())
        if pred.op is Op.IS_NAN:
            # Only a float of the target's own width has a trustworthy contains_nan for it; a
            # string "NaN" or a float32 NaN cast to double is NaN too: other types need values.
            return leaf((TypedTest((target,), MayHaveNaN()),), HasValues())
        return leaf((), Keep())  # NOT_NAN: TRUE on NULL rows
    if isinstance(pred, LiteralPredicate):
        pairs = [(s, _comparison_test(pred.op, s, pred.literal, is_float)) for s in usable]
        return leaf(_group(pairs), HasValues())
    if not pred.literals:
        # IN (): no value equals, whatever the type. NOT IN (): TRUE for every non-null value.
        return leaf((), Never() if pred.op is Op.IN else HasValues())
    pairs = [(s, _set_test(pred.op, s, pred.literals, is_float, max_in_points)) for s in usable]
    return leaf(_group(pairs), HasValues())


def _unsatisfiable(pred: UnaryPredicate | LiteralPredicate | SetPredicate) -> bool:
    """A leaf no value of its target type satisfies, whatever the stored type and stats:
    ``IN ()`` (``bigint = 42.5``), ``x < least value``, ``x > greatest value`` (not for floats:
    NaN > +inf)."""
    if isinstance(pred, SetPredicate):
        return pred.op is Op.IN and not pred.literals
    if not isinstance(pred, LiteralPredicate) or pred.op not in (Op.LT, Op.GT):
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


def compile_expression(expr: BooleanExpression, *, max_in_points: int = DEFAULT_MAX_IN_POINTS) -> Condition:
    """Compile a tree (Not pushed down first) into a Condition."""
    return _compile(rewrite_not(expr), max_in_points)


def _compile(e: BooleanExpression, max_in_points: int) -> Condition:
    if isinstance(e, AlwaysTrue):
        return Constant(True, "the predicate is TRUE")
    if isinstance(e, AlwaysFalse):
        return Constant(False, "the predicate is FALSE")
    if isinstance(e, And):
        return AllOf(tuple(_compile(c, max_in_points) for c in e.children))
    if isinstance(e, Or):
        return AnyOf(tuple(_compile(c, max_in_points) for c in e.children))
    if isinstance(e, Not):
        label = (
            _label(e.child)
            if isinstance(e.child, UnaryPredicate | LiteralPredicate | SetPredicate)
            else str(e.child)
        )
        return Constant(
            True,
            f"NOT {label}: 'no element satisfies' cannot be decided from stats, which cover all elements",
        )
    if isinstance(e, UnaryPredicate | LiteralPredicate | SetPredicate):
        if _unsatisfiable(e):
            return Constant(False, f"{_label(e)}: no {spark_type_name(e.term.target)} value can satisfy it")
        return leaf_condition(e, max_in_points=max_in_points)
    raise TypeError(f"not a BooleanExpression: {e!r}")


def condition_paths(c: Condition) -> set[tuple[str, str]]:
    """The (column, variant_path) stats rows a condition reads."""
    out: set[tuple[str, str]] = set()
    stack = [c]
    while stack:
        n = stack.pop()
        if isinstance(n, LeafCondition):
            out.add((n.column, n.variant_path))
        elif isinstance(n, AllOf | AnyOf):
            stack.extend(n.children)
    return out
