"""Plan warnings for the terms pruning cannot use (:func:`service.pruning.diagnostics.unused_terms`):
an unknown function, LIKE, arithmetic, a literal that does not parse as the column's type, an
invalid date. Pure: predicate trees parsed against a schema, compiled as the catalog compiles them."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from service.pruning.conditions import compile_expression
from service.pruning.diagnostics import (
    MAX_UNUSED_WARNINGS,
    PREDICATE_PRUNES_NOTHING,
    TERM_NOT_USED,
    unused_terms,
)
from service.pruning.expressions import Unknown, not_
from service.pruning.parse_json import parse_json
from service.pruning.parse_sql import parse_sql
from service.pruning.schema import ColumnInfo, TableSchema
from service.values import ShreddedType

SCHEMA = TableSchema(
    ("v",),
    MappingProxyType(
        {
            "n": ColumnInfo("n", ShreddedType.parse("int64"), False),
            "d": ColumnInfo("d", ShreddedType.parse("date"), False),
            "s": ColumnInfo("s", ShreddedType.parse("varchar"), False),
        }
    ),
)
ID = "variant_get(v, '$.id', 'bigint')"


def warnings_of(sql: str) -> list[tuple[str, str]]:
    tree = parse_sql(sql, schema=SCHEMA)
    return [(w.type, w.message) for w in unused_terms(tree, compile_expression(tree))]


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        ("length(v:s::string) > 3", "function LENGTH() is not supported"),
        ("foo(n) = 1", "function foo() is not supported"),
        ("s LIKE '%a'", "LIKE is not supported"),
        ("v:s::string LIKE '%a'", "LIKE is not supported"),
        ("n % 2 = 0", "arithmetic (%) is not supported"),
        (f"{ID} = 'abc'", "string 'abc' is not a valid bigint"),
        ("n = 'abc'", "string 'abc' is not a valid bigint"),
        ("d = '2024-13-45'", "invalid date '2024-13-45'"),
        ("v:d::date = '2024-13-45'", "invalid date '2024-13-45'"),
        ("n = s", "comparing two terms is not supported: n = s"),
    ],
)
def test_each_term_pruning_cannot_use_is_warned_about_alone(sql: str, why: str) -> None:
    (term, whole) = warnings_of(sql)
    assert term[0] == TERM_NOT_USED and f"is not used for pruning ({why})" in term[1], term
    assert whole[0] == PREDICATE_PRUNES_NOTHING


def test_beside_a_pruning_conjunct_the_term_is_warned_about_but_the_predicate_prunes() -> None:
    assert warnings_of(f"{ID} = 5 AND s LIKE '%a'") == [
        (TERM_NOT_USED, "s LIKE '%a' is not used for pruning (LIKE is not supported): every file is kept as if it may be true in it")
    ]
    # An OR with one keeps every file: said once, after the term.
    assert [t for t, _ in warnings_of(f"{ID} = 5 OR s LIKE '%a'")] == [TERM_NOT_USED, PREDICATE_PRUNES_NOTHING]
    assert warnings_of(f"{ID} = 5 AND n = 3") == []


def test_not_keeps_the_reason_and_repeats_are_warned_about_once() -> None:
    assert not_(Unknown("x LIKE '%a'", "LIKE is not supported")).why == "LIKE is not supported"  # type: ignore[union-attr]
    (w, _) = warnings_of("NOT (s LIKE '%a')")
    assert w[1].startswith("NOT (s LIKE '%a') is not used for pruning (LIKE is not supported)")
    assert len(warnings_of(f"({ID} = 1 AND s LIKE '%a') OR ({ID} = 2 AND s LIKE '%a')")) == 1


def test_many_terms_end_in_a_count() -> None:
    sql = " AND ".join(f"s LIKE '%a{i}'" for i in range(MAX_UNUSED_WARNINGS + 5)) + f" AND {ID} = 1"
    found = warnings_of(sql)
    assert len(found) == MAX_UNUSED_WARNINGS
    assert found[-1][1].endswith("(and 5 more terms not used for pruning)")


def test_a_json_filter_on_a_column_pruning_cannot_compare() -> None:
    schema = TableSchema(("v",), MappingProxyType({"t": ColumnInfo("t", None, False)}))
    tree = parse_json({"type": "eq", "term": "t", "value": 1}, schema=schema)
    (w, _) = unused_terms(tree, compile_expression(tree))
    assert w.type == TERM_NOT_USED and "(column t has no type pruning can compare)" in w.message


def test_a_like_whose_literal_prefix_prunes_is_not_warned_about() -> None:
    """LIKE 'a%' is used, through the prefix range it implies (issue 34); under NOT it is not."""
    assert warnings_of(f"{ID} = 5 AND s LIKE 'a%'") == []
    assert [t for t, _ in warnings_of("NOT (s LIKE 'a%')")] == [TERM_NOT_USED, PREDICATE_PRUNES_NOTHING]
