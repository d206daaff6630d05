"""Errors that point into the predicate: an unknown column names where it is written, and a
string in curly quotes (’DE’, read by the tokenizer as a name) says "use straight quotes"."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from service.errors import InvalidPredicateError, UnknownColumnError
from service.pruning.parse_sql import parse_sql
from service.pruning.schema import ColumnInfo, TableSchema
from service.values import ShreddedType

SCHEMA = TableSchema(("v",), MappingProxyType({"country": ColumnInfo("country", ShreddedType.parse("varchar"), False)}))


def error_of(sql: str) -> InvalidPredicateError | UnknownColumnError:
    with pytest.raises((InvalidPredicateError, UnknownColumnError)) as info:
        parse_sql(sql, schema=SCHEMA)
    return info.value  # type: ignore[return-value]


def test_an_unknown_column_names_its_position() -> None:
    e = error_of("country = 'DE' AND countr = 'FR'")
    assert isinstance(e, UnknownColumnError)
    assert e.message == "the table has no column 'countr' (at column 20); its columns: v, country (did you mean country?)"
    assert e.details["position"] == 19 and e.details["column"] == "countr"
    e = error_of("country = 'DE'\n  AND variant_get(w, '$.a', 'int') = 1")
    assert e.message.startswith("the table has no Variant column 'w' (at line 2, column 19);")
    assert e.details["position"] == len("country = 'DE'\n  AND variant_get(")
    # Inside a sub-expression pruning cannot use, too.
    e = error_of("length(nope) > 3")
    assert isinstance(e, UnknownColumnError) and e.details["position"] == 7


@pytest.mark.parametrize(
    ("sql", "quoted", "straight"),
    [
        ("country = \u2019DE\u2019", "\u2019DE\u2019", "'DE'"),
        ("country = \u2018DE\u2019", "\u2018DE\u2019", "'DE'"),
        ("country = \u201cDE\u201d", "\u201cDE\u201d", '"DE"'),
        ("country IN ('FR', \u2019DE\u2019)", "\u2019DE\u2019", "'DE'"),
    ],
)
def test_curly_quotes_say_use_straight_quotes(sql: str, quoted: str, straight: str) -> None:
    e = error_of(sql)
    assert isinstance(e, InvalidPredicateError)
    at = sql.index(quoted)
    assert e.message == f"curly quotes in {quoted}: use straight quotes ({straight}) at column {at + 1}"
    assert e.position == at


def test_curly_quotes_inside_a_string_are_its_text() -> None:
    assert parse_sql("country = 'it\u2019s'", schema=SCHEMA) is not None
