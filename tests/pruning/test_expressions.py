"""The predicate tree: simplification while building, Not pushdown, literal conversion."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest

from service.errors import InvalidPredicateError
from service.pruning.expressions import (
    FALSE,
    TRUE,
    And,
    LiteralPredicate,
    Not,
    Op,
    Or,
    SetPredicate,
    UnaryPredicate,
    and_,
    compare,
    depth,
    eq,
    gt,
    in_,
    is_nan,
    is_null,
    iter_predicates,
    lt,
    not_,
    not_in,
    not_null,
    or_,
    rewrite_not,
    variant,
)
from service.pruning.literals import DateLiteral, Float32Literal, TimestampLiteral, parse_date_text
from service.pruning.spark_types import parse_spark_type, spark_type_name
from service.values import FLOAT32_MAX, Kind, ShreddedType

A = variant("v", "$.a", "bigint")
B = variant("v", "$.b", "string")
W = variant("v", "$.arr[*].x", "int")


# --- target types -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("boolean", "boolean"),
        ("tinyint", "int8"),
        ("byte", "int8"),
        ("smallint", "int16"),
        ("short", "int16"),
        ("int", "int32"),
        ("integer", "int32"),
        ("INT", "int32"),
        ("bigint", "int64"),
        ("long", "int64"),
        ("float", "float32"),
        ("real", "float32"),
        ("double", "float64"),
        ("decimal(10,2)", "decimal(10,2)"),
        ("DECIMAL( 10 , 2 )", "decimal(10,2)"),
        ("numeric(5,1)", "decimal(5,1)"),
        ("decimal", "decimal(10,0)"),
        ("decimal(7)", "decimal(7,0)"),
        ("string", "varchar"),
        ("binary", "blob"),
        ("date", "date"),
        ("timestamp", "timestamptz"),
        ("timestamp_ltz", "timestamptz"),
        ("timestamp_ntz", "timestamp"),
    ],
)
def test_spark_type_names(name: str, expected: str) -> None:
    t = parse_spark_type(name)
    assert t == ShreddedType.parse(expected)
    assert parse_spark_type(spark_type_name(t)) == t


@pytest.mark.parametrize(
    "bad", ["varchar(3)", "uuid", "time", "decimal(39,2)", "decimal(5,6)", "array<int>", "", "variant"]
)
def test_unknown_types_are_invalid_predicates(bad: str) -> None:
    with pytest.raises(InvalidPredicateError):
        parse_spark_type(bad)


# --- simplification ---------------------------------------------------------------------------


def test_and_or_simplify() -> None:
    x, y = eq(A, 1), eq(A, 2)
    assert and_(x, FALSE) == FALSE
    assert and_(x, TRUE) == x
    assert and_() == TRUE
    assert or_(x, TRUE) == TRUE
    assert or_(x, FALSE) == x
    assert or_() == FALSE
    assert and_(x, and_(y, x)) == And((x, y))  # flattened, duplicates dropped, order kept
    assert or_(or_(x, y), x) == Or((x, y))
    assert and_(or_(x, y), or_(x, y)) == Or((x, y))


@pytest.mark.parametrize(
    ("op", "negated"),
    [
        (Op.EQ, Op.NOT_EQ),
        (Op.NOT_EQ, Op.EQ),
        (Op.LT, Op.GT_EQ),
        (Op.LT_EQ, Op.GT),
        (Op.GT, Op.LT_EQ),
        (Op.GT_EQ, Op.LT),
    ],
)
def test_not_of_comparisons(op: Op, negated: Op) -> None:
    assert not_(compare(op, A, 5)) == LiteralPredicate(negated, A, 5)


def test_not_of_other_leaves() -> None:
    assert not_(in_(A, [1, 2])) == SetPredicate(Op.NOT_IN, A, (1, 2))
    assert not_(not_in(A, [1, 2])) == SetPredicate(Op.IN, A, (1, 2))
    assert not_(is_null(A)) == UnaryPredicate(Op.NOT_NULL, A)
    assert not_(not_null(A)) == UnaryPredicate(Op.IS_NULL, A)
    f = variant("v", "$.f", "double")
    assert not_(is_nan(f)) == UnaryPredicate(Op.NOT_NAN, f)
    assert not_(TRUE) == FALSE
    assert not_(FALSE) == TRUE


def test_de_morgan_and_double_negation() -> None:
    x, y = eq(A, 1), lt(A, 9)
    assert not_(and_(x, y)) == or_(not_(x), not_(y))
    assert not_(or_(x, y)) == and_(not_(x), not_(y))
    assert not_(not_(and_(x, y))) == and_(x, y)


def test_not_stays_above_wildcard_leaves_only() -> None:
    w = eq(W, 5)
    assert not_(w) == Not(w)  # "no element is 5" is not "some element is not 5"
    assert not_(Not(w)) == w
    assert not_(and_(w, eq(A, 1))) == or_(Not(w), LiteralPredicate(Op.NOT_EQ, A, 1))


def test_rewrite_not_on_hand_built_trees() -> None:
    x = eq(A, 1)
    tree = Not(And((x, Not(Or((x, eq(B, "s")))))))
    assert rewrite_not(tree) == or_(not_(x), x, eq(B, "s"))
    assert depth(tree) == 4
    assert [p.term for p in iter_predicates(tree)] == [A, A, B]


def test_trees_are_immutable_and_hashable() -> None:
    x = eq(A, 1)
    with pytest.raises(AttributeError):
        x.op = Op.LT  # type: ignore[misc]
    assert len({eq(A, 1), eq(A, 1), eq(A, Decimal("1.0"))}) == 1


def test_nodes_validate_literals() -> None:
    with pytest.raises(InvalidPredicateError):
        LiteralPredicate(Op.EQ, A, "5")
    with pytest.raises(InvalidPredicateError):
        LiteralPredicate(Op.EQ, variant("v", "$.d", "decimal(5,2)"), Decimal("1.5"))  # not canonical
    with pytest.raises(InvalidPredicateError):
        LiteralPredicate(Op.EQ, variant("v", "$.f", "double"), math.nan)
    with pytest.raises(InvalidPredicateError):
        LiteralPredicate(Op.IN, A, 5)
    with pytest.raises(InvalidPredicateError):
        is_nan(A)  # NaN only exists for float/double terms


# --- literal conversion (Spark's comparison rules) --------------------------------------------

D = Decimal
IN_NONE = "IN ()"
NOT_IN_NONE = "NOT IN ()"
MICROS = 1_000_000
DAY = 86_400 * MICROS
JAN1 = parse_date_text("2024-01-01")


def _leaf(target: str, op: Op, value: object) -> object:
    e = compare(op, variant("v", "$.a", target), value)  # type: ignore[arg-type]
    if isinstance(e, SetPredicate) and not e.literals:
        return IN_NONE if e.op is Op.IN else NOT_IN_NONE
    if e in (TRUE, FALSE):
        return e
    assert isinstance(e, LiteralPredicate)
    return (e.op, e.literal)


CONVERSIONS = [
    # exact after conversion
    ("bigint", Op.EQ, 42, (Op.EQ, 42)),
    ("bigint", Op.EQ, D("42.0"), (Op.EQ, 42)),
    ("bigint", Op.EQ, 42.0, (Op.EQ, 42)),
    ("bigint", Op.EQ, "42", (Op.EQ, 42)),
    # no integer equals 42.5: never TRUE, NULL on NULL (not AlwaysFalse, see expressions.py)
    ("bigint", Op.EQ, D("42.5"), IN_NONE),
    ("bigint", Op.NOT_EQ, D("42.5"), NOT_IN_NONE),
    ("bigint", Op.LT, D("42.5"), (Op.LT_EQ, 42)),
    ("bigint", Op.LT_EQ, D("42.5"), (Op.LT_EQ, 42)),
    ("bigint", Op.GT, D("42.5"), (Op.GT_EQ, 43)),
    ("bigint", Op.GT_EQ, D("-42.5"), (Op.GT_EQ, -42)),
    ("bigint", Op.LT, 2.5, (Op.LT_EQ, 2)),
    ("bigint", Op.LT, math.inf, (Op.LT_EQ, 2**63 - 1)),
    ("bigint", Op.GT, math.inf, (Op.GT, 2**63 - 1)),
    # out of the type's range
    ("tinyint", Op.EQ, 300, IN_NONE),
    ("tinyint", Op.NOT_EQ, 300, NOT_IN_NONE),
    ("tinyint", Op.LT, 300, (Op.LT_EQ, 127)),
    ("tinyint", Op.GT, 300, (Op.GT, 127)),
    ("tinyint", Op.GT, -300, (Op.GT_EQ, -128)),
    ("tinyint", Op.LT, -300, (Op.LT, -128)),
    ("tinyint", Op.LT_EQ, D("-128.5"), (Op.LT, -128)),
    # Beyond int64 (a DECIMAL to Spark), an ordering is folded by Spark to a constant that holds
    # for NULL terms too (NOT (x > 2**63) keeps NULL rows): TRUE/FALSE, never pruned on nulls.
    ("bigint", Op.GT, 2**64, FALSE),
    ("int", Op.LT_EQ, 2**63, TRUE),
    ("tinyint", Op.GT_EQ, D("9223372036854775807.5"), FALSE),
    ("smallint", Op.GT, -(2**63) - 1, TRUE),
    ("int", Op.GT, D("2147483647.5"), (Op.GT, 2**31 - 1)),  # in int64: SQL's NULL is kept
    # decimals
    ("decimal(10,2)", Op.EQ, D("12.5"), (Op.EQ, D("12.50"))),
    ("decimal(10,2)", Op.EQ, 12, (Op.EQ, D("12.00"))),
    ("decimal(10,2)", Op.EQ, D("12.505"), IN_NONE),
    ("decimal(10,2)", Op.LT, D("12.505"), (Op.LT_EQ, D("12.50"))),
    ("decimal(10,2)", Op.GT, D("12.505"), (Op.GT_EQ, D("12.51"))),
    ("decimal(4,2)", Op.EQ, 100, IN_NONE),
    ("decimal(4,2)", Op.LT, 100, (Op.LT_EQ, D("99.99"))),
    ("decimal(38,0)", Op.EQ, 10**37 + 1, (Op.EQ, D(10**37 + 1))),
    # doubles and floats
    ("double", Op.EQ, D("0.1"), (Op.EQ, 0.1)),
    ("double", Op.EQ, -0.0, (Op.EQ, 0.0)),
    ("double", Op.GT, math.inf, (Op.GT, math.inf)),
    ("double", Op.EQ, 2**53 + 1, (Op.EQ, float(2**53))),
    ("double", Op.LT, "-Infinity", (Op.LT, -math.inf)),
    # Spark compares float with a decimal/double literal in double: 0.1f is not 0.1.
    ("float", Op.EQ, D("0.1"), IN_NONE),
    ("float", Op.GT, D("0.1"), (Op.GT_EQ, 0.10000000149011612)),
    ("float", Op.LT, D("0.1"), (Op.LT_EQ, 0.09999999403953552)),
    ("float", Op.EQ, D("0.5"), (Op.EQ, 0.5)),
    ("float", Op.EQ, Float32Literal(0.10000000149011612), (Op.EQ, 0.10000000149011612)),
    # An integer literal float32 holds exactly is that float (both of Spark's modes agree).
    ("float", Op.EQ, 16777216, (Op.EQ, 16777216.0)),
    ("float", Op.LT, -3, (Op.LT, -3.0)),
    ("float", Op.LT, D("1e39"), (Op.LT_EQ, FLOAT32_MAX)),
    ("float", Op.GT, D("1e39"), (Op.GT_EQ, math.inf)),
    # dates and timestamps (UTC session)
    ("date", Op.EQ, "2024-01-01", (Op.EQ, JAN1)),
    ("date", Op.EQ, DateLiteral(JAN1), (Op.EQ, JAN1)),
    ("date", Op.EQ, TimestampLiteral(JAN1 * DAY, ntz=False), (Op.EQ, JAN1)),
    ("date", Op.EQ, TimestampLiteral(JAN1 * DAY + 10 * 3600 * MICROS, ntz=False), IN_NONE),
    ("date", Op.LT, TimestampLiteral(JAN1 * DAY + 10 * 3600 * MICROS, ntz=False), (Op.LT_EQ, JAN1)),
    ("date", Op.GT, TimestampLiteral(JAN1 * DAY + 10 * 3600 * MICROS, ntz=False), (Op.GT_EQ, JAN1 + 1)),
    ("timestamp", Op.EQ, "2024-01-01T10:00:00+02:00", (Op.EQ, JAN1 * DAY + 8 * 3600 * MICROS)),
    ("timestamp", Op.EQ, "2024-01-01 10:00:00", (Op.EQ, JAN1 * DAY + 10 * 3600 * MICROS)),
    ("timestamp", Op.EQ, "2024-01-01 10:00:00Z", (Op.EQ, JAN1 * DAY + 10 * 3600 * MICROS)),
    ("timestamp", Op.EQ, DateLiteral(JAN1), (Op.EQ, JAN1 * DAY)),
    ("timestamp_ntz", Op.EQ, "2024-01-01 10:00:00.25", (Op.EQ, JAN1 * DAY + 10 * 3600 * MICROS + 250_000)),
    ("timestamp_ntz", Op.EQ, TimestampLiteral(5, ntz=False), (Op.EQ, 5)),
    # strings, binary, boolean
    ("string", Op.EQ, "x", (Op.EQ, "x")),
    ("string", Op.LT, "", (Op.LT, "")),
    ("binary", Op.EQ, b"\x0a", (Op.EQ, b"\x0a")),
    ("binary", Op.EQ, "A", (Op.EQ, b"A")),
    ("boolean", Op.EQ, True, (Op.EQ, True)),
    ("boolean", Op.EQ, "TRUE", (Op.EQ, True)),
]


@pytest.mark.parametrize(("target", "op", "value", "expected"), CONVERSIONS)
def test_literal_conversion(target: str, op: Op, value: object, expected: object) -> None:
    assert _leaf(target, op, value) == expected


@pytest.mark.parametrize(
    ("target", "value", "message"),
    [
        ("bigint", "abc", "not a valid bigint"),
        ("bigint", "42.5", "not exactly"),
        ("bigint", True, "boolean"),
        ("bigint", 1e20, "too large"),
        ("bigint", Float32Literal(1.5), "cannot be compared"),
        ("decimal(10,2)", 1.5, "decimal literal"),
        # Without ANSI 16777217 is cast to float (16777216f), with ANSI both sides to double.
        ("float", 16777217, "Spark's modes compare it differently"),
        # ANSI Spark compares a decimal with a string as doubles.
        ("decimal(10,2)", "1.50", "compares them as doubles"),
        ("double", math.nan, "NaN"),
        ("double", "NaN", "NaN"),
        ("double", "0.1x", "not a valid double"),
        ("float", "0.1", "not exactly"),
        ("string", 5, "string term"),
        ("binary", 5, "binary term"),
        ("boolean", 1, "boolean term"),
        ("date", "2024-02-30", "invalid date"),
        ("date", 5, "date term"),
        ("timestamp_ntz", "2024-01-01 10:00:00+02:00", "time zone"),
        ("timestamp", "2024-01-01 10:00:00.1234567", "6 fractional digits"),
        ("timestamp", "yesterday", "not a timestamp"),
    ],
)
def test_literals_that_cannot_be_converted(target: str, value: object, message: str) -> None:
    with pytest.raises(InvalidPredicateError, match=message):
        compare(Op.EQ, variant("v", "$.a", target), value)  # type: ignore[arg-type]


def test_in_lists_drop_values_no_target_value_equals() -> None:
    assert in_(A, [D("42.5"), 43, D("43.0")]) == LiteralPredicate(Op.EQ, A, 43)
    assert in_(A, [D("42.5")]) == SetPredicate(Op.IN, A, ())
    assert in_(A, [3, 1, 2, 1]) == SetPredicate(Op.IN, A, (1, 2, 3))
    assert not_in(A, [D("42.5")]) == SetPredicate(Op.NOT_IN, A, ())
    assert not_in(A, [7]) == LiteralPredicate(Op.NOT_EQ, A, 7)
    f = variant("v", "$.f", "double")
    assert in_(f, [0.0, -0.0]) == LiteralPredicate(Op.EQ, f, 0.0)


def test_lists_of_plain_integers_read_as_each_literal_is() -> None:
    """An integer list is read in one pass (an id list), each other list literal by literal: both
    give each value's own image, and drop the values beyond the target's range."""
    import random

    from service.pruning.literals import literal_image

    rng = random.Random(36)
    for target in ("tinyint", "int", "bigint"):
        term = variant("v", "$.a", target)
        for _ in range(200):
            values = [rng.choice([rng.randint(-300, 300), rng.randint(-(2**64), 2**64)]) for _ in range(rng.randint(2, 30))]
            images = {literal_image(term.target, v).exact for v in values} - {None}
            want = sorted(images)
            got = in_(term, values)  # type: ignore[arg-type]
            if len(want) == 1:
                assert got == LiteralPredicate(Op.EQ, term, want[0])
            else:
                assert got == SetPredicate(Op.IN, term, tuple(want))  # type: ignore[arg-type]
    with pytest.raises(InvalidPredicateError, match="is not a int8 value"):
        SetPredicate(Op.IN, variant("v", "$.a", "tinyint"), (1, 300))
    with pytest.raises(InvalidPredicateError, match="is not a int8 value"):
        SetPredicate(Op.IN, variant("v", "$.a", "tinyint"), (True, 3))
    # The compiler slices a sorted list by a stored type's range: an unsorted one is refused.
    for unsorted in ((3, 1), (1, 1), ("b", "a")):
        with pytest.raises(InvalidPredicateError, match="sorted and distinct"):
            SetPredicate(Op.IN, variant("v", "$.a", "string" if unsorted[0] == "b" else "bigint"), unsorted)


def test_gt_literal_on_left_is_flipped_by_parsers_not_builders() -> None:
    assert gt(A, 5) == LiteralPredicate(Op.GT, A, 5)


def test_term_rejects_non_spark_targets() -> None:
    with pytest.raises(InvalidPredicateError):
        variant("v", "$.a", ShreddedType(Kind.UUID))
    with pytest.raises(InvalidPredicateError):
        variant("", "$.a", "int")
