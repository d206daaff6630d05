"""Property tests: a file the evaluator prunes never holds a row the predicate selects.

Random files (typed values per row, nulls, missing keys, wrong shapes, arrays), their DuckLake
stats computed from the values (value_count/null_count/min/max/contains_nan, NaN excluded,
long strings truncated, bounds sometimes dropped, sometimes no stats row), random predicates
over exact, widened and mismatched target types; the brute-force reference
(tests/pruning/reference.py) decides per row. Bounded to run in a few seconds.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.errors import InvalidPredicateError
from service.pruning.evaluator import evaluate, stats_by_path
from service.pruning.expressions import (
    And,
    BooleanExpression,
    Not,
    Op,
    Or,
    VariantTerm,
    compare,
    in_list,
    not_,
    rewrite_not,
    unary,
    variant,
)
from service.pruning.literals import DateLiteral, LiteralValue, TimestampLiteral, nearest_float32
from service.pruning.parse_json import parse_json, to_json
from service.pruning.parse_sql import parse_sql, to_sql
from service.stats.model import PathStats
from service.values import INT64_MAX, INT64_MIN, INTEGER_RANGES, Kind, ShreddedType
from tests.pruning.reference import Typed, compute_stats, may_select, possible, spark_cmp

# PRUNING_EXAMPLES=5000 for a deeper run; the default keeps the suite at a few seconds.
EXAMPLES = int(os.environ.get("PRUNING_EXAMPLES", "100"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PER_TYPE = settings(
    max_examples=max(EXAMPLES // 8, 8), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
FEW = settings(
    max_examples=max(EXAMPLES // 4, 10), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

STORED = [
    "int8",
    "int16",
    "int32",
    "int64",
    "decimal(5,2)",
    "decimal(7,2)",
    "float32",
    "float64",
    "varchar",
    "blob",
    "boolean",
    "date",
    "timestamptz",
    "timestamp",
]

# Targets a stored type may be read as: its own type, exact widenings, and casts.
TARGETS: dict[str, list[str]] = {
    "int8": ["tinyint", "smallint", "int", "bigint", "double", "string"],
    "int16": ["smallint", "tinyint", "int", "bigint", "decimal(10,0)"],
    "int32": ["int", "smallint", "bigint", "float", "decimal(5,1)", "string"],
    "int64": ["bigint", "int", "double", "tinyint", "float", "decimal(12,2)", "string"],
    "decimal(5,2)": ["decimal(5,2)", "decimal(7,2)", "decimal(4,2)", "decimal(10,3)", "double", "bigint", "decimal(3,1)"],
    "decimal(7,2)": ["decimal(7,2)", "decimal(5,2)", "decimal(38,2)", "decimal(6,0)", "decimal(9,4)"],
    "float32": ["float", "double", "int"],
    "float64": ["double", "float", "bigint", "string"],
    "varchar": ["string", "int", "binary", "date"],
    "blob": ["binary", "string"],
    "boolean": ["boolean", "int", "string"],
    "date": ["date", "timestamp", "string"],
    "timestamptz": ["timestamp", "timestamp_ntz", "date"],
    "timestamp": ["timestamp_ntz", "timestamp"],
}

LONG_A = "a" * 300
DAY = 86_400_000_000
# Hypothesis favours the first branch of one_of and small integers: the interesting choice
# (a value, a stats row, bounds kept) is put first throughout.
# Small pools make equalities, ties with min/max and boundaries frequent; a wide draw now and
# then keeps the rest of the domain in play.
FLOATS = [math.nan, -math.inf, -1.0, -0.0, 0.0, 0.5, 1.0, 2.5, math.inf, math.nan, math.nan]
STRINGS = ["", "a", "ab", "b", "é", "😀", LONG_A, LONG_A + "b", "\x7f" * 300]
BLOBS = [b"", b"\x00", b"\x01", b"\x01\x02", b"\xff", b"\xff" * 300, b"\xff" * 300 + b"\x01"]
TIMES = [-DAY, -1, 0, 1, DAY, DAY + 1, 10 * DAY]


def _pool(small: list[Any], wide: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.sampled_from(small), st.sampled_from(small), st.sampled_from(small), wide)


def stored_values(t: ShreddedType) -> st.SearchStrategy[Any]:
    k = t.kind
    if k in INTEGER_RANGES:
        lo, hi = INTEGER_RANGES[k]
        return _pool([-2, -1, 0, 1, 2, 100, lo, hi], st.integers(lo, hi))
    if k is Kind.DECIMAL:
        assert t.precision is not None and t.scale is not None
        lim = 10**t.precision - 1
        n = _pool([-100, -1, 0, 1, 50, 100, -lim, lim], st.integers(-lim, lim))
        return n.map(lambda i, s=t.scale: Decimal(f"{i}E-{s}"))
    if k is Kind.FLOAT64:
        return _pool(FLOATS, st.floats(allow_nan=True))
    if k is Kind.FLOAT32:
        return _pool(FLOATS, st.floats(width=32))
    if k is Kind.VARCHAR:
        return _pool(STRINGS, st.text("abé\x7f😀", max_size=4))
    if k is Kind.BLOB:
        return _pool(BLOBS, st.binary(max_size=3))
    if k is Kind.BOOLEAN:
        return st.booleans()
    if k is Kind.DATE:
        return _pool([-1, 0, 1, 2, 10], st.integers(-400, 400))
    return _pool(TIMES, st.integers(-(10**12), 10**12))


def literal_values(t: ShreddedType, pool: list[Any]) -> st.SearchStrategy[LiteralValue]:
    """Literals for a term of target type t: the stored values, their neighbours, inexact ones."""
    k = t.kind
    nums = [v for v in pool if isinstance(v, int | Decimal) and not isinstance(v, bool)]
    floats = [v for v in pool if isinstance(v, float) and not math.isnan(v)]
    near_pool: st.SearchStrategy[Any] | None = None
    if k in INTEGER_RANGES or k is Kind.DECIMAL:
        base = _pool(
            [
                -2,
                -1,
                0,
                1,
                2,
                100,
                127,
                128,
                -129,
                2**15,
                2**31,
                -(2**63),
                2**63 - 1,
                Decimal("0.5"),
                Decimal("-0.01"),
                Decimal("1.005"),
            ],
            st.integers(-3000, 3000).map(lambda i: Decimal(i) / 10),
        )
        if nums:
            near = st.sampled_from(nums)
            near_pool = st.one_of(
                near,
                near.map(lambda v: v + Decimal("0.5")),
                near.map(lambda v: v + 1),
                near.map(lambda v: v - 1),
            )
    elif k in (Kind.FLOAT32, Kind.FLOAT64):
        base = _pool(
            [-math.inf, -1.0, -0.0, 0.0, 0.5, 1.0, 2.5, math.inf, 1e39, Decimal("0.1"), 16777217],
            st.floats(-10, 10),
        )
        if floats:
            near_pool = st.sampled_from(floats)
    elif k is Kind.VARCHAR:
        base = _pool(STRINGS, st.text("abé\x7f😀", max_size=4))
        strs = [v for v in pool if isinstance(v, str)]
        if strs:
            near_pool = st.sampled_from(strs)
    elif k is Kind.BLOB:
        base = _pool(BLOBS, st.binary(max_size=3))
        bins = [v for v in pool if isinstance(v, bytes)]
        if bins:
            near_pool = st.sampled_from(bins)
    elif k is Kind.BOOLEAN:
        return st.booleans()
    else:
        ints = [v for v in pool if isinstance(v, int) and not isinstance(v, bool)]
        if k is Kind.DATE:
            base = st.one_of(
                _pool([-1, 0, 1, 2, 10], st.integers(-400, 400)).map(DateLiteral),
                st.sampled_from(TIMES).map(lambda m: TimestampLiteral(m, ntz=False)),
            )
            if ints:
                near_pool = st.sampled_from(ints).map(DateLiteral)
        else:
            ntz = k is Kind.TIMESTAMP
            base = st.one_of(
                _pool(TIMES, st.integers(-(10**12), 10**12)).map(lambda m: TimestampLiteral(m, ntz=ntz)),
                st.sampled_from([-1, 0, 1]).map(DateLiteral),
            )
            if ints:
                near_pool = st.sampled_from(ints).map(lambda m: TimestampLiteral(m, ntz=ntz))
    return st.one_of(base, near_pool, near_pool) if near_pool is not None else base


@dataclass
class PathSpec:
    key: str
    stored: ShreddedType
    json_path: str  # what the predicate addresses
    segments: list[str | None]  # the DuckLake path's segments (None = element)
    variant_path: str
    term: VariantTerm


SHAPES = [
    ("$.{k}", [0], '"{k}"'),
    ("$.{k}[*]", [0, None], '"{k}".element'),
    ("$.{k}[0]", [0, None], '"{k}".element'),
    ("$.{k}[1]", [0, None], '"{k}".element'),
    ("$.{k}[*].x", [0, None, "x"], '"{k}".element."x"'),
]


@st.composite
def path_spec(
    draw: st.DrawFn, key: str, stored_name: str | None = None, shape: str | None = None
) -> PathSpec:
    if stored_name is None:
        stored_name = draw(st.sampled_from(STORED))
    stored = ShreddedType.parse(stored_name)
    options = TARGETS[stored_name]
    target = options[0] if draw(st.booleans()) else draw(st.sampled_from(options))
    shapes = SHAPES if shape is None else SHAPES[:1] if shape == "scalar" else SHAPES[1:]
    jp, segs, vp = draw(st.sampled_from(shapes))
    segments = [key if s == 0 else s for s in segs]
    term = variant("v", jp.format(k=key), target, try_cast=draw(st.booleans()))
    return PathSpec(key, stored, jp.format(k=key), segments, vp.format(k=key), term)


@st.composite
def cell(draw: st.DrawFn, spec: PathSpec) -> Any:
    """A row's value for spec.key: mostly typed, sometimes Variant null or the wrong shape."""
    typed = stored_values(spec.stored).map(lambda v: Typed(spec.stored, v))
    leaf = st.one_of(typed, typed, typed, st.none())
    if spec.segments == [spec.key]:
        return draw(st.one_of(leaf, leaf, leaf, st.just({"x": 1}), st.just([1])))
    element = (
        leaf
        if spec.segments[-1] is None
        else st.one_of(leaf.map(lambda v: {"x": v}), leaf.map(lambda v: {"x": v}), st.just(7))
    )
    return draw(
        st.one_of(st.lists(element, min_size=1, max_size=3), st.lists(element, max_size=3), st.none(), typed)
    )


MISSING = object()


@st.composite
def file_case(
    draw: st.DrawFn, max_paths: int = 2, stored: str | None = None, shape: str | None = None
) -> tuple[list[PathSpec], list[dict[str, Any]], list[PathStats]]:
    specs = [draw(path_spec("a", stored, shape))]
    if max_paths > 1 and draw(st.booleans()):
        specs.append(draw(path_spec("b")))
    rows: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.integers(0, 9)) == 9:
            rows.append({})  # the variant column itself is NULL
            continue
        obj = {}
        for spec in specs:
            v = draw(st.one_of(cell(spec), cell(spec), cell(spec), st.just(MISSING)))
            if v is not MISSING:
                obj[spec.key] = v
        rows.append({"v": obj})
    stats = []
    for spec in specs:
        if draw(st.integers(0, 5)) == 5:
            continue  # not fully shredded in this file: no stats row
        stats.append(
            compute_stats(
                "v",
                spec.variant_path,
                spec.segments,
                spec.stored,
                rows,
                drop_min=draw(st.integers(0, 4)) == 4,
                drop_max=draw(st.integers(0, 4)) == 4,
                unknown_nan=draw(st.integers(0, 3)) == 3,
            )
        )
    return specs, rows, stats


def pool_of(rows: list[dict[str, Any]]) -> list[Any]:
    out: list[Any] = []

    def walk(x: Any) -> None:
        if isinstance(x, Typed):
            out.append(x.value)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)
        elif isinstance(x, list):
            for y in x:
                walk(y)

    for r in rows:
        walk(r)
    return out


@st.composite
def leaf_for(draw: st.DrawFn, spec: PathSpec, pool: list[Any]) -> BooleanExpression:
    term = spec.term
    ops = [Op.EQ, Op.NOT_EQ, Op.LT, Op.LT_EQ, Op.GT, Op.GT_EQ, Op.IN, Op.NOT_IN, Op.IS_NULL, Op.NOT_NULL]
    if term.target.is_float:
        ops += [Op.IS_NAN, Op.NOT_NAN]
    op = draw(st.sampled_from(ops))
    lits = literal_values(term.target, pool)
    try:
        if op in (Op.IN, Op.NOT_IN):
            return in_list(op, term, draw(st.lists(lits, max_size=4)))
        if op in (Op.IS_NULL, Op.NOT_NULL, Op.IS_NAN, Op.NOT_NAN):
            return unary(op, term)
        return compare(op, term, draw(lits))
    except InvalidPredicateError:
        return unary(Op.NOT_NULL, term)


@st.composite
def raw_tree(draw: st.DrawFn, specs: list[PathSpec], pool: list[Any], depth: int = 3) -> BooleanExpression:
    """A tree assembled from raw nodes (Not kept where written) so rewriting is tested too."""
    kind = draw(st.sampled_from(["leaf", "leaf", "and", "or", "not"] if depth > 0 else ["leaf"]))
    if kind == "leaf":
        return draw(leaf_for(draw(st.sampled_from(specs)), pool))
    if kind == "not":
        return Not(draw(raw_tree(specs, pool, depth - 1)))
    children = tuple(draw(st.lists(raw_tree(specs, pool, depth - 1), min_size=1, max_size=3)))
    return And(children) if kind == "and" else Or(children)


@pytest.mark.parametrize("shape", ["scalar", "element"])
@pytest.mark.parametrize("stored", STORED)
@PER_TYPE
@given(data=st.data())
def test_one_leaf_never_prunes_a_matching_row(stored: str, shape: str, data: st.DataObject) -> None:
    """One path of one stored type and shape, one leaf (or its negation): each rule gets its
    share of the examples."""
    specs, rows, stats = data.draw(file_case(max_paths=1, stored=stored, shape=shape))
    expr = data.draw(leaf_for(specs[0], pool_of(rows)))
    if data.draw(st.integers(0, 3)) == 3:
        expr = Not(expr)
    verdict = evaluate(expr, stats_by_path(stats))
    if not verdict.might_match:
        for row in rows:
            assert not may_select(expr, row), f"pruned ({verdict.reason}) but row {row} may match {expr!r}"


@SETTINGS
@given(st.data())
def test_a_pruned_file_never_holds_a_matching_row(data: st.DataObject) -> None:
    specs, rows, stats = data.draw(file_case())
    expr = data.draw(raw_tree(specs, pool_of(rows)))
    verdict = evaluate(expr, stats_by_path(stats))
    if not verdict.might_match:
        for row in rows:
            assert not may_select(expr, row), f"pruned ({verdict.reason}) but row {row} may match {expr!r}"


@FEW
@given(st.data())
def test_not_pushdown_is_exact_in_three_valued_logic(data: st.DataObject) -> None:
    specs, rows, _ = data.draw(file_case())
    expr = data.draw(raw_tree(specs, pool_of(rows)))
    pushed = rewrite_not(expr)
    negated = not_(pushed)
    for row in rows:
        before = possible(expr, row)
        assert possible(pushed, row) == before
        assert possible(negated, row) == {None if x is None else not x for x in before}


@FEW
@given(st.data())
def test_trees_survive_json_and_sql(data: st.DataObject) -> None:
    specs, rows, _ = data.draw(file_case())
    expr = rewrite_not(data.draw(raw_tree(specs, pool_of(rows))))
    assert parse_json(to_json(expr)) == expr
    assert parse_sql(to_sql(expr)) == expr


# --- literal conversion against exact arithmetic ----------------------------------------------

NUMERIC_TARGETS = ["tinyint", "smallint", "int", "bigint", "decimal(5,2)", "decimal(38,0)", "float", "double"]


@SETTINGS
@given(
    target=st.sampled_from(NUMERIC_TARGETS),
    op=st.sampled_from([Op.EQ, Op.NOT_EQ, Op.LT, Op.LT_EQ, Op.GT, Op.GT_EQ]),
    literal=st.one_of(
        st.integers(-(2**70), 2**70),
        st.integers(-400, 400),
        st.integers(-40000, 40000).map(lambda i: Decimal(i) / 1000),
        st.decimals(allow_nan=False, allow_infinity=False, places=4, min_value=-(10**6), max_value=10**6),
    ),
    data=st.data(),
)
def test_converted_literals_compare_like_spark(
    target: str, op: Op, literal: int | Decimal, data: st.DataObject
) -> None:
    """``term op literal`` after conversion selects exactly the values Spark's comparison does."""
    term = variant("v", "$.a", target)
    t = term.target
    value: Any
    if t.is_float:
        width = 32 if t.kind is Kind.FLOAT32 else 64
        value = data.draw(st.floats(width=width))
        if isinstance(literal, int):
            lit: Any = nearest_float32(Fraction(literal)) if width == 32 else float(literal)
            if width == 32 and Fraction(lit) != literal:
                # Spark's modes disagree (float without ANSI, double with it): never a bound.
                with pytest.raises(InvalidPredicateError, match="modes compare it differently"):
                    compare(op, term, literal)
                return
        else:
            lit = float(literal)  # a decimal literal is compared in double
        c = spark_cmp(value, lit)
    else:
        if t.kind is Kind.DECIMAL:
            assert t.precision is not None and t.scale is not None
            lim = 10**t.precision - 1
            value = Decimal(
                f"{data.draw(st.one_of(st.integers(-lim, lim), st.integers(-9999, 9999)))}E-{t.scale}"
            )
        else:
            lo, hi = INTEGER_RANGES[t.kind]
            value = data.draw(
                st.one_of(
                    st.integers(lo, hi), st.integers(max(lo, -400), min(hi, 400)), st.sampled_from([lo, hi])
                )
            )
        # Integers and decimals are compared exactly (as decimals) by Spark.
        c = (Fraction(value) > Fraction(literal)) - (Fraction(value) < Fraction(literal))
    expected = {
        Op.EQ: c == 0,
        Op.NOT_EQ: c != 0,
        Op.LT: c < 0,
        Op.LT_EQ: c <= 0,
        Op.GT: c > 0,
        Op.GT_EQ: c >= 0,
    }[op]
    expr = compare(op, term, literal)
    row = {"v": {"a": Typed(t, value)}}
    assert possible(expr, row) == {expected}, (target, op, literal, value, expr)
    # Still NULL on NULL after the rewrite, but where Spark folds the comparison to a constant
    # (an integer term ordered against a literal beyond int64), which holds for NULL too.
    folded = (
        t.kind in INTEGER_RANGES
        and op in (Op.LT, Op.LT_EQ, Op.GT, Op.GT_EQ)
        and not INT64_MIN <= literal <= INT64_MAX
    )
    assert possible(expr, {"v": {}}) == ({expected} if folded else {None}), (target, op, literal, expr)
