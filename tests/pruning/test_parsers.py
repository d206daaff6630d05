"""JSON and SQL parsers: the same predicates give the same trees through both forms; errors say
what is wrong and where; limits; round trips through to_json / to_sql."""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

import pytest

from service.errors import InvalidPathError, InvalidPredicateError, LimitExceededError
from service.pruning.expressions import (
    FALSE,
    TRUE,
    LiteralPredicate,
    Not,
    Op,
    SetPredicate,
    and_,
    eq,
    gt_eq,
    lt_eq,
    variant,
)
from service.pruning.literals import parse_date_text
from service.pruning.parse_json import parse_json, to_json
from service.pruning.parse_sql import parse_sql, to_sql
from service.pruning.parse_sql.guard import too_many_terms


def T(path: str, as_: str, column: str = "v", try_: bool = False) -> dict[str, Any]:
    return {"type": "variant", "column": column, "path": path, "as": as_, "try": try_}


ID = T("$.user.id", "bigint")
A_INT = T("$.a", "int")
F_DBL = T("$.f", "double")

# (SQL, JSON): each pair must parse to the same tree.
SAME = [
    ("variant_get(v, '$.user.id', 'bigint') = 42", {"type": "eq", "term": ID, "value": 42}),
    ("v:user.id::bigint = 42", {"type": "eq", "term": ID, "value": 42}),
    ("CAST(v:user.id AS BIGINT) = 42", {"type": "eq", "term": ID, "value": 42}),
    ("42 = variant_get(v, '$.user.id', 'bigint')", {"type": "eq", "left": 42, "right": ID}),
    ("variant_get(v, '$.user.id', 'bigint') == 42", {"type": "eq", "left": ID, "right": 42}),
    ("variant_get(v, '$.a', 'int') < 5", {"type": "lt", "term": A_INT, "value": 5}),
    ("5 > variant_get(v, '$.a', 'int')", {"type": "lt", "term": A_INT, "value": 5}),
    ("5 <= variant_get(v, '$.a', 'int')", {"type": "gt-eq", "term": A_INT, "value": 5}),
    ("variant_get(v, '$.a', 'int') > 5", {"type": "lt", "left": 5, "right": A_INT}),
    ("variant_get(v, '$.a', 'int') <> 5", {"type": "not-eq", "term": A_INT, "value": 5}),
    ("variant_get(v, '$.a', 'int') != 5", {"type": "not-eq", "term": A_INT, "value": 5}),
    ("variant_get(v, '$.a', 'int') >= -5", {"type": "gt-eq", "term": A_INT, "value": -5}),
    (
        "variant_get(v, '$.a', 'int') BETWEEN 1 AND 5",
        {
            "type": "and",
            "left": {"type": "gt-eq", "term": A_INT, "value": 1},
            "right": {"type": "lt-eq", "term": A_INT, "value": 5},
        },
    ),
    (
        "variant_get(v, '$.a', 'int') NOT BETWEEN 1 AND 5",
        {
            "type": "or",
            "left": {"type": "lt", "term": A_INT, "value": 1},
            "right": {"type": "gt", "term": A_INT, "value": 5},
        },
    ),
    (
        "NOT (variant_get(v, '$.a', 'int') BETWEEN 1 AND 5)",
        {
            "type": "not",
            "child": {
                "type": "and",
                "left": {"type": "gt-eq", "term": A_INT, "value": 1},
                "right": {"type": "lt-eq", "term": A_INT, "value": 5},
            },
        },
    ),
    ("variant_get(v, '$.a', 'int') IN (3, 1, 2)", {"type": "in", "term": A_INT, "values": [1, 2, 3]}),
    ("variant_get(v, '$.a', 'int') IN (7)", {"type": "eq", "term": A_INT, "value": 7}),
    ("variant_get(v, '$.a', 'int') NOT IN (1, 2)", {"type": "not-in", "term": A_INT, "values": [2, 1]}),
    (
        "NOT variant_get(v, '$.a', 'int') IN (1, 2)",
        {"type": "not", "child": {"type": "in", "term": A_INT, "values": [1, 2]}},
    ),
    ("variant_get(v, '$.a', 'int') IS NULL", {"type": "is-null", "term": A_INT}),
    ("isnull(variant_get(v, '$.a', 'int'))", {"type": "is-null", "term": A_INT}),
    ("variant_get(v, '$.a', 'int') IS NOT NULL", {"type": "not-null", "term": A_INT}),
    ("isnotnull(variant_get(v, '$.a', 'int'))", {"type": "not", "child": {"type": "is-null", "term": A_INT}}),
    ("isnan(variant_get(v, '$.f', 'double'))", {"type": "is-nan", "term": F_DBL}),
    ("NOT isnan(variant_get(v, '$.f', 'double'))", {"type": "not-nan", "term": F_DBL}),
    ("TRUE", {"type": "true"}),
    ("TRUE", True),
    ("FALSE", False),
    ("NOT TRUE", {"type": "false"}),
    ("variant_get(v, '$.a', 'int') = 1 AND FALSE", False),
    ("variant_get(v, '$.a', 'int') = 1 OR TRUE", True),
    ("variant_get(v, '$.a', 'int') = 1 AND TRUE", {"type": "eq", "term": A_INT, "value": 1}),
    (
        "(variant_get(v, '$.a', 'int') = 1 OR variant_get(v, '$.a', 'int') = 2) AND NOT (variant_get(v, '$.f', 'double') > 0.5)",
        {
            "type": "and",
            "left": {
                "type": "or",
                "left": {"type": "eq", "term": A_INT, "value": 1},
                "right": {"type": "eq", "term": A_INT, "value": 2},
            },
            "right": {"type": "lt-eq", "term": F_DBL, "value": 0.5},
        },
    ),
    (
        "variant_get(v, '$.a', 'int') = 1 AND variant_get(v, '$.a', 'int') = 2 AND variant_get(v, '$.a', 'int') = 3",
        {
            "type": "and",
            "left": {"type": "eq", "term": A_INT, "value": 1},
            "right": {
                "type": "and",
                "left": {"type": "eq", "term": A_INT, "value": 2},
                "right": {"type": "eq", "term": A_INT, "value": 3},
            },
        },
    ),
    (
        "variant_get(v, '$.d', 'date') = DATE '2024-01-01'",
        {"type": "eq", "term": T("$.d", "date"), "value": "2024-01-01"},
    ),
    (
        "variant_get(v, '$.d', 'date') = '2024-01-01'",
        {"type": "eq", "term": T("$.d", "date"), "value": "2024-01-01"},
    ),
    (
        "variant_get(v, '$.t', 'timestamp') >= TIMESTAMP '2024-01-01 10:00:00'",
        {"type": "gt-eq", "term": T("$.t", "timestamp"), "value": "2024-01-01T10:00:00Z"},
    ),
    (
        "variant_get(v, '$.t', 'timestamp') >= TIMESTAMP '2024-01-01 12:00:00+02:00'",
        {"type": "gt-eq", "term": T("$.t", "timestamp"), "value": "2024-01-01T10:00:00"},
    ),
    (
        "variant_get(v, '$.t', 'timestamp_ntz') < TIMESTAMP_NTZ '2024-01-01 10:00:00.5'",
        {"type": "lt", "term": T("$.t", "timestamp_ntz"), "value": "2024-01-01T10:00:00.500"},
    ),
    ("variant_get(v, '$.b', 'binary') = X'0A'", {"type": "eq", "term": T("$.b", "binary"), "value": "0a"}),
    (
        "variant_get(v, '$.p', 'decimal(10,2)') = 12.50BD",
        {"type": "eq", "term": T("$.p", "decimal(10,2)"), "value": "12.50"},
    ),
    (
        "variant_get(v, '$.p', 'decimal(10,2)') = 12.5",
        {"type": "eq", "term": T("$.p", "decimal(10,2)"), "value": 12.5},
    ),
    (
        "variant_get(v, '$.p', 'decimal(10,2)') = CAST('12.5' AS DECIMAL(10,2))",
        {"type": "eq", "term": T("$.p", "decimal(10,2)"), "value": "12.5"},
    ),
    (
        "variant_get(v, '$.p', 'decimal(10,2)') = 12.505",
        {"type": "eq", "term": T("$.p", "decimal(10,2)"), "value": "12.505"},
    ),
    (
        "try_variant_get(v, '$.a', 'int') = -5",
        {"type": "eq", "term": T("$.a", "int", try_=True), "value": -5},
    ),
    ("try_cast(v:a AS INT) = -5", {"type": "eq", "term": T("$.a", "int", try_=True), "value": -5}),
    ("v:['a b']::int = 1", {"type": "eq", "term": T("$['a b']", "int"), "value": 1}),
    ("v:arr[0].x::int = 1", {"type": "eq", "term": T("$.arr[0].x", "int"), "value": 1}),
    (
        "variant_get(v, '$[\"we\"\"ird\"]', 'int') = 1",
        {"type": "eq", "term": T('$["we""ird"]', "int"), "value": 1},
    ),
    ("variant_get(v, '$.user.id', 'bigint') = 42.0", {"type": "eq", "term": ID, "value": 42}),
    ("variant_get(v, '$.user.id', 'bigint') = 42.5", {"type": "in", "term": ID, "values": []}),
    ("NOT variant_get(v, '$.user.id', 'bigint') = 42.5", {"type": "not-in", "term": ID, "values": [42.5]}),
    ("variant_get(v, '$.user.id', 'bigint') < 42.5", {"type": "lt-eq", "term": ID, "value": 42}),
    (
        "variant_get(v, '$.s', 'string') = 'it\\'s'",
        {"type": "eq", "term": T("$.s", "string"), "value": "it's"},
    ),
    (
        "variant_get(v, '$.s', 'string') = 'naïve 名'",
        {"type": "eq", "term": T("$.s", "string"), "value": "naïve 名"},
    ),
    ("variant_get(v, '$.f', 'double') = 1.5D", {"type": "eq", "term": F_DBL, "value": 1.5}),
    ("variant_get(v, '$.f', 'double') > 1e3", {"type": "gt", "term": F_DBL, "value": 1000}),
    (
        "variant_get(v, '$.f', 'double') > CAST('-Infinity' AS DOUBLE)",
        {"type": "gt", "term": F_DBL, "value": "-Infinity"},
    ),
    ("variant_get(v, '$.f', 'float') = 0.5", {"type": "eq", "term": T("$.f", "float"), "value": 0.5}),
    ("variant_get(v, '$.ok', 'boolean') = TRUE", {"type": "eq", "term": T("$.ok", "boolean"), "value": True}),
    (
        "variant_get(`my col`, '$.a', 'int') = 1",
        {"type": "eq", "term": T("$.a", "int", column="my col"), "value": 1},
    ),
    ("variant_get(s.v, '$.a', 'int') = 1", {"type": "eq", "term": T("$.a", "int", column="s.v"), "value": 1}),
    (
        "exists(try_variant_get(v, '$.arr', 'array<variant>'), e -> variant_get(e, '$.x', 'int') = 5)",
        {"type": "eq", "term": T("$.arr[*].x", "int"), "value": 5},
    ),
    (
        "NOT exists(try_variant_get(v, '$.arr', 'array<variant>'), e -> variant_get(e, '$.x', 'int') = 5)",
        {"type": "not", "child": {"type": "eq", "term": T("$.arr[*].x", "int"), "value": 5}},
    ),
    (
        "exists(try_variant_get(v, '$.arr', 'array<variant>'), e -> NOT (variant_get(e, '$.x', 'int') = 5))",
        {"type": "not-eq", "term": T("$.arr[*].x", "int"), "value": 5},
    ),
    (
        "exists(try_variant_get(v, '$', 'array<variant>'), e -> exists(try_variant_get(e, '$.tags', 'array<variant>'), f -> variant_get(f, '$', 'string') = 'x'))",
        {"type": "eq", "term": T("$[*].tags[*]", "string"), "value": "x"},
    ),
    ("variant_get(v, '$', 'int') = 1", {"type": "eq", "term": T("$", "int"), "value": 1}),
    ("variant_get(v, '$[0]', 'int') = 1", {"type": "eq", "term": T("$[0]", "int"), "value": 1}),
]


@pytest.mark.parametrize(("sql", "doc"), SAME)
def test_json_and_sql_give_the_same_tree(sql: str, doc: Any) -> None:
    from_sql = parse_sql(sql)
    from_json = parse_json(doc)
    assert from_sql == from_json
    # Both round-trip, and the JSON is plain JSON.
    assert parse_sql(to_sql(from_sql)) == from_sql
    text = json.dumps(to_json(from_sql))
    assert parse_json(text) == from_sql
    assert parse_json(json.loads(text)) == from_sql


def test_expected_trees() -> None:
    a = variant("v", "$.a", "int")
    assert parse_sql("variant_get(v, '$.a', 'int') BETWEEN 1 AND 5") == and_(gt_eq(a, 1), lt_eq(a, 5))
    assert parse_sql("TRUE") == TRUE
    assert parse_sql("FALSE") == FALSE
    bid = variant("v", "$.user.id", "bigint")
    assert parse_sql("v:user.id::bigint = 42.5") == SetPredicate(Op.IN, bid, ())
    d = variant("v", "$.d", "date")
    assert parse_sql("variant_get(v, '$.d', 'date') = DATE '2024-01-01'") == LiteralPredicate(
        Op.EQ, d, parse_date_text("2024-01-01")
    )
    w = variant("v", "$.arr[*].x", "int")
    assert parse_sql(
        "NOT exists(try_variant_get(v, '$.arr', 'array<variant>'), e -> variant_get(e, '$.x', 'int') = 5)"
    ) == Not(eq(w, 5))


def test_to_sql_text() -> None:
    e = parse_json(
        {
            "type": "and",
            "left": {"type": "in", "term": T("$.p", "decimal(10,2)"), "values": ["1.5", 2]},
            "right": {
                "type": "not",
                "child": {"type": "eq", "term": T("$.arr[*]['a b']", "string"), "value": "it's"},
            },
        }
    )
    assert to_sql(e) == (
        "variant_get(v, '$.p', 'decimal(10,2)') IN (1.50BD, 2.00BD) AND NOT exists(try_variant_get(v, '$.arr', "
        "'array<variant>'), e1 -> variant_get(e1, '$[\"a b\"]', 'string') = 'it\\'s')"
    )
    assert (
        to_sql(parse_sql("v:a::bigint = 42.5"))
        == "CASE WHEN variant_get(v, '$.a', 'bigint') IS NOT NULL THEN FALSE END"
    )
    assert to_sql(parse_sql("variant_get(`select`, '$.t', 'timestamp') = '2024-01-01'")) == (
        "variant_get(`select`, '$.t', 'timestamp') = TIMESTAMP '2024-01-01 00:00:00+00:00'"
    )
    assert (
        to_sql(parse_sql("variant_get(v, '$.f', 'float') > 0.1"))
        == "variant_get(v, '$.f', 'float') >= CAST('0.1' AS FLOAT)"
    )


def test_to_json_shape() -> None:
    e = parse_sql(
        "variant_get(v, '$.p', 'decimal(10,2)') = 12.5 OR try_variant_get(v, '$.b', 'binary') IS NULL"
    )
    assert to_json(e) == {
        "type": "or",
        "left": {"type": "eq", "term": T("$.p", "decimal(10,2)"), "value": "12.50"},
        "right": {"type": "is-null", "term": T("$.b", "binary", try_=True)},
    }


# --- SQL errors -------------------------------------------------------------------------------

SQL_ERRORS = [
    ("variant_get(v, '$.a', 'string') LIKE 'a%'", "LIKE"),
    ("variant_get(v, '$.a', 'int') = variant_get(v, '$.b', 'int')", "two terms"),
    ("x = 1", "plain column"),
    ("variant_get(v, '$.a', 'int') = x", "column comparison"),
    ("variant_get(v, '$.a', 'int') + 1 = 2", "arithmetic"),
    ("variant_get(v, '$.a', 'int') IN (SELECT 1)", "subquery"),
    ("upper(variant_get(v, '$.a', 'string')) = 'A'", "function"),
    ("variant_get(v, '$.a', 'int') = 1 OR rand() > 0.5", "function"),
    ("variant_get(v, '$.a', 'int') <=> 1", "null-safe"),
    ("variant_get(v, '$.a', 'int') = NULL", "IS NULL"),
    ("variant_get(v, '$.a') = 1", "is a VARIANT; give variant_get a type"),
    ("variant_get(v, '$.a', 'uuid') = 1", "unsupported target type"),
    ("variant_get(v, '$.a', concat('in', 't')) = 1", "string literal path and type"),
    ("variant_get(v, '$.a[*]', 'int') = 1", "exists"),
    ("v:a = 1", "cast it"),
    ("v:a[*]::int = 1", "exists"),
    ("variant_get(v, '$.a', 'int')", "not a predicate"),
    ("variant_get(v, '$.a', 'int') = 1; variant_get(v, '$.a', 'int') = 2", "exactly one"),
    ("variant_get(v, '$.a', 'int') = = 1", "expected a value after '=' at column"),
    ("CAST(variant_get(v, '$.a', 'string') AS INT) = 5", "casting"),
    ("variant_get(v, '$.a', 'int') BETWEEN SYMMETRIC 1 AND 2", "SYMMETRIC"),
    ("variant_get(v, '$.a', 'int') IS TRUE", "IS TRUE"),
    ("SELECT * FROM t WHERE variant_get(v, '$.a', 'int') = 1", "SELECT"),
    ("variant_get(v, '$.d', 'decimal(10,2)') = 1.5D", "decimal literal"),
    ("variant_get(v, '$.a', 'bigint') = 0.12345678901234567890123456789012345678", "38 digits"),
    ("variant_get(v, '$.a', 'int') = 'abc'", "not a valid int"),
    ("variant_get(v, '$.f', 'double') = CAST('NaN' AS DOUBLE)", "is_nan"),
    (
        "exists(try_variant_get(v, '$.a', 'array<variant>'), e -> variant_get(e, '$.x', 'int') BETWEEN 1 AND 2)",
        "exists body",
    ),
    ("exists(try_variant_get(v, '$.a', 'array<int>'), e -> e = 1)", "array<variant>"),
    ("", "empty"),
    ("variant_get(v, '$.a', 'int') = 'unterminated", "unterminated string at column 32"),
    ("NULL", "NULL"),
    ("isnan(variant_get(v, '$.a', 'int'))", "float or double"),
]


@pytest.mark.parametrize(("sql", "message"), SQL_ERRORS)
def test_unsupported_sql_is_an_error(sql: str, message: str) -> None:
    with pytest.raises(InvalidPredicateError) as ei:
        parse_sql(sql)
    assert message in ei.value.message


def test_bad_path_in_sql_names_the_position() -> None:
    with pytest.raises(InvalidPathError) as ei:
        parse_sql("variant_get(v, '$a', 'int') = 1")
    assert ei.value.details["position"] == 1


def test_sql_limits() -> None:
    leaf = "variant_get(v, '$.a', 'int') = 1"
    ok = leaf  # NOT and AND/OR alternate: two levels per round
    for i in range(30):
        ok = f"NOT ({ok} {'AND' if i % 2 else 'OR'} {leaf})"
    parse_sql(ok)
    deep = leaf
    for i in range(40):
        deep = f"NOT ({deep} {'AND' if i % 2 else 'OR'} {leaf})"
    with pytest.raises(LimitExceededError):
        parse_sql(deep)
    parse_sql(deep, max_depth=200)  # the limit is a parameter
    with pytest.raises(LimitExceededError):
        parse_sql("(" * 1000 + leaf + ")" * 1000)
    with pytest.raises(LimitExceededError):
        parse_sql("NOT " * 1000 + leaf)
    # A long chain of one operator is one level of nesting.
    parse_sql(" AND ".join(f"variant_get(v, '$.a', 'int') != {i}" for i in range(2000)), max_terms=2000)
    many = ", ".join(str(i) for i in range(10_001))
    with pytest.raises(LimitExceededError):
        parse_sql(f"variant_get(v, '$.a', 'int') IN ({many})")
    with pytest.raises(LimitExceededError):
        parse_sql("variant_get(v, '$.a', 'int') IN (1, 2, 3, 4)", max_in_list=3)
    with pytest.raises(LimitExceededError):
        parse_sql(leaf, max_length=10)


def _or_chain(n: int, leaf: str = "variant_get(v, '$.a', 'int') = {i}") -> str:
    return " OR ".join(leaf.format(i=i) for i in range(n))


def test_sql_term_limit_is_checked_before_sqlglot(monkeypatch: pytest.MonkeyPatch) -> None:
    parse_sql(_or_chain(400))  # the default limit, 400 terms
    parse_sql(_or_chain(10), max_terms=10)
    import sqlglot

    def no_sqlglot(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("sqlglot ran on a predicate the pre-scan refuses")

    monkeypatch.setattr(sqlglot, "tokenize", no_sqlglot)
    monkeypatch.setattr(sqlglot, "parse", no_sqlglot)
    for text, limit in [
        (_or_chain(401), 400),
        (_or_chain(22_000), 400),
        (_or_chain(11), 10),
        # A BETWEEN is two comparisons; NOT adds none.
        (" AND ".join(f"NOT variant_get(v, '$.a', 'int') BETWEEN {i} AND {i + 1}" for i in range(6)), 11),
    ]:
        with pytest.raises(LimitExceededError) as ei:
            parse_sql(text, max_terms=limit, max_length=len(text))
        assert ei.value.details["limit"] == limit
    with pytest.raises(LimitExceededError, match="characters"):
        parse_sql(_or_chain(22_000))  # ~1 MB: refused by its length at the defaults
    monkeypatch.undo()
    # AND/OR inside strings, quoted identifiers and comments are not connectives.
    words = " or and OR AND " * 50
    parse_sql(
        f"variant_get(v, '$.s', 'string') IN ('{words}', \"{words}\", '\\' {words}') -- {words}\n"
        f"/* {words} */ AND variant_get(`v`, '$.a', 'int') = 1",
        max_terms=2,
    )
    # A raw string has no escapes: what follows r'\' is code.
    assert too_many_terms("r'\\' OR x OR y", 2)
    assert not too_many_terms("'\\' OR x OR y'", 2)


def test_sql_double_literals_are_finite() -> None:
    for text in ("1e999", "-9e999", "1e999D", "1E+400"):
        with pytest.raises(InvalidPredicateError, match="beyond the range of DOUBLE"):
            parse_sql(f"variant_get(v, '$.f', 'double') = {text}")
    e = parse_sql("variant_get(v, '$.f', 'double') = 1.7976931348623157e308")
    assert isinstance(e, LiteralPredicate) and e.literal == 1.7976931348623157e308
    e = parse_sql("variant_get(v, '$.f', 'double') = CAST('Infinity' AS DOUBLE)")
    assert isinstance(e, LiteralPredicate) and e.literal == math.inf


def test_json_term_limit_is_checked_before_building(monkeypatch: pytest.MonkeyPatch) -> None:
    def leaf(i: int) -> dict[str, Any]:
        return {"type": "eq", "term": A_INT, "value": i}

    def chain(n: int, kind: str = "or") -> Any:
        doc: Any = leaf(0)
        for i in range(1, n):
            doc = {"type": kind, "left": doc, "right": leaf(i)}
        return doc

    parse_json(chain(400))  # the default limit, 400 terms
    parse_json({"type": "and", "left": chain(5), "right": {"type": "not", "child": chain(5)}}, max_terms=10)
    import importlib

    pj = importlib.import_module("service.pruning.parse_json")  # the module (it also names its function)

    def no_build(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a leaf was built for a filter the term count refuses")

    monkeypatch.setattr(pj, "compare", no_build)
    with pytest.raises(LimitExceededError) as ei:
        parse_json(chain(22_000))
    assert ei.value.details == {"pointer": "/", "limit": 400}
    monkeypatch.undo()
    # Terms are counted over the whole tree, not per chain.
    with pytest.raises(LimitExceededError) as ei:
        parse_json({"type": "and", "left": chain(6), "right": {"type": "not", "child": chain(5)}}, max_terms=10)
    assert ei.value.details["limit"] == 10
    with pytest.raises(LimitExceededError):
        parse_json({"type": "or", "left": True, "right": chain(2, "and")}, max_terms=2)


def _raw(node: dict[str, Any], key: str, json_text: str) -> str:
    """``node`` as JSON text with ``key`` holding ``json_text`` verbatim (a number no encoder writes)."""
    return json.dumps({**node, key: "@raw@"}).replace('"@raw@"', json_text)


@pytest.mark.parametrize(
    ("raw", "pointer"),
    [
        (_raw({"type": "eq", "term": A_INT}, "value", "1e999"), "/value"),
        (_raw({"type": "eq", "term": F_DBL}, "value", "-1e999"), "/value"),
        (_raw({"type": "in", "term": F_DBL}, "values", "[1, 1e999]"), "/values/1"),
        (_raw({"type": "eq", "term": F_DBL}, "value", "1e99999999999999999999"), "/value"),
        (_raw({"type": "eq", "term": A_INT}, "value", "9" * 5000), "/value"),
        (_raw({"type": "eq", "term": A_INT}, "value", "-" + "9" * 400), "/value"),
        (json.dumps({"type": "lt", "term": F_DBL, "value": "1e999"}), "/value"),
    ],
)
def test_json_numbers_beyond_the_double_range_are_refused(raw: str, pointer: str) -> None:
    from service.pruning.parse_json import decode_json

    for doc in (raw, decode_json(raw)):
        with pytest.raises(InvalidPredicateError, match="beyond the range of a double") as ei:
            parse_json(doc)
        assert ei.value.details["pointer"] == pointer


def test_json_number_range_edges() -> None:
    with pytest.raises(InvalidPredicateError, match="beyond the range of a double"):
        parse_json({"type": "eq", "term": F_DBL, "value": math.inf})
    e = parse_json(_raw({"type": "eq", "term": F_DBL}, "value", "1.7976931348623157e308"))
    assert isinstance(e, LiteralPredicate) and e.literal == 1.7976931348623157e308
    e = parse_json({"type": "eq", "term": F_DBL, "value": "-Infinity"})
    assert isinstance(e, LiteralPredicate) and e.literal == -math.inf
    e = parse_json(_raw({"type": "eq", "term": T("$.a", "bigint")}, "value", str(2**70)))
    assert e == parse_sql(f"variant_get(v, '$.a', 'bigint') = {2**70}")


# --- JSON errors ------------------------------------------------------------------------------

JSON_ERRORS = [
    (
        {
            "type": "and",
            "left": {"type": "eq", "term": A_INT, "value": 1},
            "right": {"type": "eq", "term": A_INT, "value": "abc"},
        },
        InvalidPredicateError,
        "/right/value",
    ),
    ({"type": "eq", "term": T("$a", "int"), "value": 1}, InvalidPathError, "/term/path"),
    ({"type": "eq", "term": T("$.a", "uuid"), "value": 1}, InvalidPredicateError, "/term/as"),
    ({"type": "eqq", "term": A_INT, "value": 1}, InvalidPredicateError, "/"),
    ({"type": "eq", "term": A_INT, "vlaue": 1}, InvalidPredicateError, "/"),
    ({"type": "in", "term": A_INT, "values": [1, "x"]}, InvalidPredicateError, "/values/1"),
    ({"type": "in", "term": A_INT, "values": 1}, InvalidPredicateError, "/values"),
    ({"type": "eq", "term": "a", "value": 1}, InvalidPredicateError, "/term"),
    ({"type": "eq", "left": A_INT, "right": A_INT}, InvalidPredicateError, "/"),
    ({"type": "not"}, InvalidPredicateError, "/"),
    (
        {"type": "not", "child": {"type": "eq", "term": A_INT, "value": None}},
        InvalidPredicateError,
        "/child/value",
    ),
    ({"type": "eq", "term": A_INT | {"try": "yes"}, "value": 1}, InvalidPredicateError, "/term/try"),
    ({"type": "eq", "term": A_INT | {"column": ""}, "value": 1}, InvalidPredicateError, "/term/column"),
    ({"type": "is-nan", "term": A_INT}, InvalidPredicateError, "/"),
    ({"type": "eq", "term": T("$.b", "binary"), "value": "xyz"}, InvalidPredicateError, "/value"),
    ({"type": "eq", "term": F_DBL, "value": "NaN"}, InvalidPredicateError, "/value"),
    ([1, 2], InvalidPredicateError, "/"),
    ("not json", InvalidPredicateError, None),
    (
        '{"type": "eq", "term": {"type": "variant", "column": "v", "path": "$.f", "as": "double"}, "value": NaN}',
        InvalidPredicateError,
        None,
    ),
]


@pytest.mark.parametrize(("doc", "error", "pointer"), JSON_ERRORS)
def test_json_errors_name_the_node(doc: Any, error: type[Exception], pointer: str | None) -> None:
    with pytest.raises(error) as ei:
        parse_json(doc)
    if pointer is not None:
        assert ei.value.details["pointer"] == pointer  # type: ignore[attr-defined]
        assert ei.value.message.startswith(pointer)  # type: ignore[attr-defined]


def test_json_limits() -> None:
    leaf = {"type": "eq", "term": A_INT, "value": 1}
    doc: Any = leaf
    for i in range(70):
        doc = {"type": "not", "child": {"type": "and" if i % 2 else "or", "left": doc, "right": leaf}}
    with pytest.raises(LimitExceededError) as ei:
        parse_json(doc)
    assert "pointer" in ei.value.details
    parse_json(doc, max_depth=200)
    chain: Any = leaf
    for i in range(3000):
        chain = {"type": "and", "left": chain, "right": {"type": "not-eq", "term": A_INT, "value": i}}
    parse_json(chain, max_terms=3001)  # a left-deep chain is one level
    with pytest.raises(LimitExceededError):
        parse_json({"type": "in", "term": A_INT, "values": list(range(10_001))})
    with pytest.raises(LimitExceededError):
        parse_json({"type": "in", "term": A_INT, "values": [1, 2, 3]}, max_in_list=2)
    with pytest.raises(LimitExceededError):
        parse_json("[" * 100_000 + "]" * 100_000)


def test_json_numbers_keep_their_digits() -> None:
    d = T("$.p", "decimal(38,2)")
    e = parse_json(
        f'{{"type": "eq", "term": {json.dumps(d)}, "value": 123456789012345678901234567890123456.01}}'
    )
    assert isinstance(e, LiteralPredicate)
    assert e.literal == Decimal("123456789012345678901234567890123456.01")
    assert to_json(e)["value"] == "123456789012345678901234567890123456.01"


EXTREMES = [
    ("tinyint", -128),
    ("bigint", -(2**63)),
    ("bigint", 2**63 - 1),
    ("decimal(38,2)", Decimal("-999999999999999999999999999999999999.99")),
    ("decimal(5,5)", Decimal("0.00001")),
    ("decimal(3,0)", Decimal("-999")),
    ("float", 3.4028234663852886e38),
    ("float", 1.401298464324817e-45),
    ("float", -math.inf),
    ("double", 5e-324),
    ("double", 1e16),
    ("double", math.inf),
    ("date", -(2**31 - 1)),
    ("date", 2**31 - 1),
    ("date", parse_date_text("-0043-03-15")),
    ("timestamp", -(2**63)),
    ("timestamp", 2**63 - 1),
    ("timestamp_ntz", -1),
    ("string", ""),
    ("string", "a\\b'c\"d\ne\x00f"),
    ("string", "名前 🙂"),
    ("binary", b""),
    ("binary", b"\x00\xff"),
    ("boolean", False),
]


@pytest.mark.parametrize(("type_", "value"), EXTREMES)
@pytest.mark.parametrize("op", [Op.EQ, Op.LT, Op.GT_EQ, Op.NOT_EQ])
def test_extreme_literals_round_trip(type_: str, value: Any, op: Op) -> None:
    e = LiteralPredicate(op, variant("v", "$.a", type_), value)
    assert parse_sql(to_sql(e)) == e
    assert parse_json(json.dumps(to_json(e))) == e


def test_lone_surrogates_are_rejected() -> None:
    with pytest.raises(InvalidPredicateError, match="Unicode"):
        parse_json({"type": "eq", "term": T("$.s", "string"), "value": "\ud800"})


@pytest.mark.parametrize(
    ("literal", "message"),
    [
        ("1." + "0" * 99 + "1BD", "DECIMAL(101,100) is beyond Spark's decimals"),
        ("1e400BD", "DECIMAL(401,0) is beyond Spark's decimals"),
        ("CAST('1e400' AS DECIMAL(38,2))", "does not fit DECIMAL(38,2)"),
        ("CAST('-1e39' AS DECIMAL(38,0))", "does not fit DECIMAL(38,0)"),
        ("CAST('99.995' AS DECIMAL(4,2))", "does not fit DECIMAL(4,2)"),  # rounds up past the precision
        ("CAST('1' AS DECIMAL(40,2))", "DECIMAL(40,2) is beyond Spark's decimals"),
    ],
)
def test_decimal_literals_beyond_their_type_are_refused_naming_them(literal: str, message: str) -> None:
    """Issue 32 row 6: such literals were an InvalidOperation escaping as a 500."""
    with pytest.raises(InvalidPredicateError, match=re.escape(message)):
        parse_sql(f"variant_get(v, '$.p', 'decimal(38,2)') = {literal}")


def test_decimal_literals_within_their_type_are_exact() -> None:
    tiny = parse_sql("variant_get(v, '$.p', 'decimal(10,2)') = CAST('1e-400' AS DECIMAL(10,2))")
    assert tiny.literal == Decimal("0.00")
    edge = parse_sql("variant_get(v, '$.p', 'decimal(4,2)') = CAST('99.994' AS DECIMAL(4,2))")
    assert edge.literal == Decimal("99.99")


@pytest.mark.parametrize(
    ("cast", "expected"),
    [
        ("CAST('1e400' AS FLOAT)", math.inf),
        ("CAST('-1e400' AS DOUBLE)", -math.inf),
        ("CAST('1e-999999999' AS FLOAT)", 0.0),
        ("CAST('1e999999999' AS DOUBLE)", math.inf),
        ("CAST('1e999999999' AS INT)", "out of range for int"),
        ("CAST('1e-3000000' AS BIGINT)", "out of range for bigint"),
        ("CAST('1e999999999' AS DECIMAL(38,2))", "out of range for decimal"),
    ],
)
def test_string_casts_of_numbers_beyond_every_range_are_decided_from_the_exponent(cast: str, expected: object) -> None:
    """A short string holding a huge exponent was built as a fraction (10**999999999: minutes and
    gigabytes) or overflowed to a 500 (CAST('1e400' AS FLOAT)); from a review of issue 32's bounds."""
    text = f"variant_get(v, '$.x', 'double') = {cast}"
    if isinstance(expected, str):
        with pytest.raises(InvalidPredicateError, match=expected):
            parse_sql(text)
    else:
        literal = parse_sql(text).literal  # type: ignore[attr-defined]
        assert float(literal) == expected
