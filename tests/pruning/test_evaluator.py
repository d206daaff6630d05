"""The per-file evaluator, one table row per rule: (stats rows, predicate, MIGHT/CANNOT)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import pytest

from service.errors import InvalidPredicateError
from service.pruning.conditions import (
    AnyPoint,
    Constant,
    HasNulls,
    HasValues,
    Keep,
    LeafCondition,
    Never,
    NotAllIn,
    RangeMayContain,
    compile_expression,
    usable_types,
)
from service.pruning.evaluator import (
    CANNOT_MATCH,
    MIGHT_MATCH,
    FileEvaluator,
    Verdict,
    evaluate,
    stats_by_path,
)
from service.pruning.expressions import FALSE, TRUE
from service.pruning.literals import parse_date_text
from service.pruning.parse_sql import parse_sql
from service.stats.model import PathStats
from service.values import ShreddedType, truncate_lower, truncate_upper
from tests.pruning.reference import stats_row as S

D = Decimal
SKIP, READ = CANNOT_MATCH, MIGHT_MATCH


@dataclass(frozen=True)
class Case:
    why: str
    rows: tuple[PathStats, ...]
    sql: str
    expected: bool

    def __str__(self) -> str:
        return f"Should {'read' if self.expected else 'skip'}: {self.why}"


def case(why: str, rows: list[PathStats] | PathStats, sql: str, expected: bool) -> Case:
    return Case(why, tuple(rows) if isinstance(rows, list) else (rows,), sql, expected)


def vg(path: str, type_: str, column: str = "v", fn: str = "variant_get") -> str:
    return f"{fn}({column}, '{path}', '{type_}')"


A = vg("$.a", "bigint")
I64 = S('"a"', "int64", 5, 0, 10, 20)
SEVEN = S('"a"', "int64", 4, 0, 7, 7)
LONG = "x" * 300 + "yz"
LONG_ROW = S(
    '"s"',
    "varchar",
    2,
    0,
    truncate_lower(ShreddedType.parse("varchar"), LONG),
    truncate_upper(ShreddedType.parse("varchar"), LONG),
)
F = vg("$.f", "double")


def fl(
    lo: float | None, hi: float | None, nan: bool | None, vc: int = 5, type_: str = "float64"
) -> PathStats:
    return S('"f"', type_, vc, 0, lo, hi, nan)


CASES = [
    # --- no stats row: the path is not fully shredded in this file -----------------------------
    case("no stats row for the path", S('"b"', "int64", 5, 0, 10, 20), f"{A} = 5", READ),
    case("stats only for another column", S('"a"', "int64", 5, 0, 10, 20, column="w"), f"{A} = 5", READ),
    case("no stats at all", [], f"{A} = 5", READ),
    # --- exact type, ranges ----------------------------------------------------------------------
    case("5 is below min 10", I64, f"{A} = 5", SKIP),
    case("25 is above max 20", I64, f"{A} = 25", SKIP),
    case("15 lies in [10, 20]", I64, f"{A} = 15", READ),
    case("min is inclusive", I64, f"{A} = 10", READ),
    case("max is inclusive", I64, f"{A} = 20", READ),
    case("nothing below min 10", I64, f"{A} < 10", SKIP),
    case("min 10 satisfies <= 10", I64, f"{A} <= 10", READ),
    case("nothing above max 20", I64, f"{A} > 20", SKIP),
    case("max 20 satisfies >= 20", I64, f"{A} >= 20", READ),
    case("literal on the left is flipped", I64, f"20 < {A}", SKIP),
    case("range entirely above the bounds", I64, f"{A} BETWEEN 21 AND 30", SKIP),
    case("range entirely below the bounds", I64, f"{A} BETWEEN 0 AND 9", SKIP),
    case("range overlapping the bounds", I64, f"{A} BETWEEN 5 AND 10", READ),
    case("NOT BETWEEN covering the bounds", I64, f"{A} NOT BETWEEN 0 AND 30", SKIP),
    case("NOT BETWEEN leaving values", I64, f"{A} NOT BETWEEN 0 AND 15", READ),
    case("no IN value within [10, 20]", I64, f"{A} IN (1, 5, 25)", SKIP),
    case("one IN value within [10, 20]", I64, f"{A} IN (1, 15)", READ),
    case("!= with min < max", I64, f"{A} != 15", READ),
    case("NOT IN with min < max", I64, f"{A} NOT IN (10, 20)", READ),
    case("every value is 7 (min = max)", SEVEN, f"{A} != 7", SKIP),
    case("7 differs from 8", SEVEN, f"{A} != 8", READ),
    case("every value is 7, which is in the list", SEVEN, f"{A} NOT IN (7, 8)", SKIP),
    case("7 is not in the list", SEVEN, f"{A} NOT IN (8, 9)", READ),
    case("bounds unknown", S('"a"', "int64", 5, 0, None, None), f"{A} = 5", READ),
    case("only max known, 5 below min unknown", S('"a"', "int64", 5, 0, None, 20), f"{A} = 5", READ),
    case("only max known, 25 above it", S('"a"', "int64", 5, 0, None, 20), f"{A} = 25", SKIP),
    # --- literals no target value equals ---------------------------------------------------------
    case("no bigint equals 42.5, whatever the stats", [], f"{A} = 42.5", SKIP),
    case("no tinyint equals 300", [], f"{vg('$.a', 'tinyint')} = 300", SKIP),
    case(
        "every tinyint is < 300 (same as IS NOT NULL)",
        S('"a"', "int8", 5, 0, 1, 2),
        f"{vg('$.a', 'tinyint')} < 300",
        READ,
    ),
    case("x < 300 needs a value", S('"a"', "int8", 0, 5, None, None), f"{vg('$.a', 'tinyint')} < 300", SKIP),
    case("bigint < 42.5 is <= 42, max 20", I64, f"{A} < 42.5", READ),
    case("bigint > 20.5 is >= 21, max 20", I64, f"{A} > 20.5", SKIP),
    case("NOT (= 42.5) is TRUE for every value", I64, f"NOT ({A} = 42.5)", READ),
    case("NOT (= 42.5) needs a value", S('"a"', "int64", 0, 5, None, None), f"NOT ({A} = 42.5)", SKIP),
    # --- integer widening: narrower signed stats serve a wider target ----------------------------
    case("int8 stats cannot hold 300", S('"a"', "int8", 5, 0, None, None), f"{A} = 300", SKIP),
    case("every int8 is < 300", S('"a"', "int8", 5, 0, None, None), f"{A} < 300", READ),
    case("no int8 is > 300", S('"a"', "int8", 5, 0, None, None), f"{A} > 300", SKIP),
    case("every int8 is >= -300", S('"a"', "int8", 5, 0, None, None), f"{A} >= -300", READ),
    case("no int8 is < -300", S('"a"', "int8", 5, 0, None, None), f"{A} < -300", SKIP),
    case(
        "int16 max 1000 serves an int target",
        S('"a"', "int16", 5, 0, 0, 1000),
        f"{vg('$.a', 'int')} > 2000",
        SKIP,
    ),
    case("int16 range admits 500", S('"a"', "int16", 5, 0, 0, 1000), f"{vg('$.a', 'int')} = 500", READ),
    case(
        "int32 stats serve a smallint target: the narrowing cast keeps the value or fails",
        S('"a"', "int32", 5, 0, 0, 10),
        f"{vg('$.a', 'smallint')} = 50",
        SKIP,
    ),
    case(
        "int64 stats serve an int target",
        S('"a"', "int64", 5, 0, 0, 10),
        f"{vg('$.a', 'int')} = 50",
        SKIP,
    ),
    case(
        "int64 range admitting the int literal",
        S('"a"', "int64", 5, 0, 0, 10),
        f"{vg('$.a', 'int')} = 5",
        READ,
    ),
    case(
        "int64 values all beyond int: every cast fails, nothing is <= 10",
        S('"a"', "int64", 5, 0, 2**40, 2**41),
        f"{vg('$.a', 'int')} <= 10",
        SKIP,
    ),
    case(
        "int64 values partly within int",
        S('"a"', "int64", 5, 0, -(2**40), 2**41),
        f"{vg('$.a', 'int')} <= 10",
        READ,
    ),
    case(
        "int64 asked as tinyint: 200..300 never fits",
        S('"a"', "int64", 5, 0, 200, 300),
        f"{vg('$.a', 'tinyint')} > 0",
        SKIP,
    ),
    case(
        "int64 asked as double: max 100 is not above 100.5",
        S('"a"', "int64", 5, 0, 0, 100),
        f"{vg('$.a', 'double')} > 100.5",
        SKIP,
    ),
    case(
        "int64 asked as double: 2**53 + 1 rounds to 2**53",
        S('"a"', "int64", 5, 0, 2**53 + 1, 2**53 + 1),
        f"{vg('$.a', 'double')} = 9007199254740992.0",
        READ,
    ),
    case(
        "int64 asked as double: -0.0 equals 0",
        S('"a"', "int64", 5, 0, 0, 0),
        f"{vg('$.a', 'double')} = -0.0D",
        READ,
    ),
    case(
        "int64 asked as double: 0 is not above -0.0",
        S('"a"', "int64", 5, 0, -5, 0),
        f"{vg('$.a', 'double')} > -0.0D",
        SKIP,
    ),
    case(
        "int64 asked as double: an integer is never NaN",
        S('"a"', "int64", 5, 0, -5, 0),
        f"isnan({vg('$.a', 'double')})",
        SKIP,
    ),
    case(
        "int64 asked as double: nothing is above +inf",
        S('"a"', "int64", 5, 0, -(2**63), 2**63 - 1),
        f"{vg('$.a', 'double')} > CAST('Infinity' AS DOUBLE)",
        SKIP,
    ),
    case(
        "int64 asked as float: 2**24 + 1 rounds to 2**24 (ties to even)",
        S('"a"', "int64", 5, 0, 2**24 + 1, 2**24 + 1),
        f"{vg('$.a', 'float')} = 16777216",
        READ,
    ),
    case(
        "int64 asked as float: 2**24 + 3 rounds to 2**24 + 4",
        S('"a"', "int64", 5, 0, 2**24 + 3, 2**24 + 3),
        f"{vg('$.a', 'float')} < 16777218",
        SKIP,
    ),
    case(
        "int64 asked as double: IS NULL reads the null count (the cast never fails)",
        S('"a"', "int64", 5, 0, 0, 9),
        f"{vg('$.a', 'double')} IS NULL",
        SKIP,
    ),
    case(
        "int64 asked as int: IS NULL is TRUE where try_variant_get fails: kept",
        S('"a"', "int64", 5, 0, 0, 2**40),
        f"{vg('$.a', 'int', fn='try_variant_get')} IS NULL",
        READ,
    ),
    case(
        "decimal(5,3) asked at scale 2: -0.005 rounds to -0.01, away from zero",
        S('"p"', "decimal(5,3)", 5, 0, D("-0.005"), D("-0.005")),
        f"{vg('$.p', 'decimal(10,2)')} < 0",
        READ,
    ),
    case(
        "decimal(5,3) asked at scale 2: -0.004 rounds to 0.00",
        S('"p"', "decimal(5,3)", 5, 0, D("-0.004"), D("0.004")),
        f"{vg('$.p', 'decimal(10,2)')} < 0",
        SKIP,
    ),
    case(
        "int64 asked as decimal(4,1): 1000 does not fit",
        S('"a"', "int64", 5, 0, 1000, 5000),
        f"{vg('$.a', 'decimal(4,1)')} < 999",
        SKIP,
    ),
    case(
        "int64 asked as string: '42' is the text of 42 only",
        S('"a"', "int64", 5, 0, 0, 41),
        f"{vg('$.a', 'string')} = '42'",
        SKIP,
    ),
    case(
        "int64 asked as string: '042' is no integer's text",
        S('"a"', "int64", 5, 0, 0, 100),
        f"{vg('$.a', 'string')} = '042'",
        SKIP,
    ),
    case(
        "int64 asked as string: 42 in range",
        S('"a"', "int64", 5, 0, 0, 100),
        f"{vg('$.a', 'string')} = '42'",
        READ,
    ),
    case(
        "int64 asked as string: a string range does not follow the integers",
        S('"a"', "int64", 5, 0, 0, 100),
        f"{vg('$.a', 'string')} > '9'",
        READ,
    ),
    # --- decimals: same scale, no larger precision -----------------------------------------------
    case(
        "decimal(5,2) max 2.00 serves decimal(10,2)",
        S('"p"', "decimal(5,2)", 5, 0, D("1.00"), D("2.00")),
        f"{vg('$.p', 'decimal(10,2)')} = 3",
        SKIP,
    ),
    case(
        "decimal(5,2) range admits 1.50",
        S('"p"', "decimal(5,2)", 5, 0, D("1.00"), D("2.00")),
        f"{vg('$.p', 'decimal(10,2)')} = 1.5",
        READ,
    ),
    case(
        "decimal(5,2) cannot hold 1000.00",
        S('"p"', "decimal(5,2)", 5, 0, None, None),
        f"{vg('$.p', 'decimal(10,2)')} = 1000",
        SKIP,
    ),
    case(
        "another scale: rounded half up, 2.000 stays below 3",
        S('"p"', "decimal(5,3)", 5, 0, D("1.000"), D("2.000")),
        f"{vg('$.p', 'decimal(10,2)')} = 3",
        SKIP,
    ),
    case(
        "another scale: 1.995 rounds up to 2.00",
        S('"p"', "decimal(5,3)", 5, 0, D("1.000"), D("1.995")),
        f"{vg('$.p', 'decimal(10,2)')} = 2",
        READ,
    ),
    case(
        "another scale: -1.995 rounds to -2.00, away from zero",
        S('"p"', "decimal(5,3)", 5, 0, D("-1.995"), D("-1.000")),
        f"{vg('$.p', 'decimal(10,2)')} = -2",
        READ,
    ),
    case(
        "another scale: 1.994 stays 1.99",
        S('"p"', "decimal(5,3)", 5, 0, D("1.000"), D("1.994")),
        f"{vg('$.p', 'decimal(10,2)')} >= 2",
        SKIP,
    ),
    case(
        "a larger stored precision: the values that fit are compared",
        S('"p"', "decimal(12,2)", 5, 0, D("1.00"), D("2.00")),
        f"{vg('$.p', 'decimal(10,2)')} = 3",
        SKIP,
    ),
    case(
        "a larger stored precision: 99.995 overflows decimal(4,2)",
        S('"p"', "decimal(7,3)", 5, 0, D("99.995"), D("500.000")),
        f"{vg('$.p', 'decimal(4,2)')} > 0",
        SKIP,
    ),
    case(
        "same decimal type",
        S('"p"', "decimal(10,2)", 5, 0, D("1.00"), D("2.00")),
        f"{vg('$.p', 'decimal(10,2)')} > 2.00",
        SKIP,
    ),
    # --- other stored types go through Spark's cast: keep ----------------------------------------
    case(
        'a stored string "5" casts to int 5',
        S('"a"', "varchar", 5, 0, "5", "5"),
        f"{vg('$.a', 'int')} = 6",
        READ,
    ),
    case(
        "a stored double 5.7 casts to int 5",
        S('"a"', "float64", 5, 0, 5.7, 5.7, False),
        f"{vg('$.a', 'int')} = 5",
        READ,
    ),
    case(
        "float32 stats do not serve a double target",
        fl(0.0, 1.0, False, type_="float32"),
        f"{F} > 100.0",
        READ,
    ),
    case(
        "timestamp_ntz stats do not serve a timestamp target",
        S('"t"', "timestamp", 5, 0, 0, 10),
        f"{vg('$.t', 'timestamp')} > '2024-01-01'",
        READ,
    ),
    # --- value_count 0: every entry null or missing, any type ------------------------------------
    case("all null: no comparison", S('"a"', "int64", 0, 10, None, None), f"{A} = 5", SKIP),
    case("all null: no !=", S('"a"', "int64", 0, 10, None, None), f"{A} != 5", SKIP),
    case("all null: no IN", S('"a"', "int64", 0, 10, None, None), f"{A} IN (1, 2)", SKIP),
    case("all null: no NOT IN", S('"a"', "int64", 0, 10, None, None), f"{A} NOT IN (1)", SKIP),
    case("all null: IS NOT NULL fails", S('"a"', "int64", 0, 10, None, None), f"{A} IS NOT NULL", SKIP),
    case("all null: IS NULL holds", S('"a"', "int64", 0, 10, None, None), f"{A} IS NULL", READ),
    case(
        "all null, other stored type: still no comparison",
        S('"a"', "varchar", 0, 10, None, None),
        f"{A} = 5",
        SKIP,
    ),
    case(
        "all null, other stored type: no isnan", S('"f"', "varchar", 0, 10, None, None), f"isnan({F})", SKIP
    ),
    case(
        "all null: not_nan holds for NULL",
        S('"f"', "float64", 0, 10, None, None, False),
        f"NOT isnan({F})",
        READ,
    ),
    # --- null_count and IS NULL ------------------------------------------------------------------
    case("null_count 0, exact type", S('"a"', "int64", 5, 0, 1, 2), f"{A} IS NULL", SKIP),
    case("null_count 3", S('"a"', "int64", 5, 3, 1, 2), f"{A} IS NULL", READ),
    case("null_count 0, int8 widens without NULL", S('"a"', "int8", 5, 0, 1, 2), f"{A} IS NULL", SKIP),
    case(
        "null_count 0, decimal widens without NULL",
        S('"p"', "decimal(5,2)", 5, 0, None, None),
        f"{vg('$.p', 'decimal(10,2)')} IS NULL",
        SKIP,
    ),
    case(
        "null_count 0 but a string may fail the cast",
        S('"a"', "varchar", 5, 0, "1", "2"),
        "try_variant_get(v, '$.a', 'bigint') IS NULL",
        READ,
    ),
    case(
        "null_count 0 on an element path: a short array is NULL",
        S('"arr".element', "int64", 5, 0, 1, 2),
        f"{vg('$.arr[3]', 'bigint')} IS NULL",
        READ,
    ),
    case("values present", S('"a"', "int64", 5, 3, 1, 2), f"{A} IS NOT NULL", READ),
    # --- floats and NaN ----------------------------------------------------------------------------
    case("no NaN, max 5.0", fl(1.0, 5.0, False), f"{F} > 5.0", SKIP),
    case("no NaN, max 5.0 > 4.0", fl(1.0, 5.0, False), f"{F} > 4.0", READ),
    case("a NaN is > 5.0", fl(1.0, 5.0, True), f"{F} > 5.0", READ),
    case("a NaN is >= 5.5", fl(1.0, 5.0, True), f"{F} >= 5.5", READ),
    case("contains_nan unknown: NaN possible", fl(1.0, 5.0, None), f"{F} > 5.0", READ),
    case("NaN is not < 1.0", fl(1.0, 5.0, True), f"{F} < 1.0", SKIP),
    case("NaN is not 7.0", fl(1.0, 5.0, True), f"{F} = 7.0", SKIP),
    case("NaN only beats +inf", fl(1.0, 5.0, False), f"{F} > CAST('Infinity' AS DOUBLE)", SKIP),
    case("a NaN beats +inf", fl(1.0, 5.0, None), f"{F} > CAST('Infinity' AS DOUBLE)", READ),
    case("bounds dropped because of NaN", fl(None, None, True), f"{F} < 0.0", READ),
    case("is_nan: contains_nan false", fl(1.0, 5.0, False), f"isnan({F})", SKIP),
    case("is_nan: contains_nan true", fl(1.0, 5.0, True), f"isnan({F})", READ),
    case("is_nan: contains_nan unknown", fl(1.0, 5.0, None), f"isnan({F})", READ),
    case("is_nan: all null", fl(None, None, False, vc=0), f"isnan({F})", SKIP),
    case("is_nan: float32 stats, double target", fl(1.0, 5.0, False, type_="float32"), f"isnan({F})", READ),
    case("not_nan never prunes", fl(1.0, 5.0, False), f"NOT isnan({F})", READ),
    case("every value is 3.0, no NaN", fl(3.0, 3.0, False), f"{F} != 3.0", SKIP),
    case("every value is 3.0 but a NaN differs", fl(3.0, 3.0, True), f"{F} != 3.0", READ),
    case("NaN unknown: NOT IN keeps", fl(3.0, 3.0, None), f"{F} NOT IN (3.0, 4.0)", READ),
    case("-0.0 equals 0.0", fl(-0.0, -0.0, False), f"{F} = 0.0", READ),
    case("every value is -0.0 = 0.0", fl(-0.0, -0.0, False), f"{F} != 0.0", SKIP),
    case("-0.0 is not > 0.0", fl(-0.0, -0.0, False), f"{F} > 0.0", SKIP),
    case("-0.0 >= 0.0", fl(-0.0, -0.0, False), f"{F} >= 0.0", READ),
    case("-0.0 is not < 0.0", fl(-0.0, 0.0, False), f"{F} < 0.0", SKIP),
    case("min +0.0 may hide -0.0", fl(0.0, 1.0, False), f"{F} = -0.0", READ),
    case("float32 exact type", fl(0.0, 1.0, False, type_="float32"), f"{vg('$.f', 'float')} = 0.5", READ),
    case("float32 max 1.0", fl(0.0, 1.0, False, type_="float32"), f"{vg('$.f', 'float')} > 1.5", SKIP),
    # Spark: CAST(1e39 AS FLOAT) is +inf (a double beyond float's range), and NaN > +inf is true.
    case("beyond float32: +inf", fl(0.0, 1.0, False, type_="float32"), f"{vg('$.f', 'float')} > CAST(1e39 AS FLOAT)", SKIP),
    case("beyond float32: NaN", fl(0.0, 1.0, None, type_="float32"), f"{vg('$.f', 'float')} > CAST(1e39 AS FLOAT)", READ),
    case("beyond float32: -inf", fl(0.0, 1.0, False, type_="float32"), f"{vg('$.f', 'float')} < -1e39F", SKIP),
    case("beyond float32: < +inf", fl(0.0, 1.0, False, type_="float32"), f"{vg('$.f', 'float')} < 1e39F", READ),
    # --- strings: truncated or absent bounds ---------------------------------------------------
    case(
        "a truncated max is still an upper bound",
        S('"s"', "varchar", 2, 0, "aaa", "aab"),
        f"{vg('$.s', 'string')} > 'aab'",
        SKIP,
    ),
    case(
        "within truncated bounds",
        S('"s"', "varchar", 2, 0, "aaa", "aab"),
        f"{vg('$.s', 'string')} = 'aaaz'",
        READ,
    ),
    case("the long value itself", LONG_ROW, f"{vg('$.s', 'string')} = '{LONG}'", READ),
    case("past the truncated max", LONG_ROW, f"{vg('$.s', 'string')} = 'y'", SKIP),
    case("before the truncated min", LONG_ROW, f"{vg('$.s', 'string')} < 'x'", SKIP),
    case(
        "max absent: unknown, not empty",
        S('"s"', "varchar", 2, 0, "a", None),
        f"{vg('$.s', 'string')} > 'zzz'",
        READ,
    ),
    case(
        "min absent: unknown, not empty",
        S('"s"', "varchar", 2, 0, None, "b"),
        f"{vg('$.s', 'string')} < 'a'",
        READ,
    ),
    case("nothing is < ''", S('"s"', "varchar", 2, 0, None, None), f"{vg('$.s', 'string')} < ''", SKIP),
    case("binary bounds", S('"b"', "blob", 2, 0, b"\x01", b"\x02"), f"{vg('$.b', 'binary')} = X'03'", SKIP),
    case(
        "binary in bounds", S('"b"', "blob", 2, 0, b"\x01", b"\x02"), f"{vg('$.b', 'binary')} = X'0150'", READ
    ),
    # --- other types -------------------------------------------------------------------------------
    case("all false", S('"ok"', "boolean", 2, 0, False, False), f"{vg('$.ok', 'boolean')} = TRUE", SKIP),
    case("false and true", S('"ok"', "boolean", 2, 0, False, True), f"{vg('$.ok', 'boolean')} = TRUE", READ),
    case(
        "dates before 2024",
        S('"d"', "date", 2, 0, 0, parse_date_text("2023-12-31")),
        f"{vg('$.d', 'date')} >= DATE '2024-01-01'",
        SKIP,
    ),
    case(
        "dates up to 2024-01-01",
        S('"d"', "date", 2, 0, 0, parse_date_text("2024-01-01")),
        f"{vg('$.d', 'date')} >= DATE '2024-01-01'",
        READ,
    ),
    case(
        "date vs a timestamp after midnight",
        S('"d"', "date", 2, 0, 0, parse_date_text("2024-01-01")),
        f"{vg('$.d', 'date')} > TIMESTAMP '2024-01-01 10:00:00'",
        SKIP,
    ),
    case(
        "timestamps before 10:00 UTC",
        S('"t"', "timestamptz", 2, 0, 0, parse_date_text("2024-01-01") * 86_400_000_000 + 9 * 3_600_000_000),
        f"{vg('$.t', 'timestamp')} >= TIMESTAMP '2024-01-01 12:00:00+02:00'",
        SKIP,
    ),
    # --- element paths: stats cover every element ------------------------------------------------
    case(
        "no element is 9",
        S('"arr".element."x"', "int32", 5, 1, 1, 5),
        "exists(try_variant_get(v, '$.arr', 'array<variant>'), e -> variant_get(e, '$.x', 'int') = 9)",
        SKIP,
    ),
    case(
        "some element may be 3",
        S('"arr".element."x"', "int32", 5, 1, 1, 5),
        "exists(try_variant_get(v, '$.arr', 'array<variant>'), e -> variant_get(e, '$.x', 'int') = 3)",
        READ,
    ),
    case(
        "'no element is 9' cannot be decided",
        S('"arr".element."x"', "int32", 5, 1, 1, 5),
        "NOT exists(try_variant_get(v, '$.arr', 'array<variant>'), e -> variant_get(e, '$.x', 'int') = 9)",
        READ,
    ),
    case(
        "element 0 is one of the elements",
        S('"arr".element', "int32", 5, 0, 1, 5),
        f"{vg('$.arr[0]', 'int')} > 5",
        SKIP,
    ),
    case(
        "no element has a value",
        S('"arr".element', "int32", 0, 3, None, None),
        f"{vg('$.arr[0]', 'int')} IS NOT NULL",
        SKIP,
    ),
    case(
        "some element may be >= 5",
        S('"arr".element', "int32", 5, 0, 1, 5),
        f"NOT ({vg('$.arr[0]', 'int')} < 5)",
        READ,
    ),
    # --- AND / OR / NOT ----------------------------------------------------------------------------
    case(
        "one conjunct cannot match",
        [I64, S('"b"', "varchar", 1, 0, "a", "b")],
        f"{A} = 15 AND {vg('$.b', 'string')} = 'z'",
        SKIP,
    ),
    case(
        "each conjunct might match",
        [I64, S('"b"', "varchar", 1, 0, "a", "b")],
        f"{A} = 15 AND {vg('$.b', 'string')} = 'a'",
        READ,
    ),
    case(
        "a conjunct without stats does not save the other", I64, f"{A} = 99 AND {vg('$.z', 'int')} = 1", SKIP
    ),
    case(
        "one disjunct might match",
        [I64, S('"b"', "varchar", 1, 0, "a", "b")],
        f"{A} = 99 OR {vg('$.b', 'string')} = 'a'",
        READ,
    ),
    case(
        "no disjunct can match",
        [I64, S('"b"', "varchar", 1, 0, "a", "b")],
        f"{A} = 99 OR {vg('$.b', 'string')} = 'z'",
        SKIP,
    ),
    case("a disjunct without stats keeps the file", I64, f"{A} = 99 OR {vg('$.z', 'int')} = 1", READ),
    case("NOT (x < 10) is x >= 10", I64, f"NOT ({A} < 10)", READ),
    case("NOT (x >= 10) is x < 10, min 10", I64, f"NOT ({A} >= 10)", SKIP),
    case("NOT (x = 7 OR x = 8) with every value 7", SEVEN, f"NOT ({A} = 7 OR {A} = 8)", SKIP),
    case("TRUE", I64, "TRUE", READ),
    case("FALSE", I64, "FALSE", SKIP),
    # --- several rows for one path: prune only if each does ------------------------------------
    case("one of two rows might match", [I64, S('"a"', "int64", 5, 0, 30, 40)], f"{A} = 35", READ),
    case("neither row can match", [I64, S('"a"', "int64", 5, 0, 30, 40)], f"{A} = 25", SKIP),
    # --- bad bounds from a client: keep ------------------------------------------------------
    case("bounds of the wrong Python type", S('"a"', "int64", 5, 0, "x", "y"), f"{A} = 5", READ),
]


@pytest.mark.parametrize("c", CASES, ids=str)
def test_rule(c: Case) -> None:
    verdict = evaluate(parse_sql(c.sql), stats_by_path(c.rows))
    assert verdict.might_match is c.expected, f"{c}; got {verdict}"
    assert verdict.reason


@pytest.mark.parametrize("c", [c for c in CASES if "variant_get(v," in c.sql], ids=str)
def test_try_variant_get_prunes_the_same(c: Case) -> None:
    # A failed cast is NULL under try_variant_get and an error under variant_get: no row either way.
    tried = c.sql.replace("try_variant_get(v,", "variant_get(v,").replace(
        "variant_get(v,", "try_variant_get(v,"
    )
    assert evaluate(parse_sql(tried), stats_by_path(c.rows)).might_match is c.expected


def test_reasons_name_the_conjunct_the_bound_and_the_rule() -> None:
    v = evaluate(parse_sql(f"{vg('$.b', 'string')} = 'a' AND {A} > 25"), stats_by_path([I64]))
    assert v == Verdict(CANNOT_MATCH, v.reason)
    assert v.name == "CANNOT_MATCH" and not v
    assert "variant_get(v, '$.a', 'bigint') > 25" in v.reason
    assert "max 20 <= 25 (int64)" in v.reason and "[range]" in v.reason
    v = evaluate(parse_sql(f"{A} = 99 OR {A} = 1"), stats_by_path([I64]))
    assert v.reason.startswith("no disjunct can match")
    v = evaluate(parse_sql(f"{vg('$.z', 'int')} = 1"), stats_by_path([I64]))
    assert v.name == "MIGHT_MATCH" and "not fully shredded" in v.reason
    v = evaluate(parse_sql(f"{A} = 5"), stats_by_path([S('"a"', "varchar", 0, 3, None, None)]))
    assert "value_count 0" in v.reason and "[all-null]" in v.reason
    assert str(v).startswith("CANNOT_MATCH: ")


def test_long_in_lists_use_their_hull() -> None:
    row = S('"a"', "int64", 5, 0, 501, 501)
    expr = parse_sql(f"{A} IN (500, 502)")
    assert evaluate(expr, stats_by_path([row])).might_match is SKIP
    # Past the point limit the list is tested as [500, 502]: sound, less precise.
    assert evaluate(expr, stats_by_path([row]), max_in_points=1).might_match is READ
    assert (
        evaluate(
            parse_sql(f"{A} IN ({', '.join(str(i) for i in range(1000, 3000))})"), stats_by_path([row])
        ).might_match
        is SKIP
    )


def test_file_evaluator_reuses_the_compiled_condition() -> None:
    any_null = (
        "exists(try_variant_get(v, '$.arr', 'array<variant>'), e -> variant_get(e, '$.x', 'int') IS NULL)"
    )
    ev = FileEvaluator(parse_sql(f"{A} = 15 OR {any_null}"))
    assert ev.paths == {("v", '"a"'), ("v", '"arr".element."x"')}
    assert ev.evaluate(stats_by_path([I64])).might_match is READ
    assert (
        ev.evaluate(stats_by_path([SEVEN, S('"arr".element."x"', "int32", 3, 0, 1, 2)])).might_match is READ
    )


# --- the IR -----------------------------------------------------------------------------------


def _leaf(sql: str) -> LeafCondition:
    c = compile_expression(parse_sql(sql))
    assert isinstance(c, LeafCondition)
    return c


def test_usable_types() -> None:
    names = [t.name for t in usable_types(ShreddedType.parse("int32"))]
    assert names == ["int8", "int16", "int32"]
    assert [t.name for t in usable_types(ShreddedType.parse("decimal(4,2)"))] == [
        "decimal(2,2)",
        "decimal(3,2)",
        "decimal(4,2)",
    ]
    assert [t.name for t in usable_types(ShreddedType.parse("float64"))] == ["float64"]


def test_ir_literals_are_in_the_stored_domain() -> None:
    c = _leaf(f"{A} = 300")
    assert c.column == "v" and c.variant_path == '"a"'
    by_type = {t.name: case.test for case in c.cases for t in case.types}
    assert by_type == {
        "int8": Never(),
        "int16": RangeMayContain(300, 300),
        "int32": RangeMayContain(300, 300),
        "int64": RangeMayContain(300, 300),
    }
    assert c.otherwise == HasValues()
    c = _leaf(f"{A} IN (5, 300)")
    by_type = {t.name: case.test for case in c.cases for t in case.types}
    assert by_type["int8"] == AnyPoint((5,)) and by_type["int64"] == AnyPoint((5, 300))
    c = _leaf(f"{F} NOT IN (1.0, 2.0)")
    assert c.cases[0].test == NotAllIn((1.0, 2.0), nan_matches=True)
    assert _leaf(f"{A} IS NULL").cases[0].test == HasNulls()
    assert _leaf(f"{vg('$.a[1]', 'bigint')} IS NULL").otherwise == Keep()
    assert _leaf(f"{F} > 1.0").cases[0].test == RangeMayContain(
        1.0, None, lo_inclusive=False, nan_matches=True
    )


def test_constants() -> None:
    assert compile_expression(TRUE) == Constant(True, "the predicate is TRUE")
    assert compile_expression(FALSE).might_match is False  # type: ignore[union-attr]
    c = compile_expression(parse_sql(f"{A} = 42.5"))
    assert isinstance(c, Constant) and not c.might_match
    c = compile_expression(parse_sql(f"{vg('$.a', 'tinyint')} > 300"))
    assert isinstance(c, Constant) and not c.might_match
    # NaN > +inf: not unsatisfiable for floats.
    assert isinstance(compile_expression(parse_sql(f"{F} > CAST('Infinity' AS DOUBLE)")), LeafCondition)


def test_nan_literal_never_reaches_the_evaluator() -> None:
    with pytest.raises(InvalidPredicateError, match="NaN"):
        parse_sql(f"{F} = CAST('NaN' AS DOUBLE)")


def test_a_cast_s_reason_names_the_request_and_the_stored_bounds() -> None:
    rank = S('"rank"', "int64", 5, 0, 5000, 9999)
    v = evaluate(parse_sql(f"{vg('$.rank', 'int')} <= 10"), stats_by_path([rank]))
    assert not v.might_match
    assert v.short == "$.rank asked as int: int64 bounds [5000, 9999]; min 5000 > 10"
    assert "$.rank asked as int: int64 bounds [5000, 9999]" in v.reason
    # Two paths: the cast's words are led by the path once.
    x = S('"x"', "int32", 5, 0, 0, 3)
    v = evaluate(parse_sql(f"{vg('$.rank', 'int')} <= 10 OR {vg('$.x', 'int')} > 5"), stats_by_path([rank, x]))
    assert v.short == "$.rank asked as int: int64 bounds [5000, 9999]; min 5000 > 10; $.x: max 3 <= 5"
    # An exact type needs no such words.
    v = evaluate(parse_sql(f"{vg('$.rank', 'bigint')} <= 10"), stats_by_path([rank]))
    assert v.short == "min 5000 > 10"
