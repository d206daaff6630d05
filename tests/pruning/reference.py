"""A brute-force reference for pruning tests: evaluates a predicate tree over concrete Variant
rows with Spark's three-valued semantics, and computes DuckLake stats rows from the same rows.

A row is ``{column: value}``: a Variant column holds the Variant value; a plain or partition
column holds a :class:`Typed` (the type the file stores it as) or None (SQL NULL). An
``Unknown`` sub-expression is evaluated by the caller's function for its text, or may take any
truth value when none is given.

Written from the rules (NOTES §2/§3), not from the evaluator's code: a row's value at a path is
either NULL (missing key, Variant null, wrong shape, index past the end) or a typed value.
A typed value reaches the target type exactly when the types match or a narrower integer /
same-scale narrower decimal widens; the casts of :func:`spark_cast` (integers to narrower
integers, floats, decimals and strings; decimals to other decimals) are computed as Spark computes
them; any other stored type goes through a cast the reference does not model: such a leaf may then
be TRUE, FALSE or NULL.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Context, Decimal
from fractions import Fraction
from typing import Any

from service.pruning.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    ColumnTerm,
    LiteralPredicate,
    Not,
    Op,
    Or,
    SetPredicate,
    UnaryPredicate,
    Unknown,
)
from service.pruning.paths import AnyIndex, Index, Key, Step
from service.stats.model import ColumnStats, PathStats
from service.values import (
    DATE_INFINITY,
    DATE_NEG_INFINITY,
    INTEGER_RANGES,
    Bound,
    Kind,
    ShreddedType,
    truncate_lower,
    truncate_upper,
)

T, F, N = True, False, None
ALL = frozenset({T, F, N})


@dataclass(frozen=True)
class Typed:
    """A shredded primitive: its stored type and value (floats may be NaN)."""

    type: ShreddedType
    value: Bound


def stats_row(
    path: str,
    shredded_type: str | ShreddedType,
    value_count: int,
    null_count: int,
    min_value: Bound | None,
    max_value: Bound | None,
    contains_nan: bool | None = None,
    column: str = "v",
) -> PathStats:
    t = ShreddedType.parse(shredded_type) if isinstance(shredded_type, str) else shredded_type
    return PathStats(column, path, t, 100, value_count, null_count, min_value, max_value, contains_nan)


# --- three-valued logic ------------------------------------------------------------------------


def k_and(a: bool | None, b: bool | None) -> bool | None:
    if a is F or b is F:
        return F
    if a is T and b is T:
        return T
    return N


def k_or(a: bool | None, b: bool | None) -> bool | None:
    if a is T or b is T:
        return T
    if a is F and b is F:
        return F
    return N


def k_not(a: bool | None) -> bool | None:
    return N if a is N else (not a)


def _combine(sets: Sequence[frozenset[bool | None]], op: Any, empty: bool) -> frozenset[bool | None]:
    acc: frozenset[bool | None] = frozenset({empty})
    for s in sets:
        acc = frozenset(op(a, b) for a in acc for b in s)
    return acc


# --- Spark's value semantics -------------------------------------------------------------------


def exact_cast(stored: ShreddedType, target: ShreddedType) -> bool:
    if stored == target:
        return True
    if stored.kind in INTEGER_RANGES and target.kind in INTEGER_RANGES:
        slo, shi = INTEGER_RANGES[stored.kind]
        tlo, thi = INTEGER_RANGES[target.kind]
        return tlo <= slo and shi <= thi
    if stored.kind is Kind.DECIMAL and target.kind is Kind.DECIMAL:
        assert stored.precision is not None and target.precision is not None
        return stored.scale == target.scale and stored.precision <= target.precision
    return False


class _Unmodeled:
    pass


UNMODELED = _Unmodeled()


def _float32_of(x: int) -> float:
    """The float32 nearest ``x``, ties to the even bit pattern (Java's ``(float) long``), chosen
    among the neighbours of struct's double-rounded guess by exact distance."""
    guess = struct.unpack("<f", struct.pack("<f", float(x)))[0]
    bits = struct.unpack("<i", struct.pack("<f", guess))[0]
    near = [struct.unpack("<f", struct.pack("<i", b))[0] for b in (bits - 1, bits, bits + 1)]
    near = [f for f in near if math.isfinite(f)]
    return min(near, key=lambda f: (abs(Fraction(f) - x), struct.unpack("<i", struct.pack("<f", f))[0] & 1))


def spark_cast(v: Typed, target: ShreddedType) -> Bound | _Unmodeled | None:
    """Spark's variant_get cast (TRY mode; a NULL result fails variant_get and is NULL in
    try_variant_get, both select nothing) for the pairs the pruning rules use; UNMODELED for the
    rest. Measured on Spark 4.3.0: HALF_UP decimal rounding, overflow → NULL, ANSI irrelevant."""
    s, x = v.type, v.value
    if s.kind in INTEGER_RANGES:
        assert isinstance(x, int)
        if target.kind in INTEGER_RANGES:
            lo, hi = INTEGER_RANGES[target.kind]
            return x if lo <= x <= hi else None
        if target.kind is Kind.FLOAT64:
            return float(x)
        if target.kind is Kind.FLOAT32:
            return _float32_of(x)
        if target.kind is Kind.VARCHAR:
            return str(x)
        if target.kind is Kind.DECIMAL:
            assert target.precision is not None and target.scale is not None
            return Decimal(x) if len(str(abs(x))) + target.scale <= target.precision or x == 0 else None
    if s.kind is Kind.DECIMAL and target.kind is Kind.DECIMAL:
        assert isinstance(x, Decimal) and target.precision is not None and target.scale is not None
        ctx = Context(prec=200)
        r = x.quantize(Decimal(1).scaleb(-target.scale), rounding=ROUND_HALF_UP, context=ctx)
        digits = len(r.as_tuple().digits) if r != 0 else 0
        return r if digits <= target.precision else None
    return UNMODELED


def spark_cmp(a: Bound, b: Bound) -> int:
    """Spark's total order: NaN above everything and equal to itself; -0.0 = 0.0."""
    a_nan = isinstance(a, float) and math.isnan(a)
    b_nan = isinstance(b, float) and math.isnan(b)
    if a_nan or b_nan:
        return 0 if a_nan and b_nan else (1 if a_nan else -1)
    return -1 if a < b else (1 if a > b else 0)  # type: ignore[operator]


def _representatives(pred: LiteralPredicate | SetPredicate) -> list[Bound]:
    """Target values enough to show whether some value satisfies the leaf: the type's extremes,
    the literals, and just above each literal for unbounded strings."""
    t = pred.term.target
    lits = [pred.literal] if isinstance(pred, LiteralPredicate) else list(pred.literals)
    out: list[Bound] = list(lits)
    k = t.kind
    if k in INTEGER_RANGES:
        out += list(INTEGER_RANGES[k])
    elif k is Kind.DECIMAL:
        assert t.precision is not None and t.scale is not None
        lim = Decimal(f"{10**t.precision - 1}E-{t.scale}")
        out += [lim.copy_negate(), lim]
    elif t.is_float:
        out += [-math.inf, math.inf, math.nan]
    elif k is Kind.BOOLEAN:
        out += [False, True]
    elif k is Kind.DATE:
        out += [DATE_NEG_INFINITY, DATE_INFINITY]
    elif k in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ):
        out += [-(2**63), 2**63 - 1]
    elif k is Kind.VARCHAR:
        out += [""] + [x + "\x00" for x in lits if isinstance(x, str)]
    elif k is Kind.BLOB:
        out += [b""] + [x + b"\x00" for x in lits if isinstance(x, bytes)]
    return out


def _leaf_on_value(
    pred: UnaryPredicate | LiteralPredicate | SetPredicate, v: Typed | None
) -> frozenset[bool | None]:
    target = pred.term.target
    if v is not None and not exact_cast(v.type, target):
        cast = spark_cast(v, target)
        if not isinstance(cast, _Unmodeled):
            return _leaf_on_value(pred, None if cast is None else Typed(target, cast))
        # Spark's cast of another stored type: NULL (failed try cast; an error returns no row
        # either), or some value of the target type, which the reference does not model.
        if isinstance(pred, UnaryPredicate):
            return frozenset({T, F})
        return frozenset({N}) | frozenset().union(
            *(_leaf_on_value(pred, Typed(target, x)) for x in _representatives(pred))
        )
    if isinstance(pred, UnaryPredicate):
        if v is None:
            return frozenset({{Op.IS_NULL: T, Op.NOT_NULL: F, Op.IS_NAN: F, Op.NOT_NAN: T}[pred.op]})
        if pred.op is Op.IS_NULL:
            return frozenset({F})
        if pred.op is Op.NOT_NULL:
            return frozenset({T})
        nan = isinstance(v.value, float) and math.isnan(v.value)
        return frozenset({nan if pred.op is Op.IS_NAN else not nan})
    if v is None:
        return frozenset({N})
    x = v.value
    if isinstance(pred, LiteralPredicate):
        c = spark_cmp(x, pred.literal)
        return frozenset(
            {
                {
                    Op.EQ: c == 0,
                    Op.NOT_EQ: c != 0,
                    Op.LT: c < 0,
                    Op.LT_EQ: c <= 0,
                    Op.GT: c > 0,
                    Op.GT_EQ: c >= 0,
                }[pred.op]
            }
        )
    hit = any(spark_cmp(x, lit) == 0 for lit in pred.literals)
    return frozenset({hit if pred.op is Op.IN else not hit})


def _walk(
    value: Any, steps: Sequence[Step], pred: UnaryPredicate | LiteralPredicate | SetPredicate
) -> frozenset[bool | None]:
    """Evaluate a leaf at ``steps`` under ``value``; [*] is an existential (Spark's exists)."""
    for i, s in enumerate(steps):
        if isinstance(s, AnyIndex):
            if not isinstance(value, list):
                return frozenset({N})  # exists over a NULL array is NULL
            return _combine([_walk(e, steps[i + 1 :], pred) for e in value], k_or, F)
        if isinstance(s, Key):
            value = value.get(s.name) if isinstance(value, dict) else None
        else:
            assert isinstance(s, Index)
            value = value[s.index] if isinstance(value, list) and s.index < len(value) else None
    if isinstance(value, dict | list):
        value = None  # not a primitive: the typed read is NULL  # pragma: no cover
    return _leaf_on_value(pred, value)


UnknownEval = Mapping[str, Callable[[dict[str, Any]], bool | None]]


def possible(
    expr: BooleanExpression, row: dict[str, Any], unknowns: UnknownEval | None = None
) -> frozenset[bool | None]:
    """The truth values ``expr`` may take on ``row`` (see the module docstring)."""
    if isinstance(expr, AlwaysTrue):
        return frozenset({T})
    if isinstance(expr, AlwaysFalse):
        return frozenset({F})
    if isinstance(expr, And):
        return _combine([possible(c, row, unknowns) for c in expr.children], k_and, T)
    if isinstance(expr, Or):
        return _combine([possible(c, row, unknowns) for c in expr.children], k_or, F)
    if isinstance(expr, Not):
        return frozenset(k_not(x) for x in possible(expr.child, row, unknowns))
    if isinstance(expr, Unknown):
        # The builder writes NOT of an unknown as "NOT (text)".
        table = unknowns or {}
        text, negations = expr.text, 0
        while text not in table and text.startswith("NOT (") and text.endswith(")"):
            text, negations = text[5:-1], negations + 1
        fn = table.get(text)
        if fn is None:
            return ALL
        v = fn(row)
        for _ in range(negations):
            v = k_not(v)
        return frozenset({v})
    assert isinstance(expr, UnaryPredicate | LiteralPredicate | SetPredicate)
    if isinstance(expr.term, ColumnTerm):
        return _leaf_on_value(expr, row.get(expr.term.name))
    return _walk(row.get(expr.term.column), expr.term.path.steps, expr)


def may_select(expr: BooleanExpression, row: dict[str, Any], unknowns: UnknownEval | None = None) -> bool:
    return T in possible(expr, row, unknowns)


# --- stats from rows ---------------------------------------------------------------------------


def _entries(value: Any, segments: Sequence[str | None]) -> Iterable[Typed | None]:
    """Leaf entries of one row for a DuckLake path (None segment = element), as the Parquet
    leaf column holds them: one per row, one per array element, one null per empty array."""
    if not segments:
        yield value if isinstance(value, Typed) else None
        return
    s, rest = segments[0], segments[1:]
    if s is None:
        if isinstance(value, list) and value:
            for e in value:
                yield from _entries(e, rest)
        else:
            yield None  # a missing, non-array or empty array: one null entry
        return
    yield from _entries(value.get(s) if isinstance(value, dict) else None, rest)


def compute_stats(
    column: str,
    variant_path: str,
    segments: Sequence[str | None],
    stored: ShreddedType,
    rows: Sequence[dict[str, Any]],
    *,
    drop_min: bool = False,
    drop_max: bool = False,
    unknown_nan: bool = False,
) -> PathStats:
    """The DuckLake stats row of a fully shredded path: every typed entry is of ``stored``."""
    vc = nc = 0
    lo: Bound | None = None
    hi: Bound | None = None
    has_nan = False
    for row in rows:
        for e in _entries(row.get(column), segments):
            if e is None:
                nc += 1
                continue
            assert e.type == stored
            vc += 1
            v = e.value
            if isinstance(v, float) and math.isnan(v):
                has_nan = True
                continue
            if lo is None or v < lo:  # type: ignore[operator]
                lo = v
            if hi is None or v > hi:  # type: ignore[operator]
                hi = v
    if lo is not None:
        lo = truncate_lower(stored, lo)
    if hi is not None:
        hi = truncate_upper(stored, hi)
    nan: bool | None = None
    if stored.is_float:
        nan = None if unknown_nan else has_nan
    return PathStats(
        column,
        variant_path,
        stored,
        1,
        vc,
        nc,
        None if drop_min else lo,
        None if drop_max else hi,
        nan,
    )


def column_stats(
    name: str,
    stored: ShreddedType,
    values: Sequence[Typed | None],
    *,
    drop_min: bool = False,
    drop_max: bool = False,
    unknown_nan: bool = False,
) -> ColumnStats:
    """DuckLake's ``ducklake_file_column_stats`` row of a plain column (or the row a partition
    value implies) from its values in one file: NaN outside min/max, long strings truncated."""
    vc = nc = 0
    lo: Bound | None = None
    hi: Bound | None = None
    has_nan = False
    for e in values:
        if e is None:
            nc += 1
            continue
        assert e.type == stored
        vc += 1
        v = e.value
        if isinstance(v, float) and math.isnan(v):
            has_nan = True
            continue
        if lo is None or v < lo:  # type: ignore[operator]
            lo = v
        if hi is None or v > hi:  # type: ignore[operator]
            hi = v
    if lo is not None:
        lo = truncate_lower(stored, lo)
    if hi is not None:
        hi = truncate_upper(stored, hi)
    nan: bool | None = None
    if stored.is_float:
        nan = None if unknown_nan else has_nan
    return ColumnStats(
        name, stored, 1, vc, nc, None if drop_min else lo, None if drop_max else hi, nan
    )
