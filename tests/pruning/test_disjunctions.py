"""service/pruning/disjunctions.py: an OR of one key's points planned as one point set (pure: no
database; tests/catalog/test_planner_soundness.py checks the planner's answers with and without
it on both backends)."""

from __future__ import annotations

import random
from collections.abc import Callable
from decimal import Decimal

from service.pruning.conditions import (
    AnyOf,
    AnyPoint,
    Condition,
    HasNulls,
    HasValues,
    Keep,
    LeafCondition,
    MayHaveNaN,
    Never,
    RangeMayContain,
    compile_expression,
)
from service.pruning.conjunctions import merge_conjunctions
from service.pruning.disjunctions import merge_leaves, merge_points, or_tests
from service.pruning.evaluator import interpret, stats_by_path
from service.pruning.parse_sql import parse_sql
from service.stats.model import PathStats
from service.values import Bound, ShreddedType
from tests.pruning.reference import stats_row

STORED = [ShreddedType.parse(n) for n in ("int8", "int16", "int32", "int64", "float64", "varchar", "decimal(9,2)")]


def _leaves(sql: str) -> list[Condition]:
    c = merge_conjunctions(compile_expression(parse_sql(sql)))
    return list(c.children) if isinstance(c, AnyOf) else [c]


def test_tests_or_into_one_point_set() -> None:
    p = RangeMayContain(5, 5)
    assert or_tests([p, RangeMayContain(9, 9), Never(), AnyPoint((5, 7))]) == AnyPoint((5, 9, 7))
    assert or_tests([Never(), Never()]) == Never()
    # A type no leaf can bound: every row with values might match, whatever the points say.
    assert or_tests([p, HasValues(), Never()]) == HasValues()
    assert or_tests([p, Keep()]) == Keep()
    # Anything else has no single test: a range, a one-sided bound, NaN, a test TRUE without values.
    assert or_tests([p, RangeMayContain(1, 3)]) is None
    assert or_tests([p, RangeMayContain(5, None)]) is None
    assert or_tests([p, RangeMayContain(5, 5, nan_matches=True)]) is None
    assert or_tests([RangeMayContain(float("nan"), float("nan"))]) is None
    assert or_tests([p, MayHaveNaN()]) is None
    assert or_tests([HasValues(), HasNulls()]) is None  # a row of nulls only passes HasNulls


def test_an_or_of_one_id_becomes_one_leaf_in_the_first_one_s_place() -> None:
    a = "variant_get(v, '$.a', 'bigint')"
    kids = _leaves(f"{a} = 5 OR variant_get(v, '$.b', 'bigint') > 3 OR {a} = 300 OR {a} IN (7, 5)")
    int8, int64 = ShreddedType.parse("int8"), ShreddedType.parse("int64")
    out = merge_points(kids, lambda column, path: [int8, int64])
    assert len(out) == 2 and out[1] is kids[1]
    merged = out[0]
    assert isinstance(merged, LeafCondition) and merged.variant_path == kids[0].variant_path  # type: ignore[union-attr]
    assert merged.test_for(int64) == AnyPoint((5, 300, 7))
    assert merged.test_for(int8) == AnyPoint((5, 7))  # 300 is no int8
    assert "= 300" in str(merged.label)
    # A range among the leaves of the key: nothing merges, the children come back as they were.
    ranged = _leaves(f"{a} = 5 OR {a} > 300")
    assert merge_points(ranged, lambda column, path: [int64]) == ranged


def _random_leaf(rng: random.Random) -> str:
    target = rng.choice(["bigint", "int", "smallint", "double", "string", "decimal(9,2)"])
    term = f"variant_get(v, '$.a', '{target}')"

    def lit() -> str:
        if target == "string":
            return rng.choice(["'5'", "'40'", "'x'", "'007'", "'-3'"])
        if target == "double":
            return rng.choice(["5", "2.5", "40", "-3", "1e3"])
        if target == "decimal(9,2)":
            return rng.choice(["5", "2.50", "40.25", "-3"])
        return str(rng.randint(-20, 300))  # past int8 too

    r = rng.random()
    if r < 0.25:
        return f"{term} IN ({', '.join(lit() for _ in range(rng.randint(1, 4)))})"
    if r < 0.3:
        return f"{term} IS NULL"
    if r < 0.4 and target != "string":  # a range of one leaf (merged conjunction), kept apart
        lo, hi = sorted((lit(), lit()), key=float)
        return f"({term} >= {lo} AND {term} <= {hi})"
    op = "=" if rng.random() < 0.85 else rng.choice(["<", ">=", "<>"])
    return f"{term} {op} {lit()}"


def _random_row(rng: random.Random, stored: ShreddedType) -> PathStats:
    vc = rng.choice([0, 3, 10])
    values: list[Bound]
    if stored.name == "varchar":
        values = [rng.choice(["-3", "007", "40", "5", "x", "a"]) for _ in range(2)]
    elif stored.name == "float64":
        values = [rng.choice([-3.0, 2.5, 5.0, 40.0, 1000.0, 7.25]) for _ in range(2)]
    elif stored.name.startswith("decimal"):
        values = [Decimal(rng.randint(-500, 5000)).scaleb(-2) for _ in range(2)]
    else:
        values = [rng.randint(-30, 127) if stored.name == "int8" else rng.randint(-30, 310) for _ in range(2)]
    lo, hi = sorted(values)
    bounded = rng.random() < 0.9
    return stats_row('"a"', stored, vc, 10 - vc, lo if bounded else None, hi if bounded else None)


def _types_of(stored: list[ShreddedType]) -> Callable[[str, str | None], list[ShreddedType]]:
    return lambda column, path: stored


def test_the_merged_leaf_judges_every_row_as_the_or_does() -> None:
    """Random ORs over one path (equalities and IN lists of any target, casts included, with a few
    other comparisons, ranges and IS NULL that must stay apart), random stats rows of the planned types: the merged
    disjuncts keep exactly the files the OR keeps."""
    rng = random.Random(36)
    merged_any = pruned = 0
    for _ in range(600):
        sql = " OR ".join(_random_leaf(rng) for _ in range(rng.randint(2, 6)))
        kids = _leaves(sql)
        stored = rng.sample(STORED, rng.randint(1, 3))
        if rng.random() < 0.5 and STORED[3] not in stored:  # int64: every integer target bounds it
            stored.append(STORED[3])
        out = merge_points(kids, _types_of(stored))
        merged_any += len(out) < len(kids)
        for _ in range(12):
            rows = [_random_row(rng, st) for st in rng.sample(stored, rng.randint(0, len(stored)))]
            stats = stats_by_path(rows)
            want = interpret(AnyOf(tuple(kids)), stats).might_match
            pruned += not want
            got = interpret(out[0] if len(out) == 1 else AnyOf(tuple(out)), stats).might_match
            assert got == want, f"{sql} over {rows}: merged {got}, the OR {want}"
    assert merged_any > 200 and pruned > 1000  # (the rows are read: a file without one is kept)


def test_leaves_that_reject_nulls_differently_stay_apart() -> None:
    """``IS NULL`` is TRUE where the path is absent, ``= 5`` is not: the files a shape proves
    lacking the key are dropped for one and kept for the other, so the two never merge, even where
    every stored type's tests do (a string path: Keep OR HasValues is Keep)."""
    for sql in ("{a} = 5 OR {a} IS NULL", "{a} IS NULL OR {a} = 5"):
        kids = _leaves(sql.format(a="variant_get(v, '$.a', 'bigint')"))
        leaves = [k for k in kids if isinstance(k, LeafCondition)]
        assert len(leaves) == 2
        assert merge_leaves(leaves, [ShreddedType.parse("varchar")]) is None
        assert merge_leaves(leaves, [ShreddedType.parse("int64")]) is None
