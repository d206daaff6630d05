"""A file's short reason (the playground's and ``plan_files``' words) names the deciding bound
once, however many comparisons of an OR or AND agree: "max 20 < 100 and 199 more"."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest

from service.pruning.conditions import AnyOf, compile_expression
from service.pruning.evaluator import (
    MAX_SHORT_GROUPS,
    ShortReasons,
    _joined,
    evaluate,
    interpret,
    stats_by_path,
)
from service.pruning.parse_sql import parse_sql
from service.stats.model import PathStats
from tests.pruning.reference import stats_row as S

A = "variant_get(v, '$.a', 'bigint')"
B = "variant_get(v, '$.b', 'bigint')"
ROWS = [S('"a"', "int64", 5, 0, 10, 20), S('"b"', "int64", 5, 0, 0, 3)]


def test_an_or_of_200_comparisons_names_the_bound_once() -> None:
    sql = " OR ".join(f"{A} = {100 + 7 * k}" for k in range(200))
    assert len(sql) > 5_000
    v = evaluate(parse_sql(sql), stats_by_path(ROWS))
    assert not v.might_match
    assert v.short == "max 20 < 100 and 199 more"
    # The full reason (explain) still lists every comparison.
    assert v.reason.count("max 20 < ") == 200


def test_two_paths_each_name_their_bound_once() -> None:
    sql = " OR ".join(f"({A} = {100 + k} AND {B} > {10 + k})" for k in range(50))
    v = evaluate(parse_sql(sql), stats_by_path(ROWS))
    assert not v.might_match
    assert v.short == "$.a: max 20 < 100 and 49 more"
    sql = " OR ".join(f"{A} = {100 + k} OR {B} > {10 + k}" for k in range(50))
    v = evaluate(parse_sql(sql), stats_by_path(ROWS))
    assert v.short == "$.a: max 20 < 100 and 49 more; $.b: max 3 <= 10 and 49 more"


def test_joined_keeps_a_few_kinds_and_counts_the_rest() -> None:
    assert _joined(["x 1", "", "x 1", "y"]) == "x 1; y"
    assert _joined(["max 5 < 7", "max 5 < 9"]) == "max 5 < 7 and 1 more"
    kinds = [f"kind{i} is out" for i in range(MAX_SHORT_GROUPS + 2)]
    assert _joined(kinds) == "; ".join(kinds[:MAX_SHORT_GROUPS]) + "; and 2 more"
    assert _joined(["a b 1", "a b 2", *kinds]) == "a b 1 and 1 more; kind0 is out; kind1 is out; and 3 more"


#: The dashboard bench's 5 KB OR of 200 comparisons (``bench/dashboard.py``'s ``WIDE_OR``).
WIDE_OR = " OR ".join(f"variant_get(v, '$.user.id', 'bigint') = {9_000_000 + 7 * k}" for k in range(200))
F = "variant_get(v, '$.f', 'double')"
A2 = "variant_get(v, '$.user.id', 'bigint')"
N = "variant_get(v, '$.n', 'string')"
#: Files (each its rows) meeting every branch of a leaf's words: below, above and within the
#: literals, all null, a NaN, two rows of one path, a type the literal does not serve (string
#: bounds, an int32 read through a cast), bounds of a wrong Python type, a path missing.
FILES = [
    [S('"user"."id"', "int64", 5, 0, -185, 1100)],
    [S('"user"."id"', "int64", 5, 0, 9_500_000, 9_600_000)],
    [S('"user"."id"', "int64", 5, 0, 9_000_000, 9_000_010)],
    [S('"user"."id"', "int64", 0, 5, None, None)],
    [S('"user"."id"', "int64", 5, 0, 1, 2), S('"user"."id"', "varchar", 5, 0, "a", "b")],
    [S('"user"."id"', "int32", 5, 0, 3, 9)],
    [S('"user"."id"', "varchar", 5, 0, "9000000", "9000007")],
    [S('"user"."id"', "int64", 5, 0, "x", "y")],
    [S('"f"', "float64", 5, 0, 1.5, 2.5, None), S('"n"', "varchar", 5, 0, "a b", "a c")],
    [S('"f"', "float64", 5, 0, 1.5, 2.5, False), S('"n"', "varchar", 5, 0, "zz", "zz (int64)")],
    [],
]
PREDICATES = [
    WIDE_OR,
    WIDE_OR.replace("= ", "> "),
    " OR ".join(f"variant_get(v, '$.user.id', 'int') = {k}" for k in range(20)),
    " OR ".join(f"variant_get(v, '$.user.id', 'string') = '{9_000_000 + k}'" for k in range(20)),
    " OR ".join(f"({F} > {k}.5 OR {N} < 'a {k}' OR {N} >= 'zz (int64)')" for k in range(20)),
    f"{F} = 0 OR isnan({F}) OR {N} = 'q' OR variant_get(v, '$.user.id', 'bigint') IN (1, 2, 9000000)",
    f"({F} > 1 AND {N} = 'a') OR variant_get(v, '$.user.id', 'bigint') IS NULL",
    # One leaf of two requested types (same-path conjuncts merged): a row serves one of them.
    " OR ".join(f"({A2} > {k} AND {A2.replace('bigint', 'double')} < 9e6)" for k in range(10)),
    " OR ".join(f"({A2} > {k} AND {A2.replace('bigint', 'string')} > 'x')" for k in range(10)),
]


def test_a_pages_short_reasons_are_the_evaluators() -> None:
    """``ShortReasons`` (what ``plan_files`` lists) says, file by file, exactly what
    ``interpret`` says, one object reused across the files as a page reuses it."""
    for sql in PREDICATES:
        condition = compile_expression(parse_sql(sql))
        reasons = ShortReasons(condition)
        for rows in FILES + FILES[::-1]:
            want = interpret(condition, stats_by_path(rows))
            got = reasons.of(stats_by_path(rows))
            assert (got.might_match, got.short) == (want.might_match, want.short), (sql[:80], rows)


def test_the_5_kb_or_reads_as_before() -> None:
    """The bench's 5 KB OR over two of its files: the words the playground showed before the
    shortcut (as the dashboard round 3 listed them)."""
    reasons = ShortReasons(compile_expression(parse_sql(WIDE_OR)))
    below = reasons.of(stats_by_path([S('"user"."id"', "int64", 5, 0, -185, 1100)]))
    above = reasons.of(stats_by_path([S('"user"."id"', "int64", 5, 0, 9_002_000, 9_002_001)]))
    hit = reasons.of(stats_by_path([S('"user"."id"', "int64", 5, 0, 9_000_010, 9_000_020)]))
    assert (below.might_match, below.short) == (False, "max 1100 < 9000000 and 199 more")
    assert (above.might_match, above.short) == (False, "min 9002000 > 9000000 and 199 more")
    assert (hit.might_match, hit.short) == (True, "bounds [9000010, 9000020] admit it")


def _random_or(rng: random.Random) -> str:
    """An OR of comparisons of one path (any operator, repeated literals), at times with a
    string, float or decimal term, or another path among them."""
    kind = rng.choice(["bigint", "bigint", "string", "double", "decimal(10,2)"])
    term = f"variant_get(v, '$.a', '{kind}')"
    mixed = rng.random() < 0.3  # an IN list, another path, strings with blanks: not read in bulk
    ops = ["=", "<", "<=", ">", ">=", *(["IN"] if mixed else [])]

    def literal() -> str:
        k = rng.randint(-5, 40)
        if kind == "string":
            return rng.choice([f"'{k}'", *([f"'a {k}'", "'zz (varchar)'", "''"] if mixed else [])])
        return str(k) if kind == "bigint" else f"{k}.{rng.randint(0, 9)}{rng.randint(0, 9)}"

    leaves = []
    for _ in range(rng.randint(1, 40)):
        op = rng.choice(ops)
        if mixed and rng.random() < 0.05:
            leaves.append(f"{B} = {rng.randint(0, 9)}")
        else:
            leaves.append(f"{term} IN ({literal()}, {literal()})" if op == "IN" else f"{term} {op} {literal()}")
    return " OR ".join(leaves)


def _random_rows(rng: random.Random, sql: str) -> list[PathStats]:
    kind = {"string": "varchar", "double": "float64", "decimal(10,2)": "decimal(10,2)"}.get(
        sql.split("'")[3], "int64"
    )

    def bound() -> object:
        k = rng.randint(-8, 45)
        if kind == "varchar":
            return rng.choice([str(k), f"a {k}", "zz (varchar)"])
        if kind == "float64":
            return float(k) + rng.choice([0.0, 0.25])
        return Decimal(f"{k}.{rng.randint(0, 99):02d}") if kind.startswith("decimal") else k

    lo, hi = sorted([bound(), bound()])  # type: ignore[type-var]
    if rng.random() < 0.1:
        lo = None
    if rng.random() < 0.1:
        hi = None
    nan = rng.choice([None, False, True]) if kind == "float64" else None
    rows = [S('"a"', kind, rng.choice([0, 5, 5, 5]), rng.choice([0, 0, 2]), lo, hi, nan)]
    if rng.random() < 0.1:
        rows.append(S('"a"', "varchar", 5, 0, "a", "b"))
    return rows


@pytest.mark.parametrize("seed", range(4))
def test_the_or_of_ranges_read_in_bulk_says_what_the_evaluator_says(seed: int) -> None:
    """``ShortReasons.any_of_ranges`` (an OR of one path's ranges, from the leaves' bounds) gives
    ``interpret``'s verdict and words on random ORs and files; and it answers most of them."""
    rng = random.Random(seed)
    bulk = 0
    for _ in range(60):
        sql = _random_or(rng)
        condition = compile_expression(parse_sql(sql))
        reasons = ShortReasons(condition)
        for _ in range(8):
            stats = stats_by_path(_random_rows(rng, sql))
            want = interpret(condition, stats)
            got = reasons.of(stats)
            assert (got.might_match, got.short) == (want.might_match, want.short), (sql, stats)
            if isinstance(condition, AnyOf):
                reasons._interpreter.stats = stats
                bulk += reasons.any_of_ranges(condition, reasons._interpreter) is not None
    assert bulk >= 100
