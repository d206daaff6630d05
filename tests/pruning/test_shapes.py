"""The long shapes read without sqlglot (:mod:`service.pruning.parse_sql.shapes`) give the tree
sqlglot's path gives, literal types included (compared by ``repr``: ``1``, ``1.0`` and
``Decimal('1.0')`` are equal but not the same literal), or are left to that path: on generated
predicates with and without a table schema, with tricky literals (strings holding commas,
parentheses, quotes and keywords, negative and huge numbers, NULL, mixed types, comments), and
through :func:`parse_sql` itself, errors and their positions included.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from types import MappingProxyType

import pytest

import service.pruning.parse_sql as parse_sql_module
from bench.dashboard import LONG_IN, WIDE_OR
from service.errors import ShredcatError
from service.pruning.expressions import BooleanExpression
from service.pruning.parse_sql import parse_sql, term_of
from service.pruning.parse_sql.shapes import MIN_CHARS, read_shapes
from service.pruning.schema import ColumnInfo, TableSchema
from service.pruning.zones import reading_in, session_zone
from service.values import ShreddedType

SCHEMA = TableSchema(
    ("v", "w2"),
    MappingProxyType(
        {
            "id": ColumnInfo("id", ShreddedType.parse("int64")),
            "small": ColumnInfo("small", ShreddedType.parse("int8")),
            "Name": ColumnInfo("Name", ShreddedType.parse("varchar")),
            "price": ColumnInfo("price", ShreddedType.parse("decimal(10,2)")),
            "score": ColumnInfo("score", ShreddedType.parse("float64")),
            "active": ColumnInfo("active", ShreddedType.parse("boolean")),
            "day": ColumnInfo("day", ShreddedType.parse("date"), partition=True),
            "ts": ColumnInfo("ts", ShreddedType.parse("timestamptz"), partition=True),
            "at": ColumnInfo("at", ShreddedType.parse("time")),
            "tags": ColumnInfo("tags", None),
        }
    ),
)
LIMITS = {"max_depth": 64, "max_in_list": 10_000, "max_length": 256 * 1024, "max_terms": 400, "max_path_depth": 64}

TYPES = ["bigint", "int", "smallint", "tinyint", "string", "double", "float", "decimal(10,2)", "decimal(38,0)",
         "date", "timestamp", "timestamp_ntz", "boolean", "binary", "array<int>"]  # fmt: skip
TERMS = [
    *(f"variant_get(v, '$.a', '{t}')" for t in TYPES),
    "variant_get(v, '$.a', 'string')",
    "try_variant_get(V, '$.b.c', 'bigint')",
    "VARIANT_GET (v,'$[\"x y\"]','int')",
    "variant_get( w2 ,\n'$.a[0]' , 'string' )",
    "variant_get(w, '$.a', 'bigint')",  # no such column
    "variant_get(v, '$.a[*]', 'bigint')",  # a hard error
    "variant_get(v, '$..a', 'bigint')",  # a bad path
    "variant_get(v, '$.a', 'bigintt')",  # an unknown type
    "id", "small", "name", "NAME", "price", "score", "active", "day", "ts", "at", "tags", "v", "nosuch",
    "current_date", "user", "date", "null", "true", "not", "in", "or",
]  # fmt: skip
NUMBERS = ["0", "7", "-7", "007", "-0", "128", "-129", "300", "9223372036854775807", "9223372036854775808",
           "-9223372036854775808", "9007199254740993", "1" * 201, "1.5", "-1.50", "0.0", "-0.0", "00.5",
           "12345678901234567890123.45", "1.123456789012345678901234567890123456789", "99999999.99",
           "100000000.00", "0.005"]  # fmt: skip
STRINGS = ["''", "'a'", "'a,b'", "'a)b'", "'(x'", "'OR'", "' IN (1'", "'\"q\"'", "'é'", "'5'", "'05'", "'-5'",
           "'2024-01-01'", "'2024-13-45'", "'2024-01-01 10:00:00'", "'true'", "'NaN'", "'Infinity'",
           "'x -- y'", "'/* c */'", "'1.5'", "'0001-01-01'"]  # fmt: skip
#: Literals the shapes do not read: sqlglot's path takes the text.
TRICKY = ["NULL", "TRUE", "1e5", "12BD", ".5", "1.", "- 5", "--5", "'a''b'", "'a\\'b'", '"x"',
          "CAST('1' AS INT)", "DATE '2024-01-01'", "X'0A'", "+5", "5L", "1 /* c */", "(5)", "r'x'"]  # fmt: skip
OPS = ["=", "==", "!=", "<>", "<", "<=", ">", ">=", "<=>"]
BLANKS = [" ", " ", "\n", "\t", "  "]


def _literal(rng: random.Random, term: str, tricky: bool) -> str:
    if tricky and rng.random() < 0.3:
        return rng.choice(TRICKY)
    if rng.random() < 0.6:  # a literal of the term's type, most of the time
        return rng.choice(STRINGS[:12] if "string" in term.lower() or "name" in term.lower() else NUMBERS[:8])
    return rng.choice(NUMBERS if rng.random() < 0.6 else STRINGS)


def _leaf(rng: random.Random, term: str, tricky: bool) -> str:
    b = rng.choice(BLANKS)
    if rng.random() < 0.5:
        op = rng.choice(OPS if tricky else OPS[:-1])
        return f"{term}{b}{op}{rng.choice(['', ' '])}{_literal(rng, term, tricky)}"
    values = f",{rng.choice(['', ' '])}".join(_literal(rng, term, tricky) for _ in range(rng.randint(1, 6)))
    negate = rng.choice(["", "NOT ", "not\n"])
    return f"{term}{b}{negate}IN{rng.choice(['', ' '])}({values})"


def _predicate(rng: random.Random, tricky: bool) -> str:
    terms = rng.sample(TERMS, rng.randint(1, 3)) if rng.random() < 0.3 else [rng.choice(TERMS[:8])]
    leaves = [_leaf(rng, rng.choice(terms), tricky) for _ in range(rng.randint(1, 5))]
    joiner = rng.choice(["OR", "or", "AND", "And"])
    text = f"{rng.choice(BLANKS)}{joiner}{rng.choice(BLANKS)}".join(leaves)
    if tricky and rng.random() < 0.3:
        # Mixed connectives, a comment or parentheses: sqlglot's path.
        text = rng.choice([f"{text} OR {leaves[0]} AND {leaves[-1]}", f"{text} -- note", f"({text})", f"/* c */ {text}"])
    return text


@contextmanager
def _min_chars(n: float) -> Iterator[None]:
    saved = parse_sql_module.MIN_CHARS
    parse_sql_module.MIN_CHARS = n  # type: ignore[assignment]
    try:
        yield
    finally:
        parse_sql_module.MIN_CHARS = saved


def _outcome(text: str, schema: TableSchema | None) -> tuple[object, ...]:
    try:
        return ("tree", repr(parse_sql(text, schema=schema, **LIMITS)))
    except ShredcatError as e:
        return ("error", type(e).__name__, e.message, repr(sorted(e.details.items())))


def _sqlglots(text: str, schema: TableSchema | None) -> tuple[object, ...]:
    with _min_chars(float("inf")):
        return _outcome(text, schema)


def _shapes(text: str, schema: TableSchema | None) -> BooleanExpression | None:
    return read_shapes(text, lambda t: term_of(t, schema, LIMITS), max_depth=64, max_in_list=10_000)


@pytest.mark.parametrize("schema", [SCHEMA, None], ids=["schema", "no-schema"])
@pytest.mark.parametrize("seed", range(3))
def test_shapes_give_sqlglots_tree_or_leave_it_the_text(seed: int, schema: TableSchema | None) -> None:
    rng = random.Random(seed)
    read = 0
    zone = session_zone(rng.choice([None, "Europe/Paris"]))
    with reading_in(zone):
        for _ in range(150):
            tricky = rng.random() < 0.4
            text = _predicate(rng, tricky)
            expected = _sqlglots(text, schema)
            tree = _shapes(text, schema)
            if tree is not None:
                read += 1
                assert ("tree", repr(tree)) == expected, text
            with _min_chars(0):  # parse_sql with the shapes tried first: same tree, same error
                assert _outcome(text, schema) == expected, text
    assert read >= 20  # the shapes are read, not left to sqlglot every time


@pytest.mark.parametrize(
    "text",
    [
        "variant_get(v, '$.a', 'bigint') IN (1, NULL)",
        "variant_get(v, '$.a', 'bigint') IN (1, 2) -- c",
        "variant_get(v, '$.a', 'bigint') = 1 OR variant_get(v, '$.a', 'bigint') = 2 AND id = 3",
        "(variant_get(v, '$.a', 'bigint') = 1)",
        "variant_get(v, '$.a', 'bigint') IN ('a''b', 'c')",
        "variant_get(v, '$.a', 'bigint') IN (1e5, 2)",
        "variant_get(v, '$.a', 'bigint') IN (- 5, 2)",
        "variant_get(v, '$.a', 'bigint') <=> 5",
        "variant_get(v, '$.a', 'string') = 'a' 'b'",
        "variant_get(v, '$.a', 'bigint') = 1OR variant_get(v, '$.a', 'bigint') = 2",
        "id IN (1, 2) OR small = 1 OR score = 1 OR price = 1 OR Name = 'x'",  # five terms
        "id NOTIN (1, 2)",
        "current_date IN (1, 2)",
        "nosuch IN (1, 2)",
        "variant_get(w, '$.a', 'bigint') IN (1, 2)",
    ],
)
def test_what_the_shapes_leave_to_sqlglot(text: str) -> None:
    assert _shapes(text, SCHEMA) is None
    with _min_chars(0):
        assert _outcome(text, SCHEMA) == _sqlglots(text, SCHEMA)


def test_the_shapes_read_strings_holding_sql() -> None:
    text = "variant_get(v, '$.s', 'string') IN ('a, b', 'c) OR (d', ' IN (1', '--x', '/*y*/', '\"q\"', '')"
    tree = _shapes(text, SCHEMA)
    assert tree is not None and repr(tree) == _sqlglots(text, SCHEMA)[1]


@pytest.mark.parametrize("text", [LONG_IN, WIDE_OR, LONG_IN.replace(" IN ", " NOT IN "), WIDE_OR.replace("= 9", "<= -9")])
def test_long_predicates_take_the_shapes_and_equal_sqlglots_tree(text: str) -> None:
    assert len(text) >= MIN_CHARS
    assert _shapes(text, SCHEMA) is not None
    assert _outcome(text, SCHEMA) == _sqlglots(text, SCHEMA)


def test_a_long_predicate_with_an_error_is_reported_by_sqlglots_path_at_its_position() -> None:
    text = LONG_IN.replace("variant_get(v,", "variant_get(nosuch,")
    got = _outcome(text, SCHEMA)
    assert got[0] == "error" and "nosuch" in str(got[2]) and "position" in str(got[3])
    assert got == _sqlglots(text, SCHEMA)
    too_many = LONG_IN[:-1] + ", 1)"  # 10,001 values
    assert _outcome(too_many, SCHEMA) == _sqlglots(too_many, SCHEMA)
    assert _outcome(too_many, SCHEMA)[1] == "LimitExceededError"
